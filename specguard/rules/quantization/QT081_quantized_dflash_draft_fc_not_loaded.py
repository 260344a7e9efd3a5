"""QT081 quantized-dflash-draft-fc-not-loaded."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.sglang_facts.changes import Change

# SGLang's DFlash draft classes build the target-context projection ``fc`` as a plain
# ``torch.nn.Linear`` (sglang 0.5.11 models/dflash.py:288, 0.5.15 :367, 0.5.19 :634-636, 0.5.23
# :772-774); only a Nemotron-3.5 draft, or a subclass that sets ``supports_quantization``
# (0.5.22+: none of the DFlash classes), gets the quantization-aware ReplicatedLinear. A draft
# checkpoint that stores ``fc`` quantized (compressed-tensors pack-quantized: fc.weight_packed,
# fc.weight_scale, fc.weight_shape) has no ``fc.weight`` to load, the tensors are skipped, and ``fc``
# keeps its random initialisation: no error, and the draft's proposals are all rejected
# (sgl-project/sglang#39087; the open fix sgl-project/sglang#39254).
DFLASH_DRAFT_CLASSES = frozenset({"DFlashDraftModel", "DFlash2DraftModel"})
# LiLiCorr drafts (models/lilicorr.py, new in 0.5.21) inherit DFlashDraftModel's plain fc in 0.5.21
# (lilicorr.py:437-445; dflash.py:695-697 makes it quantization-aware for Nemotron-3.5 only); 0.5.22 sets
# supports_quantization on them (lilicorr.py:529-530, dflash.py:648, 703-716).
LILICORR_DRAFT_CLASS = "LiLiCorrDraftModel"
LILICORR_DRAFT = Change("0.5.21", "0.5.21 models/lilicorr.py:437 LiLiCorrDraftModel(DFlashDraftModel)")
LILICORR_QUANTIZABLE_FC = Change("0.5.22", "0.5.22 models/lilicorr.py:529-530 supports_quantization = True")
# A Nemotron-3.5 draft gets the quantization-aware fc; SGLang recognises it by a W4A16_NVFP4 quant_algo plus
# config keys specguard does not record (has_embed_tokens, has_lm_head, target/aux layer ids: 0.5.19
# speculative/dflash_utils.py:469-506, models/dflash.py:624-636), so such a draft is left alone.
NEMOTRON_35_QUANT_ALGO = "W4A16_NVFP4"
NEMOTRON_35_QUANTIZABLE_FC = Change("0.5.19", "0.5.19 models/dflash.py:624-636 (0.5.18 has no is_nemotron_35_draft)")


def _plain_fc_class(architecture: str | None, version: Version) -> bool:
    """Whether this release builds the draft class's fc as a plain Linear."""
    if architecture == LILICORR_DRAFT_CLASS:
        return LILICORR_DRAFT.present_in(version) and not LILICORR_QUANTIZABLE_FC.present_in(version)
    return architecture in DFLASH_DRAFT_CLASSES


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DFLASH" or ctx.draft is None:
        return
    if not _plain_fc_class(ctx.draft.architecture, ctx.version) or ctx.draft.quantization is None:
        return
    if ctx.draft.quant_algo == NEMOTRON_35_QUANT_ALGO and NEMOTRON_35_QUANTIZABLE_FC.present_in(ctx.version):
        return  # perhaps a Nemotron-3.5 draft, whose fc is quantization-aware
    method = ctx.draft.quantization
    yield RULE.finding(
        f"the DFLASH draft ({ctx.draft.architecture}) declares {method} quantization, but SGLang "
        f"{ctx.env.sglang_version} builds its target-context projection fc as a plain Linear: a checkpoint that "
        "stores fc quantized (fc.weight_packed/fc.weight_scale) leaves fc randomly initialised, without an error, "
        "and almost no draft token is accepted (a W4A16 DFlash2 draft: accept length 1.00 against 5.25 for the "
        "same draft in bf16, sgl-project/sglang#39087). Serve the unquantized draft with "
        f"{ctx.flag('--speculative-draft-model-path')}, unless this checkpoint keeps fc unquantized",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own code path; sgl-jax has its own
    check=check,
    code="QT081",
    category=Category.START,
    name="quantized-dflash-draft-fc-not-loaded",
    summary="A quantized DFlash/DFlash2 draft checkpoint: SGLang's plain-Linear fc cannot load quantized fc weights",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with a draft whose architecture is `DFlashDraftModel` or "
        "`DFlash2DraftModel` (or, in 0.5.21 only, `LiLiCorrDraftModel`) and whose config.json declares a "
        "`quantization_config`.",
        why="The DFlash draft classes build `fc` (the projection of the concatenated target hidden states) as a "
        "plain `torch.nn.Linear` in every release read (0.5.11 `models/dflash.py:288`, 0.5.19 :634-636, 0.5.23 "
        ":772-774; only Nemotron-3.5 drafts get a quantization-aware layer). LiLiCorrDraftModel, new in 0.5.21, "
        "inherits that plain fc there (0.5.21 models/lilicorr.py:437-445, dflash.py:695-697) and declares "
        "supports_quantization from 0.5.22 (lilicorr.py:529-530, dflash.py:648, 703-716). A pack-quantized checkpoint stores "
        "`fc.weight_packed`, `fc.weight_scale` and `fc.weight_shape`, none of which the plain layer takes, so they "
        "are skipped and `fc` stays random. Nothing fails; acceptance collapses: `syvai/Qwen3.8-27B-DFlash2-W4A16` "
        "gave accept length 1.00-1.05 where the bf16 `z-lab/Qwen3.8-27B-DFlash2` gave 5.25, on SGLang 0.5.19 "
        "(sgl-project/sglang#39087; the fix sgl-project/sglang#39254 is open). A checkpoint that lists `fc` in its "
        "quantization ignore list keeps `fc.weight` and is not affected, which config.json's method alone does not show. "
        "Quiet from 0.5.19 for a W4A16_NVFP4 draft: it may be a Nemotron-3.5 draft, whose fc is quantization-aware "
        "(0.5.19 speculative/dflash_utils.py:469-506, models/dflash.py:624-636).",
        fix="Serve the bf16 release of the draft.",
        fix_safety="No automatic fix: the way out is another checkpoint.",
    ),
    bad=Example(
        argv=("--model-path", "cyankiwi/Qwen3.8-27B-AWQ-INT4", "--speculative-algorithm", "DFLASH",
              "--speculative-draft-model-path", "syvai/Qwen3.8-27B-DFlash2-W4A16", "--speculative-num-draft-tokens", "8"),
        draft={"architectures": ("DFlash2DraftModel",), "quantization": "compressed-tensors"},
        sglang_version="0.5.19",
    ),
    good=Example(
        argv=("--model-path", "cyankiwi/Qwen3.8-27B-AWQ-INT4", "--speculative-algorithm", "DFLASH",
              "--speculative-draft-model-path", "z-lab/Qwen3.8-27B-DFlash2", "--speculative-num-draft-tokens", "8"),
        draft={"architectures": ("DFlash2DraftModel",)},
        sglang_version="0.5.19",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/39087 (W4A16 DFlash2 draft: accept length ~1.0, no error)",
        "https://github.com/sgl-project/sglang/pull/39254 (open: make fc quantization-aware)",
        "sglang 0.5.11: python/sglang/srt/models/dflash.py:288 (fc = nn.Linear)",
        "sglang 0.5.19: python/sglang/srt/models/dflash.py:624-636",
        "sglang 0.5.23: python/sglang/srt/models/dflash.py:685, 707, 762-774 (supports_quantization False)",
        "sglang 0.5.21: python/sglang/srt/models/lilicorr.py:437-445; python/sglang/srt/models/dflash.py:695-697 (LiLiCorr: plain fc)",
        "sglang 0.5.22: python/sglang/srt/models/lilicorr.py:529-530; python/sglang/srt/models/dflash.py:648, 703-716 (LiLiCorr: quantizable fc)",
    ),
)
