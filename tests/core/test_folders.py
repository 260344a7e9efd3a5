"""Names a model folder's files write for each other stay inside the folder (or the HF cache)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from specguard.folders import escape


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("/etc/passwd", "not a path relative"),
        ("~/.ssh/id_rsa", "not a path relative"),
        ("../../../../etc/passwd", "climbs out"),
        ("shards/../../x.safetensors", "climbs out"),
        ("", "not a file name"),
        ("a\x00b", "not a file name"),
    ],
)
def test_names_that_leave_the_folder(tmp_path: Path, name: str, reason: str) -> None:
    problem = escape(tmp_path, name)
    assert problem is not None and reason in problem


def test_names_inside_the_folder(tmp_path: Path) -> None:
    assert escape(tmp_path, "model-00001-of-00002.safetensors") is None
    assert escape(tmp_path, "shards/../model.safetensors") is None
    (tmp_path / "sub").mkdir()
    os.symlink("../model.safetensors", tmp_path / "sub" / "link.safetensors")
    assert escape(tmp_path, "sub/link.safetensors") is None


def test_a_symlink_out_is_named_with_where_it_leads(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    os.symlink("/etc/hostname", folder / "model.safetensors")
    problem = escape(folder, "model.safetensors")
    assert problem is not None and "/etc/hostname" in problem


def test_a_symlink_into_the_hf_cache_stays_inside(tmp_path: Path) -> None:
    """Snapshot files link to ../../blobs/; hf download --local-dir before 0.23 linked there too."""
    blobs = tmp_path / "hub" / "models--org--name" / "blobs"
    blobs.mkdir(parents=True)
    (blobs / "abc123").write_bytes(b"x")
    folder = tmp_path / "local"
    folder.mkdir()
    os.symlink(blobs / "abc123", folder / "model.safetensors")
    assert escape(folder, "model.safetensors") is not None
    assert escape(folder, "model.safetensors", also_inside=(tmp_path / "hub",)) is None


def test_a_folder_that_is_itself_a_link_is_followed(tmp_path: Path) -> None:
    real = tmp_path / "disk" / "model"
    real.mkdir(parents=True)
    (real / "model.safetensors").write_bytes(b"x")
    os.symlink(real, tmp_path / "model")
    assert escape(tmp_path / "model", "model.safetensors") is None
