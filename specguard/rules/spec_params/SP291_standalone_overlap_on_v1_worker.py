"""SP291 standalone-overlap-on-v1-worker."""

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
from specguard.rules.hybrid._hybrid import is_mamba_radix_target
from specguard.rules.spec_params._spec_v2 import (
    ENV,
    beta_spec_flag,
    in_release,
    v2_switch,
)

OVERLAP_OFF = "--disable-overlap-schedule"


def keeps_overlap(ctx: CheckContext) -> bool:
    """Whether SGLang leaves the overlap scheduler on for STANDALONE: it only turns it off when neither
    --enable-beta-spec nor SGLANG_ENABLE_SPEC_V2 is on (0.5.3.post2 server_args.py:1185-1189,
    0.5.6.post2 :1754-1758), and for pipeline parallelism or a MambaRadixCache target."""
    if ctx.spec.get("disable_overlap_schedule") or (ctx.spec.get("pp_size") or 1) > 1:
        return False
    if is_mamba_radix_target(ctx) and not ctx.spec.has("--disable-radix-cache"):
        return False
    return beta_spec_flag(ctx) or spec_v2_env_on(ctx)


def spec_v2_env_on(ctx: CheckContext) -> bool:
    """SGLANG_ENABLE_SPEC_V2 on, in a release that reads it (0.5.4.post1 to 0.5.20)."""
    return ctx.spec.env_flag(ENV) and in_release(ctx, env=ENV)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "STANDALONE" or not keeps_overlap(ctx):
        return
    chosen = v2_switch(ctx)
    yield RULE.finding(
        f"STANDALONE with {chosen} in SGLang {ctx.version}: SGLang keeps the overlap scheduler on, but STANDALONE "
        "still gets the V1 StandaloneWorker, which expects a ScheduleBatch; the overlap scheduler hands it a "
        "ModelWorkerBatch, so the first prefill (the server's warm-up) fails with \"AttributeError: "
        "'ModelWorkerBatch' object has no attribute 'get_model_worker_batch'\". "
        f"Add {ctx.flag(OVERLAP_OFF)} (STANDALONE runs on the V2 worker only from 0.5.8)",
        flags=("--speculative-algorithm",),
        fix=fix_of(
            f"add {OVERLAP_OFF}", Applicability.SAFE, Edit(name=OVERLAP_OFF, value=True)
        ),
    )


_STANDALONE = (
    "--model-path",
    "meta-llama/Llama-3.1-8B-Instruct",
    "--speculative-algorithm",
    "STANDALONE",
    "--speculative-draft-model-path",
    "meta-llama/Llama-3.2-1B-Instruct",
    "--speculative-num-steps",
    "4",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "5",
)

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="SP291",
    category=Category.CRASH,
    name="standalone-overlap-on-v1-worker",
    summary="STANDALONE with --enable-beta-spec or SGLANG_ENABLE_SPEC_V2 before 0.5.7: the overlap scheduler drives the V1 worker, which crashes",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm STANDALONE` with `--enable-beta-spec` (0.5.3.post2-0.5.4) or "
        "`SGLANG_ENABLE_SPEC_V2=1` (0.5.4.post1-0.5.6.post2) and without `--disable-overlap-schedule`.",
        why="These releases force the overlap scheduler off for the EAGLE family and STANDALONE only when the SpecV2 "
        "switch is off (0.5.3.post2 server_args.py:1179-1189; 0.5.6.post2 :1745-1758), so STANDALONE keeps it on. The "
        "scheduler still builds the V1 `StandaloneWorker` for STANDALONE (0.5.3.post2 managers/scheduler.py:682-692; "
        "0.5.6.post2 speculative/spec_info.py:276-279, `enable_overlap` is passed to EAGLE only, scheduler.py:349-352), "
        "and under overlap `run_batch` hands the worker a `ModelWorkerBatch` (0.5.6.post2 scheduler.py:1994-2016). The "
        "V1 worker's `forward_batch_generation` takes a `ScheduleBatch` and calls `batch.get_model_worker_batch()` "
        "in `forward_target_extend` (0.5.6.post2 eagle_worker.py:266-281, 354), which a ModelWorkerBatch does not "
        "have: \"AttributeError: 'ModelWorkerBatch' object has no attribute 'get_model_worker_batch'\". 0.5.7 turns "
        "the overlap scheduler off for every algorithm outside its V2 list (server_args.py:2000-2020), and 0.5.8 "
        "puts STANDALONE on the V2 worker (:2140-2160).",
        fix="Add `--disable-overlap-schedule` (what 0.5.7 does by itself), or upgrade to 0.5.8 for the V2 STANDALONE worker.",
        fix_safety="Safe: STANDALONE never ran overlapped in these releases; the flag only makes the V1 path the one that runs.",
    ),
    bad=Example(argv=_STANDALONE, env={ENV: "1"}, sglang_version="0.5.6.post2"),
    good=Example(
        argv=(*_STANDALONE, OVERLAP_OFF), env={ENV: "1"}, sglang_version="0.5.6.post2"
    ),
    sources=(
        "sglang 0.5.3.post1: python/sglang/srt/server_args.py:1093-1101 (no --enable-beta-spec: overlap always off for STANDALONE)",
        "sglang 0.5.3.post2: python/sglang/srt/server_args.py:1179-1189",
        "sglang 0.5.3.post2: python/sglang/srt/managers/scheduler.py:682-692,2185-2214",
        "sglang 0.5.3.post2: python/sglang/srt/speculative/eagle_worker.py:252-267,320-334",
        "sglang 0.5.4.post1: python/sglang/srt/server_args.py:1434-1447 (SGLANG_ENABLE_SPEC_V2 replaces --enable-beta-spec)",
        "sglang 0.5.6.post2: python/sglang/srt/server_args.py:1745-1758",
        "sglang 0.5.6.post2: python/sglang/srt/speculative/spec_info.py:276-279",
        "sglang 0.5.6.post2: python/sglang/srt/managers/scheduler.py:349-352,1994-2016",
        "sglang 0.5.6.post2: python/sglang/srt/speculative/eagle_worker.py:266-281,340-356",
        "sglang 0.5.7: python/sglang/srt/server_args.py:2000-2020",
        "sglang 0.5.8: python/sglang/srt/server_args.py:2140-2160",
    ),
    sglang_versions=">=0.5.3.post2,<=0.5.6.post2",
    log_signatures=(
        r"'ModelWorkerBatch' object has no attribute 'get_model_worker_batch'",
    ),
)
