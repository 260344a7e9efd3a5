"""DM325 glm-ocr-mtp-draft-ignores-image-inputs."""

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

GLM_OCR = "GlmOcrForConditionalGeneration"
# What SGLang builds the draft as (configs/model_config.py, _config_draft_model), and the class itself.
GLM_OCR_DRAFTS = frozenset({GLM_OCR, "GlmOcrForConditionalGenerationNextN"})


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "EAGLE"
        or ctx.target is None
        or ctx.target.architecture != GLM_OCR
    ):
        return
    draft_path = ctx.spec.get("speculative_draft_model_path")
    if draft_path is not None and draft_path != ctx.spec.get("model_path"):
        if ctx.draft is None or ctx.draft.architecture not in GLM_OCR_DRAFTS:
            return  # another draft (or one specguard cannot see): not the GLM-OCR MTP layer
    scaling = ctx.target.rope_scaling or {}
    positions = (
        " and drafts at 1-D positions where the target uses M-RoPE (rope_scaling.mrope_section)"
        if "mrope_section" in scaling
        else ""
    )
    yield RULE.finding(
        f"GLM-OCR's MTP draft in SGLang {ctx.env.sglang_version} embeds the image placeholder tokens as text instead "
        f"of taking the target's multimodal input embeddings{positions}, so on image prompts its drafts are mostly "
        "rejected: the output stays verified, but speculation buys little. SGLang 0.5.21 feeds the draft the "
        "target's embeddings and positions; upgrade, or measure acceptance before relying on it",
        flags=("--speculative-algorithm",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own GLM-OCR NextN draft
    check=check,
    code="DM325",
    category=Category.PERF,
    name="glm-ocr-mtp-draft-ignores-image-inputs",
    summary="GLM-OCR's MTP draft ignores the image embeddings and M-RoPE positions before 0.5.21 (low acceptance)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="EAGLE/NEXTN on a `GlmOcrForConditionalGeneration` target drafting with its own MTP layer (no draft "
        "path, the target's path, or a GLM-OCR draft), SGLang 0.5.9 to 0.5.20.",
        why="0.5.9 adds GLM-OCR with a NextN draft (`GlmOcrForConditionalGenerationNextN`, models/glm_ocr_nextn.py; "
        "the target is rewritten to it in draft mode, configs/model_config.py:288-290). Up to 0.5.20 its model "
        "embeds `input_ids` itself (glm_ocr_nextn.py:88-91), so image placeholder tokens get text embeddings rather "
        "than the target's vision embeddings, and it runs its decoder on the plain `positions` (:106-107, :151) while the "
        "target uses M-RoPE positions (glm_ocr.py:320). 0.5.21 takes `forward_batch.mm_input_embeds` for extend batches "
        "with multimodal inputs (:90-103) and `forward_batch.mrope_positions` when the config's rope_scaling has "
        "`mrope_section` (:142-143, :165-166). Verification keeps the output correct; the draft's acceptance on "
        "image prompts (GLM-OCR's use) is what suffers.",
        fix="Upgrade to SGLang 0.5.21 or later. No automatic fix.",
        fix_safety="No fix: the release is the user's choice.",
    ),
    bad=Example(
        argv=("--model-path", "./GLM-OCR", "--speculative-algorithm", "NEXTN"),
        target={"architectures": (GLM_OCR,)},
        sglang_version="0.5.20",
    ),
    good=Example(
        argv=("--model-path", "./GLM-OCR", "--speculative-algorithm", "NEXTN"),
        target={"architectures": (GLM_OCR,)},
        sglang_version="0.5.21",
    ),
    sources=(
        "sglang 0.5.8.post1: python/sglang/srt/models/ (no glm_ocr.py, no glm_ocr_nextn.py)",
        "sglang 0.5.9: python/sglang/srt/models/glm_ocr_nextn.py:84-107, 162; configs/model_config.py:288-290",
        "sglang 0.5.20: python/sglang/srt/models/glm_ocr_nextn.py:88-91, 106-107, 151; glm_ocr.py:320",
        "sglang 0.5.21: python/sglang/srt/models/glm_ocr_nextn.py:39, 90-103, 142-143, 165-166",
    ),
    sglang_versions=">=0.5.9,<0.5.21",
)
