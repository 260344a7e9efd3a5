"""`check --write` never loses what the user has: an existing file, the input itself, a user's
snapshot files, and a disk that fills up mid-write all leave the previous content intact."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import yaml

from tests.conftest import REPO, run_cli

PRESETS = REPO / "presets"
SOURCE_PRESET = "sglang-standalone-qwen2.5-7b-specv2"  # shipped; at the newest release --fix changes its launch


def user_preset(tmp_path: Path) -> Path:
    """The shipped preset copied as a user's own file, with a comment of theirs, snapshots beside it."""
    original = PRESETS / f"{SOURCE_PRESET}.yaml"
    folder = tmp_path / "mine"
    shutil.copytree(PRESETS, folder, ignore=shutil.ignore_patterns("*.yaml"))
    # Without the shipped preset's release pin the copy is checked at the newest release, which ignores
    # SGLANG_ENABLE_SPEC_V2: SP004's safe fix drops it, so --fix has something to write.
    shipped = "".join(line for line in original.read_text().splitlines(keepends=True) if not line.startswith("sglang_version:"))
    text = "# my team's launch: keep this comment\n" + shipped
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


def one_error_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, (result.returncode, result.stdout[-2000:], result.stderr[-2000:])
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def test_in_place_through_a_symlink_rewrites_the_file_it_points_to_and_keeps_the_link(tmp_path: Path) -> None:
    real = user_preset(tmp_path)
    before = real.read_text()
    links = tmp_path / "links"
    links.mkdir()
    link = links / "mine.yaml"
    link.symlink_to(real)
    done = run_cli("check", "--preset", str(link), "--offline", "--fix", "--write", str(link), "--in-place")
    assert done.returncode in (0, 1), done.stderr
    assert link.is_symlink() and link.resolve() == real.resolve()
    after = real.read_text()
    assert after != before and after.startswith("# my team's launch: keep this comment\n")
    assert sorted(p.name for p in links.iterdir()) == ["mine.yaml"]  # nothing written beside the link
    assert not [p for p in real.parent.iterdir() if p.name.endswith(".tmp")]


# A wall-clock bound: a FIFO blocks a reader without using CPU.
SECONDS = 10


def test_a_fifo_where_a_snapshot_goes_is_refused_without_reading_it(tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    first = run_cli("check", "--preset", SOURCE_PRESET, "--offline", "--write", str(out_dir / "a.yaml"))
    assert first.returncode in (0, 1), first.stderr
    [snapshot] = [p for p in out_dir.rglob("*.json")]
    snapshot.unlink()
    os.mkfifo(snapshot)
    line = one_error_line(run_cli("check", "--preset", SOURCE_PRESET, "--offline", "--write", str(out_dir / "b.yaml"), timeout=SECONDS))
    assert line.startswith(f"specguard: error: {snapshot}, where the preset's snapshot goes, is a FIFO (named pipe), not a file"), line
    assert not (out_dir / "b.yaml").exists()


def test_a_directory_where_a_snapshot_goes_is_one_line(tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    first = run_cli("check", "--preset", SOURCE_PRESET, "--offline", "--write", str(out_dir / "a.yaml"))
    [snapshot] = [p for p in out_dir.rglob("*.json")]
    assert first.returncode in (0, 1), first.stderr
    snapshot.unlink()
    snapshot.mkdir()
    line = one_error_line(run_cli("check", "--preset", SOURCE_PRESET, "--offline", "--write", str(out_dir / "b.yaml"), timeout=SECONDS))
    assert line.startswith(f"specguard: error: {snapshot}, where the preset's snapshot goes, is a directory, not a file"), line


def test_a_fifo_given_to_write_is_refused_even_with_force(tmp_path: Path) -> None:
    fifo = tmp_path / "fixed.yaml"
    os.mkfifo(fifo)
    line = one_error_line(run_cli("check", "--preset", SOURCE_PRESET, "--offline", "--write", str(fifo), "--force", timeout=SECONDS))
    assert line.startswith(f"specguard: error: --write {fifo} is a FIFO (named pipe), not a file"), line
    assert fifo.is_fifo()


def test_a_fifo_as_the_preset_or_its_snapshot_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "p.yaml"
    os.mkfifo(fifo)
    line = one_error_line(run_cli("check", "--preset", str(fifo), "--offline", timeout=SECONDS))
    assert line.startswith(f"specguard: error: preset file {fifo} is a FIFO (named pipe), not a file"), line
    preset = user_preset(tmp_path)
    snapshot = preset.parent / re.findall(r"config: (\S+)", preset.read_text())[0]
    snapshot.unlink()
    os.mkfifo(snapshot)
    line = one_error_line(run_cli("check", "--preset", str(preset), "--offline", timeout=SECONDS))
    assert f"snapshot {snapshot.resolve()} is a FIFO (named pipe), not a file" in line, line


def test_a_duplicated_key_is_one_line_naming_the_file_the_key_and_its_line(tmp_path: Path) -> None:
    preset = user_preset(tmp_path)
    assert "max-running-requests" not in preset.read_text()
    text = preset.read_text().replace("\nflags:\n", "\nflags:\n  max-running-requests: 4\n  max-running-requests: 8\n", 1)
    flags_at = text.splitlines().index("flags:")
    preset.write_text(text)
    line = one_error_line(run_cli("check", "--preset", str(preset), "--offline", "--fix", "--write", str(preset), "--in-place"))
    assert line == (
        f"specguard: error: preset {preset}: line {flags_at + 3}: the key 'max-running-requests' is given twice in one mapping "
        f"(first on line {flags_at + 2}): keep one of them"
    )
    assert preset.read_text() == text


def test_the_written_preset_keeps_the_secret_that_the_screen_masks(tmp_path: Path) -> None:
    """A file the user asks for is a launch that must still run: it keeps the real --api-key;
    what check prints shows it masked."""
    secret = "sk-written-not-shown-7"
    preset = user_preset(tmp_path)
    preset.write_text(preset.read_text().replace("\nflags:\n", f"\nflags:\n  api-key: {secret}\n", 1))
    out = tmp_path / "mine" / "fixed.yaml"
    result = run_cli("check", "--preset", str(preset), "--offline", "--fix", "--write", str(out))
    assert result.returncode in (0, 1), result.stderr
    assert secret not in result.stdout + result.stderr
    assert yaml.safe_load(out.read_text())["flags"]["api-key"] == secret


def test_in_place_changes_only_the_fixed_lines(tmp_path: Path) -> None:
    """A user's own layout (lists indented deeper than PyYAML writes them, a line longer than
    100 characters, a comment on the fixed flag) survives --in-place: only the fixed line differs,
    and it keeps its comment."""
    folder = tmp_path / "mine"
    shutil.copytree(PRESETS, folder, ignore=shutil.ignore_patterns("*.yaml"))
    text = (PRESETS / "sglang-oom-recovery.yaml").read_text()
    text = text.replace("  cuda-graph-max-bs-decode: 2\n", "  cuda-graph-max-bs: 2    # the docs' value\n")
    text = re.sub(r"(?m)^  - ", "    - ", text)
    assert any(len(line) > 100 for line in text.splitlines())
    preset = folder / "mine.yaml"
    preset.write_text(text)
    done = run_cli("check", "--preset", str(preset), "--offline", "--fix", "--write", str(preset), "--in-place")
    assert done.returncode == 0, done.stdout + done.stderr
    before, after = text.splitlines(), preset.read_text().splitlines()
    assert len(before) == len(after)
    assert [(b, a) for b, a in zip(before, after, strict=True) if b != a] == [
        ("  cuda-graph-max-bs: 2    # the docs' value", "  cuda-graph-max-bs-decode: 2    # the docs' value"),
    ]
