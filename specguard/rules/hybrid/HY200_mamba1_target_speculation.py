"""HY200 mamba1-target-speculation."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)

# The Mamba-1 targets: both run MambaMixer1 (MambaForCausalLM subclasses FalconMambaForCausalLM,
# 0.5.20 models/mamba.py:28), whose forward asserts that it is not a target-verify pass.
MAMBA1_ARCHITECTURES = frozenset({"FalconMambaForCausalLM", "MambaForCausalLM"})


def check(ctx: CheckContext) -> Iterator[Finding]:
    architectures = (ctx.target.architectures if ctx.target is not None else None) or ()
    architecture = next((a for a in architectures if a in MAMBA1_ARCHITECTURES), None)
    if ctx.algorithm is None or architecture is None:
        return
    yield RULE.finding(
        f"a {architecture} target with {ctx.algorithm} on SGLang {ctx.version}: its Mamba-1 mixer asserts "
        "\"Mamba-1 (Falcon-Mamba) does not support speculative decoding yet\" on the first target-verify pass "
        "(when the verify CUDA graphs are captured at start, or at the first request without them). Serve "
        f"this model without {ctx.flag('--speculative-algorithm')}",
        flags=("--model-path", "--speculative-algorithm"),
    )


FALCON_MAMBA_NGRAM = ("--model-path", "tiiuae/falcon-mamba-7b-instruct", "--speculative-algorithm", "NGRAM")

RULE = Rule(
    check=check,
    code="HY200",
    category=Category.CRASH,
    name="mamba1-target-speculation",
    summary="A Mamba-1 target (FalconMamba, Mamba) with any speculative algorithm (0.5.20+)",
    severity=Severity.ERROR,
    sglang_versions=">=0.5.20",
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="A target whose config.json `architectures` is `FalconMambaForCausalLM` or `MambaForCausalLM`, "
        "with any `--speculative-algorithm`, SGLang 0.5.20 or later.",
        why="Both classes arrive in 0.5.20 and run `MambaMixer1`, whose forward asserts "
        "`not metadata.is_target_verify` with \"Mamba-1 (Falcon-Mamba) does not support speculative decoding "
        "yet\" (0.5.20 `layers/attention/mamba/mamba1.py:226-228`; 0.5.23 :230-232). Every algorithm verifies "
        "its draft tokens with a target-verify pass, so the assert fires on the first one: at start when the "
        "verify CUDA graphs are captured, else on the first request. Before 0.5.20 SGLang has no such model class.",
        fix="Serve the Mamba-1 model without speculative decoding.",
        fix_safety="No fix: speculation has to go, which is the user's choice.",
    ),
    bad=Example(argv=FALCON_MAMBA_NGRAM, target={"architectures": ("FalconMambaForCausalLM",)}, sglang_version="0.5.20"),
    good=Example(argv=FALCON_MAMBA_NGRAM[:2], target={"architectures": ("FalconMambaForCausalLM",)}, sglang_version="0.5.20"),
    sources=(
        "sglang 0.5.19: python/sglang/srt/models (no FalconMambaForCausalLM or MambaForCausalLM)",
        "sglang 0.5.20: python/sglang/srt/layers/attention/mamba/mamba1.py:226-228; models/falcon_mamba.py:35; models/mamba.py:28",
        "sglang 0.5.23: python/sglang/srt/layers/attention/mamba/mamba1.py:230-232",
    ),
    log_signatures=(r"Mamba-1 \(Falcon-Mamba\) does not support speculative decoding yet",),
)
