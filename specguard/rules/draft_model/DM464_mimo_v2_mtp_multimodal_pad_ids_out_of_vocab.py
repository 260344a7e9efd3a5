"""DM464 mimo-v2-mtp-multimodal-pad-ids-out-of-vocab."""

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
from specguard.rules.spec_params._shared import attn_dp_size

# The MiMo-V2 architecture that builds a vision and an audio encoder when its config has both sections
# (0.5.11 configs/model_config.py:46 MIMO_V2_MULTIMODAL_ARCHS; models/mimo_v2.py:1038-1040).
MULTIMODAL_MIMO_V2 = "MiMoV2ForCausalLM"
ENCODER_SECTIONS = frozenset({"vision_config", "audio_config"})
ADAPTIVE_ENCODER_DISPATCH = "--enable-adaptive-dispatch-to-encoder"


def embedding_tp_size(ctx: CheckContext) -> int:
    """The draft embedding's shard count: the attention-TP group under DP attention, else the TP group
    (0.5.11 models/mimo_v2_nextn.py:176-181; layers/vocab_parallel_embedding.py:219-229)."""
    tp = ctx.spec.get("tp_size") or 1
    dp = attn_dp_size(ctx)
    return max(tp // dp, 1) if dp > 1 else tp


def draft_reads_raw_pad_ids(ctx: CheckContext) -> bool:
    """Whether the draft extend sees the pad ids unclamped. The target's embedding clamps the batch's input-id tensor
    in place (0.5.11 and 0.5.12.post1 managers/mm_utils.py:850), the very tensor the draft extend reads next, unless DP
    attention pads a copy for the target first (0.5.11 model_executor/model_runner.py:3232, forward_batch_info.py:939) or the
    adaptive encoder dispatch clamps a copy (mm_utils.py:938)."""
    return attn_dp_size(ctx) > 1 or ctx.spec.has(ADAPTIVE_ENCODER_DISPATCH)


def check(ctx: CheckContext) -> Iterator[Finding]:
    target = ctx.target
    if (
        ctx.algorithm != "EAGLE"
        or target is None
        or target.architecture != MULTIMODAL_MIMO_V2
    ):
        return
    if not ctx.drafts_from_target_checkpoint or not ENCODER_SECTIONS <= set(
        target.encoder_configs or ()
    ):
        return
    if embedding_tp_size(ctx) != 1:
        return  # a sharded embedding masks ids outside its range to row 0
    if not draft_reads_raw_pad_ids(ctx):
        return  # the target has already clamped the ids the draft reads
    yield RULE.finding(
        f"a multimodal MiMo-V2 target (vision_config and audio_config) drafting from its own MTP layer in SGLang "
        f"{ctx.version}, with the draft's embedding unsharded (attention TP 1): the prompt of an image, video or "
        "audio request carries pad ids of 1,000,000 and more in place of the media tokens; the target clamps only "
        f"its own copy of them ({_copy_reason(ctx)}), and the MTP draft looks the raw ids up in its embedding "
        "directly, an out-of-bounds gather that crashes the server on the first such "
        "request (text-only requests are unaffected). Fixed in 0.5.13 (the draft clamps them); otherwise serve "
        "text only, or speculate without the MTP draft",
        flags=("--model-path", "--speculative-algorithm"),
    )


def _copy_reason(ctx: CheckContext) -> str:
    if attn_dp_size(ctx) > 1:
        return "DP attention pads the ids into a new tensor"
    return f"{ADAPTIVE_ENCODER_DISPATCH} clamps a copy"


MIMO_V25_MTP = (
    "--model-path",
    "/ckpt/mimo-v2.5",
    "--tp",
    "8",
    "--dp",
    "8",
    "--enable-dp-attention",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)
MIMO_V25 = {
    "architectures": (MULTIMODAL_MIMO_V2,),
    "num_nextn_predict_layers": 1,
    "encoder_configs": ("vision_config", "audio_config"),
}

RULE = Rule(
    check=check,
    code="DM464",
    category=Category.CRASH,
    name="mimo-v2-mtp-multimodal-pad-ids-out-of-vocab",
    summary="A multimodal MiMo-V2 target's MTP draft embeds media pad ids out of vocabulary and crashes on the first "
    "image or audio request when its embedding is unsharded (0.5.11 to 0.5.12.post1)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE/NEXTN drafting from the target's own MTP layer on a MiMoV2ForCausalLM target whose config.json has "
        "both `vision_config` and `audio_config` (the multimodal MiMo-V2), with the draft's embedding on one shard "
        "(DP attention leaving attention TP 1, or `--tp 1` with `--enable-adaptive-dispatch-to-encoder`), SGLang 0.5.11 "
        "to 0.5.12.post1. A warning: only media requests crash.",
        why="Multimodal requests replace media tokens by pad ids `MM_PAD_SHIFT_VALUE + hash` (MM_PAD_SHIFT_VALUE = "
        "1_000_000, 0.5.12.post1 managers/schedule_batch.py:112), which only the target's multimodal embedding "
        "routine understands. The MiMoV2MTP draft (the target's architecture rewritten for the draft, "
        "configs/model_config.py:370-371) embeds its input ids directly (0.5.11 and 0.5.12.post1 "
        "models/mimo_v2_nextn.py:203-204). Its VocabParallelEmbedding masks ids outside its range only when it is "
        "sharded (layers/vocab_parallel_embedding.py:471-483, the attention-TP group under DP attention, :219-229); "
        "unsharded, the gather runs out of bounds. It gets such ids only when the target clamped a copy: "
        "`embed_mm_inputs` clamps the batch's input-id tensor in place (managers/mm_utils.py:850) and the draft extend "
        "reads that same tensor, but under DP attention `prepare_mlp_sync_batch` first pads the target's ids into a "
        "new tensor (0.5.11 model_executor/model_runner.py:3232, forward_batch_info.py:939) and the adaptive encoder "
        "dispatch clamps a copy (mm_utils.py:938). Plain `--tp 1` without either is not judged (the draft reads "
        "clamped ids). 0.5.13 clamps the ids to the vocabulary first ('Multimodal pad "
        "sentinels (MM_PAD_SHIFT_VALUE + hash) sit out of vocab', mimo_v2_nextn.py:204-209). 0.5.10 has no "
        "MiMoV2ForCausalLM (models/mimo_v2_flash.py only).",
        fix="Upgrade to 0.5.13, or serve text only. No automatic fix.",
        fix_safety="No fix.",
    ),
    bad=Example(
        argv=MIMO_V25_MTP, target=MIMO_V25, gpu="H200", sglang_version="0.5.12.post1"
    ),
    good=Example(
        argv=MIMO_V25_MTP, target=MIMO_V25, gpu="H200", sglang_version="0.5.13"
    ),
    sources=(
        "sglang 0.5.10: python/sglang/srt/models (mimo_v2_flash.py, mimo_v2_flash_nextn.py; no MiMoV2ForCausalLM)",
        "sglang 0.5.11: python/sglang/srt/models/mimo_v2.py:1038-1040; models/mimo_v2_nextn.py:176-181,203-204",
        "sglang 0.5.11: python/sglang/srt/configs/model_config.py:42-46,370-371; layers/vocab_parallel_embedding.py:219-229,471-483",
        "sglang 0.5.12.post1: python/sglang/srt/models/mimo_v2_nextn.py:203-204; managers/schedule_batch.py:112",
        "sglang 0.5.12.post1: python/sglang/srt/managers/mm_utils.py:850,938,1038-1060; model_executor/forward_batch_info.py:452,939; model_executor/model_runner.py:3420",
        "sglang 0.5.13: python/sglang/srt/models/mimo_v2_nextn.py:203-209",
    ),
    sglang_versions=">=0.5.11,<0.5.13",
)
