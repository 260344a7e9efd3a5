"""Options shared by every command that takes a launch, declared once so each says the same thing."""

from __future__ import annotations

from enum import StrEnum

from specguard.cli.parsing import Option, at_least, choice


class DialectChoice(StrEnum):
    sglang = "sglang"
    slime = "slime"
    sgl_jax = "sgl-jax"


class OutputFormat(StrEnum):
    human = "human"
    json = "json"
    sarif = "sarif"


class DataFormat(StrEnum):
    """The formats of a command that reports no findings on a launch: SARIF is a log of
    findings, so `--format sarif` is refused there rather than answered with JSON."""

    human = "human"
    json = "json"


PRESET = Option("--preset", "A shipped preset name or a preset YAML file.", metavar="NAME|FILE")
TARGET = Option("--target", "Target model: a directory or ORG/NAME[@REV]. Default: --model-path.", metavar="MODEL")
DRAFT = Option("--draft", "Draft model: a directory or ORG/NAME[@REV]. Default: --speculative-draft-model-path.", metavar="MODEL")
DIALECT = Option("--dialect", "Flag spelling; slime is detected from --sglang-* flags.", convert=choice(DialectChoice))
SGLANG_VERSION = Option(
    "--sglang-version",
    "SGLang version the rules speak of (~X.Y.Z: dated from a report, the build may be a later one). Default: installed, else the newest known.",
    metavar="X.Y.Z",
)
SGL_JAX_VERSION = Option(
    "--sgl-jax-version", "sgl-jax launches: the build (its commit date YYYY-MM-DD, or a PyPI version, tag or commit specguard knows).",
    metavar="BUILD",
)
REQUIREMENTS = Option("--requirements", "A requirements.txt or `pip freeze` output that pins sglang==X: check against that release.", metavar="FILE")
SLIME_VERSION = Option("--slime-version", "The slime release (v0.3.1) or commit the launch runs with: check against the SGLang its docker image pins, and against slime's own flags at it.", metavar="TAG|COMMIT")
GPU = Option("--gpu", "GPU model (H100, A100, B200, MI300X, TPU, cpu, ...). Default: nvidia-smi.", metavar="NAME")
# No node holds more than a few dozen GPUs; a count past this is a typo, and the memory and
# parallelism arithmetic would take it at its word.
MAX_GPUS_PER_NODE = 1024
GPU_COUNT = Option("--gpu-count", "GPUs per node.", convert=at_least(int, 1, MAX_GPUS_PER_NODE), metavar="N")
ENV = Option("--env", "KEY=VALUE env var for the launch (repeatable).", repeat=True, metavar="KEY=VALUE")
FIX = Option("--fix", "Apply the safe fixes.", switch=True)
UNSAFE_FIXES = Option("--unsafe-fixes", "Apply every fix, unsafe ones included.", switch=True)
OFFLINE = Option("--offline", "Never touch the network; the HF cache is still read.", switch=True)
FORMAT = Option("--format", "Output format.", convert=choice(OutputFormat))
DATA_FORMAT = Option("--format", "Output format.", convert=choice(DataFormat))


def _codes(text: str) -> list[str]:
    """``MM003,FX08,perf``: the selectors one option gives (checked against the rules later, in
    specguard/selection.py, so a typo is named with its did-you-mean)."""
    return [code.strip() for code in text.split(",") if code.strip()]


_SELECTOR = "CODE|PREFIX|CATEGORY[,...]"
SELECT = Option("--select", "Run only these rules: codes (MM003), prefixes (MM, FX08), categories (perf, hygiene, start, ...) or ALL; a perf or hygiene rule selected so speaks at its own severity, not as info.", convert=_codes, repeat=True, metavar=_SELECTOR)
EXTEND_SELECT = Option("--extend-select", "Add these rules to the set (e.g. perf: the performance findings as warnings).", convert=_codes, repeat=True, metavar=_SELECTOR)
IGNORE = Option("--ignore", "Do not run these rules (the more specific of --select and --ignore wins, as in ruff).", convert=_codes, repeat=True, metavar=_SELECTOR)
SHOW_SUPPRESSED = Option("--show-suppressed", "List the findings a `# specguard: ignore[CODE]` comment suppressed.", switch=True)

VERBOSE = Option("--verbose", "Show where each catalog fact was copied from, and why the catalog was used.", switch=True, short="-v")
