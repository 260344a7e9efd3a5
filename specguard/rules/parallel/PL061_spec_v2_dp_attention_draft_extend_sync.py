"""PL061 spec-v2-dp-attention-draft-extend-sync."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.spec_params._shared import (
    attn_dp_enabled,
    attn_dp_flags,
    drop_attn_dp,
)
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or not attn_dp_enabled(ctx) or ctx.resolution.disable_overlap_schedule is not False:
        return
    written = " ".join(ctx.flag(f) for f in attn_dp_flags(ctx))
    yield RULE.finding(
        f"The SpecV2 (overlap) EAGLE worker with DP attention ({written}) in SGLang {ctx.env.sglang_version}: its draft "
        "extend declares one logprob token per request instead of steps + 1, so the DP-attention MLP sync pads and "
        "processes only part of the draft tokens and the accept length drops (about 37% in the report). Fixed in 0.5.8; "
        "otherwise run V1 (unset SGLANG_ENABLE_SPEC_V2) or turn DP attention off",
        flags=attn_dp_flags(ctx),
        fix=drop_attn_dp("turn attention DP off"),
    )


RULE = Rule(
    check=check,
    code="PL061",
    category=Category.PERF,
    name="spec-v2-dp-attention-draft-extend-sync",
    summary="SpecV2 EAGLE with DP attention in 0.5.7: the draft extend syncs too few tokens and acceptance drops",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 or NEXTN on the SpecV2 overlap worker (the overlap scheduler stays on) with attention DP, "
        "on SGLang 0.5.7.",
        why="In 0.5.7 `EAGLEWorkerV2._draft_extend_for_decode` builds its `EagleDraftInput` with "
        "`num_tokens_for_logprob_per_batch=1` although each request carries steps + 1 tokens "
        "(speculative/eagle_worker_v2.py:478-486). Under DP attention `LogitsMetadata.compute_dp_attention_metadata` "
        "derives the local token count from it, so the MLP sync handles 4 of 12 tokens and the draft's hidden states "
        "are wrong: issue 16274 measured the accept length falling from 2.35 to 1.48 (TP4 + DP4, GB300). PR 16310 "
        "sets it to steps + 1; 0.5.8 ships it (eagle_worker_v2.py:510-518). 0.5.5-0.5.6 have no such field.",
        fix="Upgrade to 0.5.8, run the V1 worker, or turn attention DP off.",
        fix_safety="Unsafe: dropping attention DP changes the parallel layout.",
    ),
    bad=Example(
        argv=("--model-path", "deepseek-ai/DeepSeek-R1", "--tp", "4", "--dp", "4", "--enable-dp-attention",
              "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "4"),
        env={"SGLANG_ENABLE_SPEC_V2": "1"},
        sglang_version="0.5.7",
    ),
    good=Example(
        argv=("--model-path", "deepseek-ai/DeepSeek-R1", "--tp", "4", "--dp", "4", "--enable-dp-attention",
              "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "4"),
        env={"SGLANG_ENABLE_SPEC_V2": "1"},
        sglang_version="0.5.8",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/16274",
        "https://github.com/sgl-project/sglang/pull/16310",
        "sglang 0.5.7: python/sglang/srt/speculative/eagle_worker_v2.py:478-486",
        "sglang 0.5.8: python/sglang/srt/speculative/eagle_worker_v2.py:510-518",
    ),
    sglang_versions="==0.5.7",
)
