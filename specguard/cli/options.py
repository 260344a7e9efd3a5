"""Options shared by every command that takes a launch, so each says the same thing."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer


class DialectChoice(StrEnum):
    sglang = "sglang"
    slime = "slime"
    sgl_jax = "sgl-jax"


class OutputFormat(StrEnum):
    human = "human"
    json = "json"
    sarif = "sarif"


Preset = Annotated[str | None, typer.Option("--preset", help="A shipped preset name or a preset YAML file.")]
Target = Annotated[str | None, typer.Option("--target", help="Target model: a directory or ORG/NAME[@REV]. Default: --model-path.")]
Draft = Annotated[
    str | None, typer.Option("--draft", help="Draft model: a directory or ORG/NAME[@REV]. Default: --speculative-draft-model-path.")
]
DialectOpt = Annotated[
    DialectChoice | None, typer.Option("--dialect", help="Flag spelling; slime is detected from --sglang-* flags.", case_sensitive=False)
]
SglangVersion = Annotated[
    str | None, typer.Option("--sglang-version", help="SGLang version the rules speak of. Default: installed, else the newest known.")
]
SglJaxVersion = Annotated[
    str | None,
    typer.Option("--sgl-jax-version", help="sgl-jax launches: the build (its commit date YYYY-MM-DD, or a PyPI version, tag or commit specguard knows)."),
]
Requirements = Annotated[
    str | None,
    typer.Option("--requirements", help="A requirements.txt or `pip freeze` output that pins sglang==X: check against that release."),
]
SlimeVersion = Annotated[
    str | None,
    typer.Option("--slime-version", help="The slime release (v0.3.1) or commit the launch runs with: check against the SGLang its docker image pins."),
]
Gpu = Annotated[str | None, typer.Option("--gpu", help="GPU model (H100, A100, B200, MI300X, TPU, cpu, ...). Default: nvidia-smi.")]
GpuCount = Annotated[int | None, typer.Option("--gpu-count", help="GPUs per node.", min=1)]
EnvVars = Annotated[list[str] | None, typer.Option("--env", help="KEY=VALUE env var for the launch (repeatable).")]
FixOpt = Annotated[bool, typer.Option("--fix", help="Apply the safe fixes.")]
UnsafeFixes = Annotated[bool, typer.Option("--unsafe-fixes", help="Apply every fix, unsafe ones included.")]
Offline = Annotated[bool, typer.Option("--offline", help="Never touch the network; the HF cache is still read.")]
Format = Annotated[OutputFormat, typer.Option("--format", help="Output format.", case_sensitive=False)]
