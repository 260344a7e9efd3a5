"""PL502 eagle3-draft-on-full-tp-group-under-dp-attention."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.spec_params._shared import (
    attn_dp_enabled,
    attn_dp_flags,
    drop_attn_dp,
)
from specguard.rules.spec_params._spec_v2 import runs_overlapped_spec_v2
from specguard.sglang_facts.changes import Change

# The EAGLE3 draft is built on the attention-TP group under DP attention: the V1 worker from
# 0.5.4.post3 (sglang#12002), the V2 (overlap) worker from 0.5.8. Before 0.4.8 PL060 reports the
# EAGLE family with DP attention as a whole.
V1_DRAFT_ON_ATTENTION_TP = Change(
    "0.5.4.post3", "0.5.4.post3 speculative/eagle_worker.py:124-129"
)
V2_DRAFT_ON_ATTENTION_TP = Change(
    "0.5.8", "0.5.8 speculative/eagle_worker_v2.py:126-130"
)


def draft_on_full_tp(ctx: CheckContext) -> bool:
    """Whether the worker this launch runs builds its EAGLE3 draft on the whole TP group."""
    if ctx.version < V1_DRAFT_ON_ATTENTION_TP.release:
        return True  # both workers (V2 from 0.5.3.post2) build it under empty_context()
    return ctx.version < V2_DRAFT_ON_ATTENTION_TP.release and runs_overlapped_spec_v2(
        ctx
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "EAGLE3"
        or not attn_dp_enabled(ctx)
        or not draft_on_full_tp(ctx)
    ):
        return
    flags = attn_dp_flags(ctx)
    written = " ".join(ctx.flag(f) for f in flags)
    yield RULE.finding(
        f"EAGLE3 with DP attention ({written}) in SGLang {ctx.version}: the EAGLE3 draft is built and run on the whole "
        "TP group, not the attention-TP group, so its embedding, attention and MLP all-reduces add up partial results "
        "of DP ranks that hold other requests: its drafts are computed from other requests' states, so few are "
        "accepted and the draft steps are mostly wasted (the target's verify still decides every token). "
        "On steps where the DP ranks' token counts differ (prefill batches are not padded) the ranks even enter "
        "these all-reduces with different sizes. 0.5.4.post3 builds it on the attention-TP group (the SpecV2 worker "
        "from 0.5.8): upgrade, or turn attention DP off",
        flags=(*flags, "--speculative-algorithm"),
        fix=drop_attn_dp("turn attention DP off"),
    )


_QWEN3_235B_EAGLE3_DP = (
    "--model-path",
    "Qwen/Qwen3-235B-A22B",
    "--tp-size",
    "8",
    "--dp-size",
    "2",
    "--enable-dp-attention",
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    "lmsys/Qwen3-235B-A22B-EAGLE3",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)

RULE = Rule(
    check=check,
    code="PL502",
    category=Category.PERF,
    name="eagle3-draft-on-full-tp-group-under-dp-attention",
    summary="EAGLE3 with DP attention runs its draft on the whole TP group across DP ranks: useless drafts (0.4.8-0.5.4.post1; SpecV2 to 0.5.7)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm EAGLE3` with attention DP (`--enable-dp-attention`, dp > 1) on SGLang 0.4.8 to "
        "0.5.4.post1, and on the SpecV2 overlap worker up to 0.5.7.",
        why="Under DP attention each DP rank serves its own requests, and only the attention-TP group shares a batch. "
        "The EAGLE worker built its draft under `empty_context()` (0.4.8 speculative/eagle_worker.py:121-125; "
        "0.5.4.post1 :118-123), so the draft's ModelRunner took the whole TP group, and the forward passes patch the "
        "TP group to that same group (`draft_tp_context(self.draft_model_runner.tp_group)`, 0.5.4.post1 :164-169). "
        "The EAGLE3 head's Llama layers split heads and weights by `get_tensor_model_parallel_world_size()` "
        "(models/llama.py:125-129) and its embedding is vocab-parallel (models/llama_eagle3.py:123-127), so each "
        "collective mixes ranks with different requests and token counts. sglang#12002 (0.5.4.post3 "
        "eagle_worker.py:124-129, spec_utils.py:666-670) builds the EAGLE3 draft under "
        "`draft_tp_context(get_attention_tp_group())`; the SpecV2 worker kept `empty_context()` through 0.5.7 "
        "(eagle_worker_v2.py:118) and got the same branch in 0.5.8 (eagle_worker_v2.py:126-130). No release checks "
        "it at argument time. Before 0.4.8, PL060 reports the EAGLE family with DP attention. What the code shows is "
        "the mixing: the drafts are built from other ranks' requests, and the target's verify decides the output. "
        "Prefill batches are not padded across DP ranks (`DpPaddingMode.get_dp_padding_mode` returns SUM_LEN for "
        "extend, 0.5.4.post1 layers/dp_attention.py:58-62), so the ranks then call the draft's all-reduces with "
        "different sizes; what the collective does with that (a hang, or sums of mismatched buffers) is decided in "
        "NCCL or sgl_kernel's custom all-reduce, outside SGLang's code, so the rule claims no crash or hang.",
        fix="Upgrade to 0.5.4.post3 (0.5.8 with the SpecV2 worker), or turn attention DP off.",
        fix_safety="Unsafe: it changes the parallel layout.",
    ),
    bad=Example(argv=_QWEN3_235B_EAGLE3_DP, sglang_version="0.5.4.post1"),
    good=Example(argv=_QWEN3_235B_EAGLE3_DP, sglang_version="0.5.4.post3"),
    sources=(
        "https://github.com/sgl-project/sglang/pull/12002",
        "sglang 0.4.8: python/sglang/srt/speculative/eagle_worker.py:121-125,157-163",
        "sglang 0.5.4.post1: python/sglang/srt/speculative/eagle_worker.py:118-123,164-169",
        "sglang 0.5.4.post1: python/sglang/srt/models/llama.py:125-129",
        "sglang 0.5.4.post1: python/sglang/srt/models/llama_eagle3.py:123-127",
        "sglang 0.5.4.post1: python/sglang/srt/layers/dp_attention.py:58-62",
        "sglang 0.5.4.post3: python/sglang/srt/speculative/eagle_worker.py:124-129",
        "sglang 0.5.4.post3: python/sglang/srt/speculative/spec_utils.py:666-670",
        "sglang 0.5.7: python/sglang/srt/speculative/eagle_worker_v2.py:118",
        "sglang 0.5.8: python/sglang/srt/speculative/eagle_worker_v2.py:126-130",
    ),
    sglang_versions=">=0.4.8,<=0.5.7",
)
