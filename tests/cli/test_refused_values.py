"""A value the launch's release refuses is an error finding (VB013) beside every other finding, in
each output format, exit 1; a value dates a launch like a flag does; an inferred release does not
hide the newest one (VB014). The real CLI in a subprocess, offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import HF_CONFIGS, run_cli

LLAMA = str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct")

# (kind, release, the refused flag and its value, what the message says). Each launch also holds
# EAGLE3 without a draft: DM005's error must stand beside VB013's.
REFUSED = [
    ("choice", "0.5.2", ("--attention-backend", "fa4"), "not one of SGLang 0.5.2's choices"),
    ("type", "0.5.23", ("--port", "abc"), "expects an integer"),
    ("range", "0.5.23", ("--mem-fraction-static", "1.5"), "not a fraction of GPU memory"),
    ("switch", "0.5.23", ("--disable-cuda-graph", "true"), "is a switch and takes no value"),
]


def _script(tmp_path: Path, flag: str, value: str) -> tuple[Path, int]:
    """A launch script, and the line the refused flag is on."""
    lines = [
        "#!/bin/bash",
        "python -m sglang.launch_server \\",
        f"  --model-path {LLAMA} \\",
        "  --speculative-algorithm EAGLE3 \\",
        f"  --tp-size 1 {flag} {value}",
    ]
    path = tmp_path / "serve.sh"
    path.write_text("\n".join(lines) + "\n")
    return path, len(lines)


@pytest.mark.parametrize(("kind", "release", "refused", "says"), REFUSED, ids=[row[0] for row in REFUSED])
def test_refused_value_is_an_error_finding_in_every_format(kind: str, release: str, refused: tuple[str, str], says: str, tmp_path: Path) -> None:
    flag, value = refused
    script, line = _script(tmp_path, flag, value)
    base = ("check", "--offline", "--gpu", "H100", "--sglang-version", release, "--script", str(script))

    human = run_cli(*base)
    assert human.returncode == 1, human.stdout + human.stderr
    assert "VB013" in human.stdout and "DM005" in human.stdout and not human.stderr.strip()

    result = run_cli(*base, "--format", "json")
    assert result.returncode == 1
    findings = json.loads(result.stdout)["launches"][0]["findings"]
    [vb013] = [f for f in findings if f["code"] == "VB013"]
    assert (vb013["severity"], vb013["flags"]) == ("error", [flag]) and says in vb013["message"]
    assert any(f["code"] == "DM005" and f["severity"] == "error" for f in findings)

    sarif = run_cli(*base, "--format", "sarif")
    assert sarif.returncode == 1
    results = json.loads(sarif.stdout)["runs"][0]["results"]
    [vb013_sarif] = [r for r in results if r["ruleId"] == "VB013"]
    assert vb013_sarif["level"] == "error"
    assert vb013_sarif["locations"][0]["physicalLocation"]["region"]["startLine"] == line
    assert any(r["ruleId"] == "DM005" for r in results)


def _check(*args: str) -> tuple[int, dict]:
    result = run_cli("check", "--offline", "--gpu", "H100", "--format", "json", *args)
    return result.returncode, json.loads(result.stdout)


def test_the_closest_choice_is_the_fix() -> None:
    code, doc = _check("--sglang-version", "0.5.2", "--unsafe-fixes", "--", "--model-path", LLAMA, "--attention-backend", "flashinfr")
    assert code == 0 and doc["changes"] == [{"flag": "--attention-backend", "old": "flashinfr", "new": "flashinfer", "rule": "VB013"}]


def test_a_dated_release_warns_of_a_choice_a_later_release_takes() -> None:
    # sglang#3724: NEXTN on a main build from before 0.4.3.post2, the first release to list it.
    launch = ("--", "--model-path", LLAMA, "--speculative-algorithm", "NEXTN")
    code, doc = _check("--sglang-version", "~0.4.3", *launch)
    [dated] = [f for f in doc["findings"] if f["code"] == "VB013"]
    assert dated["severity"] == "warning" and "0.4.3.post2" in dated["message"]
    assert doc["environment"]["sglang_version_origin"] == "dated from a report"
    code, doc = _check("--sglang-version", "0.4.3", *launch)
    assert [f["severity"] for f in doc["findings"] if f["code"] == "VB013"] == ["error"] and code == 1


def test_a_value_only_older_releases_take_narrows_the_release() -> None:
    code, doc = _check("--", "--model-path", LLAMA, "--attention-backend", "dual_chunk_flash_attn")
    environment = doc["environment"]
    assert code == 0 and environment["sglang_version_origin"] == "inferred from flags"
    assert environment["sglang_version"] == "0.5.19" and environment["sglang_version_range"][1] == "0.5.19"
    assert not [f for f in doc["findings"] if f["code"] == "VB013"]


@pytest.mark.parametrize(
    ("launch", "flag", "says"),
    [
        (("--attention-backend", "dual_chunk_flash_attn"), "--attention-backend", "'dual_chunk_flash_attn' is not one of SGLang 0.5.23's choices"),
        (("--cuda-graph-max-bs", "64"), "--cuda-graph-max-bs", "write --cuda-graph-max-bs-decode there"),
    ],
    ids=["value", "renamed-flag"],
)
def test_an_inferred_release_does_not_hide_the_newest(launch: tuple[str, ...], flag: str, says: str) -> None:
    _, doc = _check("--", "--model-path", LLAMA, *launch)
    [newest] = [f for f in doc["findings"] if f["code"] == "VB014"]
    assert newest["severity"] == "warning" and newest["flags"] == [flag]
    assert "0.5.23, the newest release" in newest["message"] and says in newest["message"]
    _, doc = _check("--sglang-version", doc["environment"]["sglang_version"], "--", "--model-path", LLAMA, *launch)
    assert not [f for f in doc["findings"] if f["code"] == "VB014"]  # a named release is the one it runs on
