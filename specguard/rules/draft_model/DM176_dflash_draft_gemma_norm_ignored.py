"""DM176 dflash-draft-gemma-norm-ignored."""

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
from specguard.rules.examples import QWEN3_8B_DFLASH

DRAFT = {"architectures": ("DFlashDraftModel",), "use_gemma_norm": True}


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "DFLASH"
        or ctx.draft is None
        or ctx.draft.use_gemma_norm is not True
    ):
        return
    yield RULE.finding(
        f"The DFLASH draft's config.json sets use_gemma_norm: true, which SGLang {ctx.version} ignores: every norm "
        "of the draft is built as a plain RMSNorm, so weights trained as Gemma-style offsets (scale = 1 + weight) "
        "scale the activations by the bare weight. The draft loads and runs, but its proposals are wrong and "
        "nearly all are rejected: expect little or no speedup. SGLang 0.5.23 builds these norms as GemmaRMSNorm",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM176",
    category=Category.PERF,
    name="dflash-draft-gemma-norm-ignored",
    summary="DFLASH draft with use_gemma_norm true runs with the wrong norms before 0.5.23 (low acceptance)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with a draft whose config.json sets `use_gemma_norm: true`, "
        "SGLang 0.5.11 to 0.5.22.",
        why="Up to 0.5.22 `models/dflash.py` never reads `use_gemma_norm`: the draft's q/k norms, layer norms and "
        "final norms are `RMSNorm` (0.5.22 models/dflash.py:241-242, 559, 567, 686, 716; 0.5.11 :90-91, 216, 218, 271, 291), "
        "which multiplies by the stored weight, where a Gemma-style norm multiplies by 1 + weight. The draft then "
        "drafts from mis-scaled activations; the target's verify keeps the output correct, so the cost is the "
        "acceptance rate. 0.5.23 picks `GemmaRMSNorm` when the flag is set (models/dflash.py:247-250, 610-611, "
        "619, 695-697, 745, 775).",
        fix="Use SGLang 0.5.23 or later for this draft.",
        fix_safety="No automatic fix: the release is the user's choice.",
    ),
    bad=Example(argv=QWEN3_8B_DFLASH, draft=DRAFT, sglang_version="0.5.22"),
    good=Example(argv=QWEN3_8B_DFLASH, draft=DRAFT, sglang_version="0.5.23"),
    sources=(
        "sglang 0.5.11: python/sglang/srt/models/dflash.py:90-91,216,218,271,291 (RMSNorm; no use_gemma_norm)",
        "sglang 0.5.22: python/sglang/srt/models/dflash.py:241-242,559,567,686,716 (RMSNorm; no use_gemma_norm)",
        "sglang 0.5.23: python/sglang/srt/models/dflash.py:247-250,610-611,619,695-697,745,775 (GemmaRMSNorm when use_gemma_norm)",
    ),
    sglang_versions=">=0.5.11,<=0.5.22",
)
