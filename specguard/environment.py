"""Where the launch will run: the SGLang version the rules speak of, and the GPU.

I/O happens here (package metadata, ``nvidia-smi``), never in the rules.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from packaging.version import Version

from specguard.errors import InputError
from specguard.models import Environment, GpuSpec
from specguard.records import replace
from specguard.sglang_facts.releases import (  # noqa: F401  (re-exported)
    NEWEST_KNOWN_SGLANG,
    OLDEST_KNOWN_SGLANG,
)
from specguard.spec import shown_value

if TYPE_CHECKING:
    from specguard.dialects import LaunchEvidence
    from specguard.spec import LaunchSpec

# The newest SGLang release the rules were written against (PyPI, 2026-11).

# One row per GPU: vendor, platform, compute capability (NVIDIA) and memory per device in GiB.
# Memory is the marketed size in GiB, except where the marketed figure is decimal GB and
# nvidia-smi reports less (L4 and A10G: 23,028 MiB; L40S: 46,068 MiB). SGLang's own probe
# sees a little less still (e.g. 79.1 GiB on an H100).
GPU_TABLE: dict[str, GpuSpec] = {
    spec.name.lower(): spec
    for spec in (
        GpuSpec(name="H100", vendor="nvidia", platform="cuda", compute_capability=(9, 0), memory_gib=80),
        GpuSpec(name="H200", vendor="nvidia", platform="cuda", compute_capability=(9, 0), memory_gib=141),
        GpuSpec(name="H20", vendor="nvidia", platform="cuda", compute_capability=(9, 0), memory_gib=96),
        GpuSpec(name="H800", vendor="nvidia", platform="cuda", compute_capability=(9, 0), memory_gib=80),
        GpuSpec(name="A100", vendor="nvidia", platform="cuda", compute_capability=(8, 0), memory_gib=80),
        GpuSpec(name="A100-40GB", vendor="nvidia", platform="cuda", compute_capability=(8, 0), memory_gib=40),
        GpuSpec(name="A800", vendor="nvidia", platform="cuda", compute_capability=(8, 0), memory_gib=80),
        GpuSpec(name="A10G", vendor="nvidia", platform="cuda", compute_capability=(8, 6), memory_gib=22.5),
        GpuSpec(name="L40S", vendor="nvidia", platform="cuda", compute_capability=(8, 9), memory_gib=45),
        GpuSpec(name="L4", vendor="nvidia", platform="cuda", compute_capability=(8, 9), memory_gib=22.5),
        GpuSpec(name="RTX4090", vendor="nvidia", platform="cuda", compute_capability=(8, 9), memory_gib=24),
        GpuSpec(name="B200", vendor="nvidia", platform="cuda", compute_capability=(10, 0), memory_gib=180),
        GpuSpec(name="GB200", vendor="nvidia", platform="cuda", compute_capability=(10, 0), memory_gib=186),
        GpuSpec(name="B300", vendor="nvidia", platform="cuda", compute_capability=(10, 3), memory_gib=270),
        GpuSpec(name="GB300", vendor="nvidia", platform="cuda", compute_capability=(10, 3), memory_gib=279),
        GpuSpec(name="MI300X", vendor="amd", platform="rocm", memory_gib=192),
        GpuSpec(name="MI325X", vendor="amd", platform="rocm", memory_gib=256),
        GpuSpec(name="MI355X", vendor="amd", platform="rocm", memory_gib=288),
        GpuSpec(name="MI350X", vendor="amd", platform="rocm", memory_gib=288),
        GpuSpec(name="TPU", vendor="google", platform="tpu", memory_gib=None),
        GpuSpec(name="TPU-v6e", vendor="google", platform="tpu", memory_gib=32),
        GpuSpec(name="TPU-v5p", vendor="google", platform="tpu", memory_gib=95),
        GpuSpec(name="cpu", vendor="cpu", platform="cpu", memory_gib=None),
    )
}


# Peak memory bandwidth (TB/s) and dense BF16 tensor throughput (TFLOPS, no sparsity) per GPU,
# for the roofline of `specguard accept --gpu`. Only GPUs with a figure read at a cited source.
GPU_THROUGHPUT: dict[str, tuple[float, float, str]] = {
    "h100": (3.35, 989.0, ("NVIDIA H100 SXM datasheet as tabled at archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html "
             "(3,350 GB/s; BF16 1,979 TFLOPS with sparsity, half without) and glennklockwood.com/garden/processors/h100 (BF16 matrix 989.4)")),
    "h200": (4.8, 989.0, ("lzwjava.github.io/nvidia-h200-gpu-specs-en (4.8 TB/s; same Hopper GH100 compute as H100) and "
             "glennklockwood.com/garden/processors/h100 ('H200 GPUs are the same as H100 GPUs ... with HBM3e')")),
    "a100": (2.039, 312.0, "glennklockwood.com/garden/processors/A100 (80G SXM4: 2.039 TB/s; BF16 matrix 312), citing NVIDIA's A100 datasheet"),
    "a100-40gb": (1.555, 312.0, "glennklockwood.com/garden/processors/A100 (40G SXM4: 1.555 TB/s; BF16 matrix 312)"),
}


def gpu_throughput(gpu: GpuSpec) -> tuple[float, float, str]:
    """(bandwidth bytes/s, dense BF16 FLOP/s, source) of ``gpu``; InputError where the table has none."""
    row = GPU_THROUGHPUT.get(gpu.name.lower())
    if row is None:
        known = ", ".join(GPU_TABLE[k].name for k in GPU_THROUGHPUT)
        raise InputError(f"--gpu {gpu.name}: specguard has no bandwidth and FLOPs figures for it", hint=f"use one of {known}")
    return row[0] * 1e12, row[1] * 1e12, row[2]


def gpu_by_name(name: str) -> GpuSpec:
    key = name.strip().lower().replace(" ", "")
    key = key.removeprefix("nvidia").removeprefix("amd").removeprefix("instinct").strip("-")
    if key in GPU_TABLE:
        return GPU_TABLE[key]
    raise InputError(f"--gpu: unknown GPU {name!r}", hint=f"use one of {', '.join(s.name for s in GPU_TABLE.values())}")


def detect_gpu() -> tuple[GpuSpec | None, int | None]:
    """The first GPU nvidia-smi reports, matched to the table; (None, None) when there is none."""
    if shutil.which("nvidia-smi") is None:
        return None, None
    import subprocess  # only where there is an nvidia-smi to ask: ~5 ms of the check path otherwise

    try:
        output = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,memory.total,compute_cap", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    rows = [line.split(",") for line in output.strip().splitlines() if line.strip()]
    if not rows or len(rows[0]) < 3:
        return None, None
    name, memory_mib, capability = (field.strip() for field in rows[0][:3])
    memory_gib = _gib(memory_mib)
    for spec in sorted(GPU_TABLE.values(), key=lambda s: -len(s.name)):
        if spec.vendor == "nvidia" and spec.name.lower() in name.lower().replace(" ", ""):
            return replace(spec, memory_gib=memory_gib), len(rows)
    try:
        major, minor = (int(part) for part in capability.split("."))
        cap: tuple[int, int] | None = (major, minor)
    except ValueError:
        cap = None
    return GpuSpec(name=name, vendor="nvidia", platform="cuda", compute_capability=cap, memory_gib=memory_gib), len(rows)


def _gib(memory_mib: str) -> float | None:
    """nvidia-smi's memory.total in GiB; None (unknown, the memory rules stay quiet) where it
    prints "[N/A]" or "[Insufficient Permissions]" instead of a number."""
    try:
        mib = float(memory_mib)
    except ValueError:
        return None
    return round(mib / 1024, 1) if math.isfinite(mib) and mib > 0 else None


def installed_version(distribution: str = "sglang") -> str | None:
    """An installed distribution's version (sglang, or sglang_jax) from its ``*.dist-info``
    directory name, without importing it.

    A directory scan of ``sys.path`` instead of ``importlib.metadata``: the same answer for an
    installed wheel, without importing the email parser on every ``check``.
    """
    prefix = f"{distribution}-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith(prefix) and name.endswith(".dist-info"):
                return name[len(prefix) : -len(".dist-info")]
    return None


def with_sgl_jax_build(env: Environment, given: str | None, *, detect: bool = True) -> Environment:
    """``env`` with the sgl-jax build a launch runs (its commit date, ISO) and where that came from."""
    built, source = _sgl_jax_build(given, detect=detect)
    return replace(env, sgl_jax_build=built, sgl_jax_build_source=source)


def _sgl_jax_build(given: str | None, *, detect: bool) -> tuple[str | None, str]:
    """--sgl-jax-version (a date, or a PyPI version, tag or commit specguard can date), else the
    installed ``sglang-jax`` if specguard can date it; else unknown (None)."""
    from specguard.sglang_facts.sgl_jax import RULES_READ_AT, dated_build

    if given:
        build = dated_build(given)
        if build is None:
            raise InputError(
                f"--sgl-jax-version {given if len(given) <= 40 else shown_value(given)}: not an sgl-jax build specguard can date",
                hint="give its commit date, e.g. --sgl-jax-version 2026-06-24 (`git -C sglang-jax log -1 --format=%cs`)",
            )
        return build.built.isoformat(), f"given: {given} ({build.source})"
    installed = installed_version("sglang_jax") if detect else None
    if installed is not None:
        build = dated_build(installed)
        if build is not None:
            return build.built.isoformat(), f"installed sglang-jax {installed} ({build.source})"
        unknown = f"installed sglang-jax {installed}, a build specguard cannot date"
    else:
        unknown = "not given"
    read_at = RULES_READ_AT
    return None, f"{unknown}: the rules speak of {read_at.names[0]} ({read_at.built.isoformat()}); give --sgl-jax-version"


DATED_PREFIX = "~"  # --sglang-version ~X.Y.Z: the release a report dates the launch to
DATED_ORIGIN = "dated from a report"


def normalise_version(raw: str, given_as: str = "--sglang-version") -> str:
    """``raw`` as packaging spells it; ``given_as`` names where it came from in the error."""
    try:
        version = Version(raw.strip().removeprefix("v"))
    except ValueError:  # InvalidVersion, or a release number of more than 4300 digits (int_max_str_digits)
        hint = "write it as X.Y.Z, e.g. 0.5.23" if given_as == "--sglang-version" else "fix it, or give --sglang-version X.Y.Z"
        raise InputError(f"{given_as}: {shown_value(raw)} is not a version", hint=hint) from None
    return str(version)


def build_environment(
    *,
    sglang_version: str | None,
    gpu: str | None,
    gpu_count: int | None = None,
    detect: bool = True,
    evidence: LaunchEvidence | None = None,
    sglang_version_given_as: str = "--sglang-version",
) -> Environment:
    """The environment a launch is checked in. The SGLang version: --sglang-version, else the
    installed sglang, else (``evidence`` given: what the launch's words say) the newest release
    that accepts every flag and env var of the launch, else the newest known release.
    ``sglang_version_given_as``: what named ``sglang_version`` (a docker image tag, a
    requirements file), for its error."""
    range_: tuple[str, str] | None = None
    note: str | None = None
    gpu_origin: Literal["given", "detected", "unknown"]
    spec: GpuSpec | None
    if sglang_version:
        # "~0.4.3": a release dated from a report, not read from the install; the launch may
        # have run a build from between two releases, so rules that know this say so (VB013).
        dated = sglang_version.startswith(DATED_PREFIX)
        version = normalise_version(sglang_version.removeprefix(DATED_PREFIX), sglang_version_given_as)
        origin = DATED_ORIGIN if dated else "given"
    elif (installed := installed_version()) is not None:
        version, origin = normalise_version(installed, "the installed sglang's version"), "installed"
    elif evidence is not None:
        version, origin, range_, note = inferred_release(evidence)
    else:
        version, origin = NEWEST_KNOWN_SGLANG, "default"
    if Version(version) > Version(NEWEST_KNOWN_SGLANG):
        note = f"SGLang {version} is newer than the newest release specguard knows; checked as {NEWEST_KNOWN_SGLANG}"
        version = NEWEST_KNOWN_SGLANG
    if gpu:
        spec, gpu_origin, count = gpu_by_name(gpu), "given", gpu_count
    elif detect:
        spec, count = detect_gpu()
        gpu_origin = "detected" if spec else "unknown"
        count = gpu_count or count
    else:
        spec, gpu_origin, count = None, "unknown", gpu_count
    return Environment(
        sglang_version=version,
        sglang_version_origin=origin,
        sglang_version_range=range_,
        sglang_version_note=note,
        sglang_version_inferred=evidence is not None and not sglang_version and origin in ("inferred from flags", "default"),
        gpu=spec,
        gpu_origin=gpu_origin,
        gpu_count=count,
    )


@lru_cache(maxsize=256)  # the same words, the same release: a launch fixed back and forth is inferred once per form
def inferred_release(evidence: LaunchEvidence) -> tuple[str, str, tuple[str, str] | None, str | None]:
    """The release a launch's words point to: (version, origin, the range of releases that
    accept them, a note for the report). The one inference, for a launch as given and as fixed."""
    from specguard.versions import infer_version  # reads the release history: only here

    inferred = infer_version(evidence.flags, evidence.env, evidence.values)
    range_ = (inferred.candidates[0], inferred.candidates[-1]) if inferred.candidates and inferred.source != "default" else None
    return inferred.version, inferred.source, range_, inferred.note


def with_release_of(env: Environment, spec: LaunchSpec) -> Environment:
    """``env`` with the release inferred from ``spec``, a launch a fix changed (unchanged for sgl-jax)."""
    from specguard.dialects import launch_evidence, render

    evidence = launch_evidence(render(spec), spec.dialect, spec.env)
    if evidence is None:
        return env
    version, origin, range_, note = inferred_release(evidence)
    return replace(
        env, sglang_version=version, sglang_version_origin=origin, sglang_version_range=range_, sglang_version_note=note,
        sglang_version_inferred=True,
    )
