"""PL290 spec-v2-dp-attention-idle-batch."""

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
from specguard.rules.spec_params._shared import attn_dp_enabled, attn_dp_flags
from specguard.rules.spec_params._spec_v2 import (
    ENV,
    back_to_v1,
    runs_overlapped_spec_v2,
    v2_switch,
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not attn_dp_enabled(ctx) or not runs_overlapped_spec_v2(ctx):
        return
    dp = " ".join(ctx.flag(f) for f in attn_dp_flags(ctx))
    chosen = v2_switch(ctx)
    yield RULE.finding(
        f"{ctx.algorithm} on the SpecV2 overlap worker ({chosen}) with DP attention ({dp}) in SGLang {ctx.version}: "
        "the V2 worker sends the IDLE batch of a DP rank without requests down its prefill path, whose draft extend "
        "iterates the batch's extend lengths (None for an idle batch), so the scheduler dies with \"TypeError: "
        "'NoneType' object is not iterable\" as soon as one rank has work and another none. Fixed in 0.5.5.post3; "
        "otherwise run the V1 worker or turn attention DP off",
        flags=(*attn_dp_flags(ctx), "--speculative-algorithm"),
        fix=back_to_v1(ctx),
    )


_DP_EAGLE = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3",
    "--tp",
    "8",
    "--dp",
    "8",
    "--enable-dp-attention",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="PL290",
    category=Category.CRASH,
    name="spec-v2-dp-attention-idle-batch",
    summary="EAGLE on the SpecV2 overlap worker with DP attention before 0.5.5.post3: an idle DP rank crashes the draft extend",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 or NEXTN on the SpecV2 worker with the overlap scheduler on (`--enable-beta-spec` in 0.5.3.post2-0.5.4, "
        "`SGLANG_ENABLE_SPEC_V2=1` from 0.5.5) together with attention DP wider than 1, up to SGLang 0.5.5.post2.",
        why="Under DP attention a rank without requests runs an IDLE batch so the MLP sync can go on. Up to 0.5.5.post2 "
        "`EAGLEWorkerV2.forward_batch_generation` treats every batch that is not DECODE as a target prefill "
        "(speculative/eagle_worker_v2.py:553-577; 0.5.4 :546-570; 0.5.3.post2 :57-81) and then runs the draft extend, which "
        "loops `for i, extend_len in enumerate(batch.extend_seq_lens):` (:412; 0.5.4 :407; 0.5.3.post2 :385); `get_model_worker_batch` sets it to None for an idle "
        "batch (managers/schedule_batch.py:1803-1804), so the loop raises \"TypeError: 'NoneType' object is not "
        'iterable" in the scheduler. 0.5.5.post3 routes only extend batches there, builds '
        "`EagleDraftInput.create_idle_input` for the others (eagle_worker_v2.py:595-632) and skips idle batches in "
        "the draft extend (:436).",
        fix="Upgrade to 0.5.5.post3 or later, run the V1 worker (drop `--enable-beta-spec` / unset "
        "`SGLANG_ENABLE_SPEC_V2`), or turn attention DP off.",
        fix_safety="Unsafe: the V1 worker runs without the overlap scheduler (slower), which is a different code path.",
    ),
    bad=Example(argv=_DP_EAGLE, env={ENV: "1"}, sglang_version="0.5.5.post2"),
    good=Example(argv=_DP_EAGLE, env={ENV: "1"}, sglang_version="0.5.5.post3"),
    sources=(
        "sglang 0.5.3.post1: python/sglang/srt/server_args.py:1093-1101 (no --enable-beta-spec: the EAGLE family always runs V1)",
        "sglang 0.5.3.post2: python/sglang/srt/speculative/eagle_worker_v2.py:57-81,385",
        "sglang 0.5.4: python/sglang/srt/speculative/eagle_worker_v2.py:407,546-570",
        "sglang 0.5.4: python/sglang/srt/server_args.py:1296-1306",
        "sglang 0.5.4: python/sglang/srt/managers/scheduler.py:564",
        "sglang 0.5.5.post2: python/sglang/srt/speculative/eagle_worker_v2.py:412,553-577",
        "sglang 0.5.5.post2: python/sglang/srt/managers/schedule_batch.py:1800-1804",
        "sglang 0.5.5.post3: python/sglang/srt/speculative/eagle_worker_v2.py:436,595-632",
    ),
    sglang_versions=">=0.5.3.post2,<=0.5.5.post2",
    # The traceback's frame line: the TypeError alone is too common to name this cause.
    log_signatures=(r"for i, extend_len in enumerate\(batch\.extend_seq_lens\)",),
)
