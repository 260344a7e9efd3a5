"""The tiny-model cache seals each build with checksums, heals a damaged copy, says in one line
when it cannot be written, and ``launch --dry-run`` writes nothing into it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specguard.runtime import tiny
from tests.conftest import run_cli

# A recipe small enough to build in a few seconds: the cache logic does not depend on its size.
QUICK = tiny.Recipe(seed=7, corpus_functions=300, target_steps=4, draft_steps=4)


def _build(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[tiny.TinyPair, str]:
    pair = tiny.ensure_tiny_pair(root, QUICK)
    return pair, capsys.readouterr().err


def test_build_is_sealed_and_reused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pair, log = _build(tmp_path, capsys)
    home = pair.target.parent
    assert tiny.is_built(home) and tiny.damage(home) is None
    sealed = json.loads((home / tiny.CHECKSUMS).read_text())
    assert {"target/model.safetensors", "draft/model.safetensors", "target/config.json", "recipe.json"} <= set(sealed)
    # Not a TTY: progress comes as lines at each quarter of each training loop.
    assert "tiny target: 1/4 training steps" in log and "tiny draft: 3/4 training steps" in log
    before = (pair.target / "model.safetensors").stat().st_mtime_ns
    again, log = _build(tmp_path, capsys)
    assert again == pair and log == ""  # no rebuild
    assert (pair.target / "model.safetensors").stat().st_mtime_ns == before
    assert [p.name for p in tmp_path.iterdir()] == [home.name]  # no scratch left behind


@pytest.mark.parametrize(
    "damage_it, reason",
    [
        (lambda home: (home / "target" / "model.safetensors").write_bytes(
            (home / "target" / "model.safetensors").read_bytes()[:100]), "target/model.safetensors differs"),
        (lambda home: (home / "draft" / "tokenizer.json").unlink(), "draft/tokenizer.json is missing"),
        (lambda home: (home / "draft" / "config.json").write_text("{}"), "draft/config.json differs"),
        (lambda home: (home / tiny.CHECKSUMS).unlink(), "no checksums.json"),
    ],
    ids=["truncated-weights", "missing-tokenizer", "edited-config", "unsealed"],
)
def test_damaged_copy_is_rebuilt(tmp_path: Path, capsys: pytest.CaptureFixture[str], damage_it, reason: str) -> None:
    pair, _ = _build(tmp_path, capsys)
    home = pair.target.parent
    original = json.loads((home / tiny.CHECKSUMS).read_text())
    damage_it(home)
    assert reason in (tiny.damage(home) or "")
    healed, log = _build(tmp_path, capsys)
    assert healed == pair
    assert f"the cached tiny model at {home} is damaged ({reason}" in log and "rebuilding it" in log
    assert tiny.damage(home) is None
    # The build is deterministic: the healed files are the ones first sealed.
    assert json.loads((home / tiny.CHECKSUMS).read_text()) == original
    assert sorted(p.name for p in tmp_path.iterdir()) == [home.name]


def test_unwritable_cache_is_one_line_naming_the_variable(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(tiny.TinyCacheError) as raised:
        tiny.ensure_tiny_pair(blocker / "cache", QUICK)
    line = str(raised.value)
    assert "\n" not in line and str(blocker / "cache") in line and "SPECGUARD_CACHE_DIR" in line


@pytest.mark.parametrize("cache", ["file", "proc"])
def test_launch_with_an_unwritable_cache_exits_2_in_one_line(tmp_path: Path, cache: str) -> None:
    if cache == "file":
        (tmp_path / "f").write_text("x")
        root = tmp_path / "f" / "cache"
    else:
        root = Path("/proc/specguard-cache")  # not creatable, even by root
    result = run_cli("launch", "--preset", "tiny-cpu", env={"SPECGUARD_CACHE_DIR": str(root)}, timeout=120)
    assert result.returncode == 2, result.stderr[-2000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("specguard: error:")]
    assert len(errors) == 1 and "SPECGUARD_CACHE_DIR" in errors[0] and str(root) in errors[0]
    assert "Traceback" not in result.stderr


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    result = run_cli(
        "launch", "--preset", "tiny-cpu", "--dry-run", "--format", "json",
        env={"SPECGUARD_CACHE_DIR": str(cache)}, timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert list(cache.iterdir()) == []
    command = " ".join(json.loads(result.stdout)["launch"]["command"])
    assert str(tiny.tiny_pair_paths(cache).target) in command  # where a launch would build it
    assert "not built yet" in result.stderr and "a dry run writes nothing" in result.stderr


QUICK_EAGLE3 = tiny.Eagle3Recipe(steps=2, batch_size=2, seq_len=16)


def test_the_eagle3_pair_trains_no_standalone_draft(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """tiny-cpu-eagle3 runs the target and its EAGLE3 head: the STANDALONE draft is not trained
    for it, and the target built alone is the pair's target, byte for byte."""
    eagle3 = tiny.ensure_tiny_eagle3(tmp_path, QUICK, QUICK_EAGLE3)
    log = capsys.readouterr().err
    assert "tiny target: 4 steps" in log and "tiny EAGLE3 head" in log
    assert "tiny draft" not in log
    assert not tiny.tiny_pair_paths(tmp_path, QUICK).target.parent.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([eagle3.target.parent.name, eagle3.draft.name])
    pair, _ = _build(tmp_path / "pair", capsys)
    for name in ("model.safetensors", "config.json", "tokenizer.json"):
        assert (eagle3.target / name).read_bytes() == (pair.target / name).read_bytes()


def test_the_eagle3_pair_uses_the_pairs_target_once_it_is_built(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pair, _ = _build(tmp_path, capsys)
    eagle3 = tiny.ensure_tiny_eagle3(tmp_path, QUICK, QUICK_EAGLE3)
    assert eagle3.target == pair.target and "tiny target" not in capsys.readouterr().err


def test_dry_run_of_the_eagle3_preset_would_build_no_standalone_draft(tmp_path: Path) -> None:
    result = run_cli("launch", "--preset", "tiny-cpu-eagle3", "--dry-run", env={"SPECGUARD_CACHE_DIR": str(tmp_path)}, timeout=120)
    assert list(tmp_path.iterdir()) == []
    note = result.stderr.replace("\n", " ").split("not built yet", 1)[1].split(": a launch", 1)[0]
    assert str(tiny.tiny_target_path(tmp_path).parent) in note and "tiny-eagle3-" in note
    assert str(tiny.tiny_pair_paths(tmp_path).target.parent) + "," not in note
    assert str(tiny.tiny_pair_paths(tmp_path).target.parent) + ")" not in note
