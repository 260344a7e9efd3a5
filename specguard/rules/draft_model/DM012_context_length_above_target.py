"""DM012 context-length-above-target."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.draft_model._common import derived_context_length
from specguard.rules.examples import LLAMA31_8B

OVERWRITE_ENV = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"


def check(ctx: CheckContext) -> Iterator[Finding]:
    given = ctx.spec.get("context_length")
    derived = derived_context_length(ctx.target)
    if given is None or derived is None or given <= derived:
        return
    flag = ctx.flag("--context-length")
    cap = set_flags(f"cap --context-length at {derived}, the target's derived context length",
                    Applicability.UNSAFE, context_length=derived)
    if ctx.spec.env_flag(OVERWRITE_ENV):
        yield RULE.finding(
            f"{flag} {given} is above the target's derived context length ({derived}); {OVERWRITE_ENV}=1 lets "
            "SGLang start, with its warning 'This may lead to incorrect model outputs or CUDA errors': "
            f"positions beyond {derived} were never trained",
            flags=("--context-length",),
            fix=cap,
            severity=Severity.WARNING,
        )
        return
    yield RULE.finding(
        f"{flag} {given} is above the target's derived context length ({derived}): SGLang raises "
        f"'User-specified context_length ({given}) is greater than the derived context_length ({derived})' "
        f"while resolving arguments. Cap {flag} at {derived}, or set {OVERWRITE_ENV}=1 to run past it",
        flags=("--context-length",),
        fix=cap,
    )


RULE = Rule(
    check=check,
    code="DM012",
    category=Category.START,
    name="context-length-above-target",
    summary="--context-length is above the target's own derived context length",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="Compares `--context-length` with the target's derived context length: "
        "`max_position_embeddings` times the rope-scaling `factor` (the factor counts as 1 when "
        "`rope_scaling` has `original_max_position_embeddings` or is `rope_type: llama3`).",
        why="The target's ModelConfig is built during argument resolution and `_derive_context_length` "
        "raises a ValueError when the requested length exceeds the derived one, unless "
        "`SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1` (P58, `configs/model_config.py:1291-1321`; derived "
        "length from `utils/hf_transformers/common.py:677-694`). With the env var SGLang only warns that "
        "outputs may be wrong. SGLang reads `max_sequence_length`, `seq_length`, `max_seq_len` and "
        "`model_max_length` before `max_position_embeddings`; specguard only sees the last, so a config "
        "that sets one of the others can differ.",
        fix="Cap `--context-length` at the derived length.",
        fix_safety="Unsafe: it shortens the context the server accepts.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, "--context-length", "262144"),
        target={"max_position_embeddings": 131072, "rope_scaling": {"rope_type": "llama3", "factor": 8.0}},
    ),
    good=Example(
        argv=(*LLAMA31_8B, "--context-length", "131072"),
        target={"max_position_embeddings": 131072, "rope_scaling": {"rope_type": "llama3", "factor": 8.0}},
    ),
    sources=(
        "design: sglang-spec-checks.md P58 (case core:I02)",
        "sglang 0.5.23: python/sglang/srt/configs/model_config.py:1291-1321 (_derive_context_length)",
        "sglang 0.5.23: python/sglang/srt/utils/hf_transformers/common.py:668-694 (get_context_length)",
    ),
    log_signatures=(
        r"context_length \(\d+\) is greater than the derived context_length",
    ),
)
