"""`check --write` never loses what the user has: an existing file, the input itself, a user's
snapshot files, and a disk that fills up mid-write all leave the previous content intact."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import yaml

from tests.conftest import REPO, run_cli

PRESETS = REPO / "presets"
SOURCE_PRESET = "sglang-standalone-qwen2.5-7b-specv2"  # shipped; --fix changes its launch


def user_preset(tmp_path: Path) -> Path:
    """The shipped preset copied as a user's own file, with a comment of theirs, snapshots beside it."""
    original = PRESETS / f"{SOURCE_PRESET}.yaml"
    folder = tmp_path / "mine"
    shutil.copytree(PRESETS, folder, ignore=shutil.ignore_patterns("*.yaml"))
    text = "# my team's launch: keep this comment\n" + original.read_text()
    path = folder / "mine.yaml"
    path.write_text(text)
    return path


def changes_something(preset: Path) -> bool:
    result = run_cli("check", "--preset", str(preset), "--offline", "--fix", "--format", "json")
    import json

    return bool(json.loads(result.stdout)["changes"])


def test_existing_file_is_not_replaced_without_force(tmp_path: Path) -> None:
    out = tmp_path / "fixed.yaml"
    out.write_text("previous: content\n")
    result = run_cli("check", "--preset", SOURCE_PRESET, "--offline", "--fix", "--write", str(out))
    assert result.returncode == 2 and "already exists" in result.stderr and "--force" in result.stderr
    assert out.read_text() == "previous: content\n"
    forced = run_cli("check", "--preset", SOURCE_PRESET, "--offline", "--fix", "--write", str(out), "--force")
    assert forced.returncode in (0, 1), forced.stderr
    assert yaml.safe_load(out.read_text())["name"] == SOURCE_PRESET


def test_the_input_itself_needs_in_place_and_keeps_comments_and_order(tmp_path: Path) -> None:
    preset = user_preset(tmp_path)
    before = preset.read_text()
    assert changes_something(preset)
    refused = run_cli("check", "--preset", str(preset), "--offline", "--fix", "--write", str(preset))
    assert refused.returncode == 2 and "--in-place" in refused.stderr
    assert preset.read_text() == before
    done = run_cli("check", "--preset", str(preset), "--offline", "--fix", "--write", str(preset), "--in-place")
    assert done.returncode in (0, 1), done.stderr
    after = preset.read_text()
    assert after != before and after.startswith("# my team's launch: keep this comment\n")
    keys_before = [k for k in yaml.safe_load(before)]
    keys_after = [k for k in yaml.safe_load(after)]
    assert keys_after == [k for k in keys_before if k in keys_after]  # the order is the user's
    again = run_cli("check", "--preset", str(preset), "--offline", "--fix", "--format", "json")
    import json

    assert json.loads(again.stdout)["changes"] == []  # the rewritten preset is the corrected launch


def test_a_users_snapshot_is_never_replaced(tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    first = run_cli("check", "--preset", SOURCE_PRESET, "--offline", "--fix", "--write", str(out_dir / "a.yaml"))
    assert first.returncode in (0, 1), first.stderr
    snapshots = [p for p in out_dir.rglob("*.json")]
    assert snapshots, "the shipped preset carries a snapshot"
    snapshots[0].write_text('{"edited": "by the user"}')
    second = run_cli("check", "--preset", SOURCE_PRESET, "--offline", "--fix", "--write", str(out_dir / "b.yaml"))
    assert second.returncode == 2 and "never replaces a snapshot" in second.stderr
    assert snapshots[0].read_text() == '{"edited": "by the user"}'
    assert not (out_dir / "b.yaml").exists()


def test_full_disk_leaves_the_old_file_whole(tmp_path: Path) -> None:
    """os.write fails with ENOSPC after a few bytes (the way a full disk fails a write), in a
    real CLI process: the old file is intact and no temporary file is left behind."""
    out = tmp_path / "fixed.yaml"
    out.write_text("previous: content\n")
    script = textwrap.dedent(
        f"""
        import errno, os, sys
        real_write = os.write
        def full_disk(fd, data):
            if fd > 2:
                real_write(fd, bytes(data)[:16])
                raise OSError(errno.ENOSPC, "No space left on device")
            return real_write(fd, data)
        os.write = full_disk
        sys.argv = ["specguard", "check", "--preset", {SOURCE_PRESET!r}, "--offline", "--fix", "--write", {str(out)!r}, "--force"]
        from specguard.cli.main import run
        run()
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "No space left on device" in result.stderr and "nothing was replaced" in result.stderr
    assert "Traceback" not in result.stderr
    assert out.read_text() == "previous: content\n"
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "fixed.yaml"]  # no temporary or partial file
