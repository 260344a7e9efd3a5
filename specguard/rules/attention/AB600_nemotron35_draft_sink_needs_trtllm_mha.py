"""AB600 nemotron35-draft-sink-needs-trtllm-mha."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)

DRAFT_BACKEND = "--speculative-draft-attention-backend"
SINK_BACKEND = "trtllm_mha"
# What SGLang raises while building the draft (0.5.19 models/dflash.py:234-238; 0.5.23 :300-304):
# "Nemotron 3.5 DSpark attention sinks require --speculative-draft-attention-backend trtllm_mha, got 'fa3'."


def _trtllm_kept_for_dflash(ctx: CheckContext) -> bool | None:
    """Whether DFLASH keeps a typed trtllm_mha draft backend: only for a draft whose layers are all sliding or
    that is explicitly causal, else it falls back (0.5.19 arg_groups/speculative_hook.py:567-597); None: unknown."""
    draft = ctx.draft
    if draft is None:
        return None
    if draft.is_causal is True:
        return True
    if draft.layer_types is None or draft.num_hidden_layers is None:
        return None
    return len(draft.layer_types) == draft.num_hidden_layers and set(
        draft.layer_types
    ) == {"sliding_attention"}


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.draft
    if (
        not (ctx.algorithm == "DFLASH" or ctx.algorithm == "DSPARK")
        or draft is None
        or not draft.nemotron_35_draft_layout
        or draft.attention_sink_bias is not True
    ):
        return
    # Only a typed draft backend is judged: an unset one is resolved from the target's backend (DFLASH) or by
    # model overrides on Blackwell (DSPARK), which specguard does not predict here.
    typed = ctx.spec.get("speculative_draft_attention_backend")
    if typed is None:
        return
    if typed == SINK_BACKEND:
        if ctx.algorithm == "DSPARK" or _trtllm_kept_for_dflash(ctx) is not False:
            return
        got = f"{SINK_BACKEND} (which DFLASH replaces by its fallback for a draft that is neither all sliding nor causal)"
    else:
        got = typed
    yield RULE.finding(
        f"The {ctx.algorithm} draft has the Nemotron 3.5 layout with attention_sink_bias true, whose sink SGLang "
        f"{ctx.version} builds only on the trtllm_mha draft backend; the draft backend here is {got}, so building "
        'the draft raises "ValueError: Nemotron 3.5 DSpark attention sinks require '
        '--speculative-draft-attention-backend trtllm_mha" after the target has loaded. '
        f"Use {ctx.flag(DRAFT_BACKEND)} {SINK_BACKEND}",
        flags=(DRAFT_BACKEND, "--speculative-algorithm"),
        fix=None
        if typed == SINK_BACKEND
        else fix_of(
            f"{DRAFT_BACKEND} {SINK_BACKEND}",
            Applicability.UNSAFE,
            Edit(name=DRAFT_BACKEND, value=SINK_BACKEND),
        ),
    )


_NEMOTRON_35_DRAFT = {
    "architectures": ("DFlashDraftModel",),
    "nemotron_35_draft_layout": True,
    "attention_sink_bias": True,
}
_LAUNCH = (
    "--model-path",
    "nvidia/Nemotron-3.5",
    "--speculative-algorithm",
    "DFLASH",
    "--speculative-draft-model-path",
    "d",
)

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB600",
    category=Category.START,
    name="nemotron35-draft-sink-needs-trtllm-mha",
    summary="A Nemotron 3.5 layout DFLASH/DSPARK draft with attention_sink_bias on a draft backend other than "
    "trtllm_mha fails to build (0.5.19+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.SOMETIMES,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` or `DSPARK` with a draft whose config.json has the Nemotron 3.5 "
        "layout (`architectures` DFlashDraftModel or Qwen3DSparkModel, `has_embed_tokens` true, no `has_lm_head`, "
        "`quantization_config.quant_algo` W4A16_NVFP4, top-level `eagle_aux_hidden_state_layer_ids` each one above "
        "the `target_layer_ids`, `sample_from_anchor` false) and the top-level `attention_sink_bias` true, with "
        "`--speculative-draft-attention-backend` set to anything but trtllm_mha (or, under DFLASH, trtllm_mha for "
        "a draft that is neither all sliding-attention layers nor `is_causal`), SGLang 0.5.19 or later.",
        why="From 0.5.19 `DFlashAttention.__init__` builds a per-head attention-sink parameter for such a draft and "
        "raises `ValueError: Nemotron 3.5 DSpark attention sinks require --speculative-draft-attention-backend "
        "trtllm_mha, got X.` unless the resolved draft backend is trtllm_mha (0.5.19 models/dflash.py:230-240; the "
        "layout test speculative/dflash_utils.py:469-505; unchanged in 0.5.23 models/dflash.py:295-305, "
        "dflash_utils.py:461-497). DSPARK drafts are DFlashDraftModel subclasses (0.5.19 models/dspark.py:854). "
        "DFLASH resolves the draft backend itself: a typed trtllm_mha is kept only for an all-sliding or causal "
        "draft and otherwise replaced by flashinfer/triton (fa4 on SM100 in 0.5.23) (0.5.19 "
        "arg_groups/speculative_hook.py:541-613; 0.5.23 :930-987); other typed backends never become trtllm_mha. "
        "0.5.18 has no `is_nemotron_35_draft_config` and builds no such sink (0.5.18 speculative/dflash_utils.py). "
        "An unset draft backend is not judged: DFLASH inherits the target's backend and model overrides may pick "
        "trtllm_mha on Blackwell (0.5.19 arg_groups/model_overrides/nemotron_h.py:104-120).",
        fix="Set `--speculative-draft-attention-backend trtllm_mha` (a GPU trtllm_mha runs on).",
        fix_safety="Unsafe: it changes the draft's attention kernels; offered only when another backend was typed.",
    ),
    bad=Example(
        argv=(*_LAUNCH, DRAFT_BACKEND, "flashinfer"),
        draft=_NEMOTRON_35_DRAFT,
        gpu="B200",
        sglang_version="0.5.19",
    ),
    good=Example(
        argv=(*_LAUNCH, DRAFT_BACKEND, "flashinfer"),
        draft={**_NEMOTRON_35_DRAFT, "attention_sink_bias": False},
        gpu="B200",
        sglang_version="0.5.19",
    ),
    sources=(
        "sglang 0.5.18: python/sglang/srt/speculative/dflash_utils.py (no is_nemotron_35_draft_config), models/dflash.py (no top-level sink)",
        "sglang 0.5.19: python/sglang/srt/models/dflash.py:230-240",
        "sglang 0.5.19: python/sglang/srt/speculative/dflash_utils.py:469-505",
        "sglang 0.5.19: python/sglang/srt/arg_groups/speculative_hook.py:541-613",
        "sglang 0.5.19: python/sglang/srt/models/dspark.py:854",
        "sglang 0.5.23: python/sglang/srt/models/dflash.py:295-305",
        "sglang 0.5.23: python/sglang/srt/speculative/dflash_utils.py:461-497",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:930-987",
    ),
    sglang_versions=">=0.5.19",
    log_signatures=(
        r"Nemotron 3\.5 DSpark attention sinks require --speculative-draft-attention-backend trtllm_mha",
    ),
)
