"""The shipped release history (specguard/data/sglang-history.json) and ServerArgs defaults
(sglang-serverargs-defaults.json) against their generator and the real parser: every release
0.4.0-0.5.23, a sample regenerated from the wheels themselves, and both files whole where every
wheel is cached."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from specguard.environment import NEWEST_KNOWN_SGLANG, OLDEST_KNOWN_SGLANG
from specguard.versions import HISTORY_FILE, history, infer_version, version_from_image
from tests.conftest import NO_SLIME_CLONE, REPO, SHARED, SLIME_CLONE

SCRIPT = REPO / "scripts" / "extract_sglang_flags.py"
WHEELS = Path(os.environ.get("SPECGUARD_SGLANG_WHEELS", "/tmp/sgl-wheels"))
# One release per era of the argument code: 0.4 server_args.py, a .postN, 0.5.x before and after
# the cuda-graph split (0.5.14), and the arg_groups dataclasses (0.5.20+).
SAMPLE = ("0.4.6.post2", "0.5.5", "0.5.14", "0.5.23")


def _extractor():
    spec = importlib.util.spec_from_file_location("extract_sglang_flags", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _wheel_or_skip(version: str) -> None:
    extractor = _extractor()
    if extractor.wheel_path(version, WHEELS) is not None:
        return
    probe = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "sglang"], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip(f"sglang=={version} is not cached in {WHEELS} and the package registry cannot be reached: {probe.stderr.strip()[-200:]}")


def test_history_covers_every_release_from_0_4_0_to_newest():
    releases = history().releases
    listed = _extractor().release_list(SHARED / "design" / "sglang-releases.yaml")
    assert list(releases) == listed
    assert releases[0] == OLDEST_KNOWN_SGLANG and releases[-1] == NEWEST_KNOWN_SGLANG
    assert list(releases) == sorted(releases, key=Version)
    assert {"0.4.6.post2", "0.5.10rc0", "0.5.12.post1"} <= set(releases)


def test_0_5_23_matches_the_real_parser():
    """The static extraction against SGLang 0.5.23's real argparse (sglang-0.5.23-flags.json)."""
    missing, extra = _extractor().parity(json.loads(HISTORY_FILE.read_text(encoding="utf-8")), HISTORY_FILE.with_name("sglang-0.5.23-flags.json"))
    assert (missing, extra) == (set(), set())


@pytest.mark.parametrize("version", SAMPLE)
def test_generator_regenerates_a_release_from_its_wheel(version):
    _wheel_or_skip(version)
    result = subprocess.run([sys.executable, str(SCRIPT), "--only", version, "--wheels", str(WHEELS)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "equal"


def test_generator_regenerates_both_files_whole():
    """The whole history and defaults files, byte for byte (reading all 86 wheels takes seconds)."""
    extractor = _extractor()
    missing = [v for v in extractor.release_list(SHARED / "design" / "sglang-releases.yaml") if extractor.wheel_path(v, WHEELS) is None]
    if missing:
        pytest.skip(f"{len(missing)} release wheels are not cached in {WHEELS} (SPECGUARD_SGLANG_WHEELS names another cache): {', '.join(missing[:5])}")
    result = subprocess.run([sys.executable, str(SCRIPT), "--check", "--wheels", str(WHEELS), "--jobs", "2"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "equal"


def test_0_5_23_defaults_are_the_real_parsers():
    """Each 0.5.23 field's static default against the default SGLang 0.5.23's real parser gives
    its flag (sglang-0.5.23-flags.json): the parser's defaults are the dataclass's."""
    from specguard.serverargs_defaults import defaults_at

    static = defaults_at("0.5.23")
    parsed = json.loads(HISTORY_FILE.with_name("sglang-0.5.23-flags.json").read_text(encoding="utf-8"))["flags"]
    compared = [flag for flag in parsed if flag.get("option_strings") and flag["dest"] in static and static[flag["dest"]].is_literal]
    assert len(compared) > 500
    assert [flag["dest"] for flag in compared if flag.get("default_is_repr") or flag.get("default") != static[flag["dest"]].value] == []


def test_known_history_points():
    """Boundaries read by hand in the wheels (VB003/VB005 docs) agree with the extraction."""
    data = history()
    at = data.releases.index
    old, new = data.flag_releases("--cuda-graph-max-bs"), data.flag_releases("--cuda-graph-max-bs-decode")
    assert at("0.5.19") in old and at("0.5.20") not in old and at("0.4.0") in old
    assert min(new) == at("0.5.14") and at("0.5.23") in new
    window = data.flag_releases("--speculative-dflash-draft-window-size")
    assert min(window) == at("0.5.11") and max(window) == at("0.5.19")
    assert min(data.flag_releases("--attn-dp-size")) == at("0.5.22")
    assert ("--cuda-graph-max-bs", "--cuda-graph-max-bs-decode") in data.renames
    assert "LlamaForCausalLMEagle3" in {name for name in data.architectures if at("0.5.23") in data.architecture_releases(name)}


def test_inference_picks_the_newest_release_accepting_every_flag():
    newest = infer_version(["--model-path", "--speculative-algorithm", "--cuda-graph-max-bs-decode"], [])
    assert (newest.version, newest.source) == (NEWEST_KNOWN_SGLANG, "default")
    older = infer_version(["--model-path", "--cuda-graph-max-bs"], [])
    assert (older.version, older.source, older.candidates[0]) == ("0.5.19", "inferred from flags", "0.4.0")
    mixed = infer_version(["--cuda-graph-max-bs", "--attn-dp-size"], [])
    assert mixed.candidates == () and "--cuda-graph-max-bs (up to 0.5.19)" in mixed.note and "--attn-dp-size (from 0.5.22)" in mixed.note


def test_a_choice_only_older_releases_list_narrows_like_a_flag():
    flags = ["--model-path", "--attention-backend"]
    dated = infer_version(flags, [], [("--attention-backend", "dual_chunk_flash_attn")])
    assert (dated.version, dated.source) == ("0.5.19", "inferred from flags")
    assert infer_version(flags, [], [("--attention-backend", "fa4")]).version == NEWEST_KNOWN_SGLANG
    # A value no release lists is a typo (VB013's), not evidence of an era.
    assert infer_version(flags, [], [("--attention-backend", "flashattn9")]).version == NEWEST_KNOWN_SGLANG


@pytest.mark.parametrize(
    ("image", "version"),
    [("lmsysorg/sglang:v0.5.19", "0.5.19"), ("lmsysorg/sglang:v0.4.6.post1-cu124", "0.4.6.post1"),
     ("docker.io/lmsysorg/sglang:v0.5.2rc2-cu126", "0.5.2rc2"), ("lmsysorg/sglang:latest", None), ("vllm/vllm-openai:v0.9.0", None),
     ("slimerl/sglang:v0.5.12.post1-cu129", "0.5.12.post1"), ("slimerl/sglang:nightly-dev-20260107-dce8b060", None)],
)
def test_version_from_image(image, version):
    assert version_from_image(image) == version


def test_slime_pins_name_releases_of_the_history():
    from specguard.versions import slime_pin, slime_releases

    for slime in slime_releases():
        pin = slime_pin(slime)
        assert pin is not None and pin.sglang in history().releases, slime
        assert version_from_image(pin.image) in (pin.sglang, None)  # None: a nightly image
    assert slime_pin("v0.3.1").sglang == "0.5.15.post1" and slime_pin("v0.1.0") is None  # v0.1.0 pins `latest`
    # Tags as slime's docker/Dockerfile pinned them at each (THUDM/slime history).
    assert {v: slime_pin(v).sglang for v in ("0.2.0", "0.2.1", "0.2.2", "0.2.3", "0.3.0")} == {
        "0.2.0": "0.5.5.post1", "0.2.1": "0.5.6", "0.2.2": "0.5.7", "0.2.3": "0.5.9", "0.3.0": "0.5.12.post1",
    }


def test_slime_commits_by_prefix():
    from specguard.versions import slime_pin

    # 474861aaf (2026-07-07) built FROM slimerl/sglang:v0.5.13-cu129; a6272da0d is the v0.3.1 tag.
    assert slime_pin("474861aaf").sglang == "0.5.13"
    assert slime_pin("474861a").sglang == "0.5.13"  # seven digits suffice
    assert slime_pin("a6272da0d").sglang == slime_pin("v0.3.1").sglang
    assert slime_pin("0000000") is None and slime_pin("474861") is None  # unknown; too short to be a commit




@pytest.mark.skipif(SLIME_CLONE is None, reason=NO_SLIME_CLONE)
def test_slime_pins_match_the_generator():
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "extract_slime_pins.py"), str(SLIME_CLONE), "--ref", "624b824a8", "--check"],
        capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr


