"""The environment edge: GPU names, SGLang version detection, nvidia-smi."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from specguard.environment import (
    NEWEST_KNOWN_SGLANG,
    build_environment,
    detect_gpu,
    gpu_by_name,
    installed_version,
)
from specguard.errors import InputError

REQUIRED = ["H100", "H200", "H20", "H800", "A100", "A800", "L40S", "L4", "B200", "GB200", "GB300", "MI300X", "MI325X", "MI355X", "TPU", "cpu"]


@pytest.mark.parametrize("name", REQUIRED)
def test_required_gpus_case_insensitive(name: str) -> None:
    for spelling in (name, name.lower(), name.upper()):
        spec = gpu_by_name(spelling)
        assert spec.name.lower() == name.lower()
    assert gpu_by_name("NVIDIA H100").name == "H100"


def test_gpu_facts() -> None:
    assert gpu_by_name("h100").compute_capability == (9, 0) and gpu_by_name("h100").is_hopper
    assert gpu_by_name("a100").sm == 80 and not gpu_by_name("a100").is_hopper
    assert gpu_by_name("b200").sm == 100
    assert gpu_by_name("mi300x").platform == "rocm" and gpu_by_name("tpu").platform == "tpu"


def test_unknown_gpu_lists_the_known_ones() -> None:
    with pytest.raises(InputError) as error:
        gpu_by_name("V100x")
    assert "H100" in error.value.one_line()


def test_version_defaults_to_newest_known_when_sglang_is_absent() -> None:
    env = build_environment(sglang_version=None, gpu=None, detect=False)
    if installed_version() is None:
        assert env.sglang_version == NEWEST_KNOWN_SGLANG and env.sglang_version_origin == "default"
    given = build_environment(sglang_version="v0.5.1", gpu="L4", detect=False)
    assert given.sglang_version == "0.5.1" and given.sglang_version_origin == "given" and given.gpu.name == "L4"


def test_installed_version_is_read_from_dist_info(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sglang-0.5.9.dist-info").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert installed_version() == "0.5.9"
    env = build_environment(sglang_version=None, gpu=None, detect=False)
    assert env.sglang_version == "0.5.9" and env.sglang_version_origin == "installed"


def test_nvidia_smi_detection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real executable named nvidia-smi on PATH, printing what the real one prints for this query."""
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'NVIDIA H100 80GB HBM3, 81559, 9.0'\necho 'NVIDIA H100 80GB HBM3, 81559, 9.0'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    spec, count = detect_gpu()
    assert spec is not None and spec.name == "H100" and count == 2 and spec.memory_gib == 79.6
    env = build_environment(sglang_version=None, gpu=None)
    assert env.gpu_origin == "detected" and env.gpu_count == 2


@pytest.mark.parametrize("row", ["NVIDIA H100 80GB HBM3, [N/A], 9.0", "NVIDIA H100 80GB HBM3, [Insufficient Permissions], 9.0", "NVIDIA H100, nan, 9.0"])
def test_nvidia_smi_without_a_memory_figure_leaves_it_unknown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, row: str) -> None:
    fake = tmp_path / "nvidia-smi"
    fake.write_text(f"#!/bin/sh\necho '{row}'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    spec, count = detect_gpu()
    assert spec is not None and spec.name == "H100" and spec.memory_gib is None and count == 1


def test_nvidia_smi_with_too_few_fields_is_no_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'NVIDIA H100'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert detect_gpu() == (None, None)


def test_no_nvidia_smi_means_unknown(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert detect_gpu() == (None, None)
