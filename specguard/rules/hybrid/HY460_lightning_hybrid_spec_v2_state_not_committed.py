"""HY460 lightning-hybrid-spec-v2-state-not-committed."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Fix, Severity
from specguard.rules.attention.backends import effective_topk
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.hybrid.HY313_lightning_hybrid_tree_draft import (
    BAILING_HYBRID_FACTS,
    LIGHTNING_MODEL_TYPE,
)
from specguard.rules.spec_params._spec_v2 import (
    ENV,
    back_to_v1,
    runs_overlapped_spec_v2,
    v2_switch,
)

MULTI_LAYER = "--enable-multi-layer-eagle"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.target is None
        or ctx.target.model_type != LIGHTNING_MODEL_TYPE
        or ctx.spec.has(MULTI_LAYER)
    ):
        return
    if not runs_overlapped_spec_v2(ctx):
        return
    topk = effective_topk(ctx)
    if topk is not None and topk > 1:
        return  # a tree: HY313 reports this launch
    yield RULE.finding(
        f"{ctx.algorithm} on a bailing_hybrid target (lightning linear attention) on the SpecV2 worker "
        f"({v2_switch(ctx)}) in SGLang {ctx.version}: target verify writes each draft step's linear-attention "
        "state aside, and only the V1 worker copies the accepted step's state back for a lightning target, so on "
        "V2 the recurrent state never takes the accepted tokens and every later token is computed from a wrong "
        f"state (wrong output, low acceptance; fixed in 0.5.13). {_v1_advice(ctx)}",
        flags=("--model-path", "--speculative-algorithm"),
        fix=_v1_fix(ctx),
    )


def _v1_advice(ctx: CheckContext) -> str:
    if ctx.resolution.spec_v2_env_overrides_overlap_flag:
        return f"Unset {ENV} to run the V1 worker (this release turns the overlap scheduler back on while it is set)"
    return f"Add {ctx.flag('--disable-overlap-schedule')} to run the V1 worker"


def _v1_fix(ctx: CheckContext) -> Fix:
    """The V1 worker: --disable-overlap-schedule, unless the resolution says SGLANG_ENABLE_SPEC_V2 sets it back
    (0.5.9-0.5.10.post1 here), where the variable has to go."""
    if ctx.resolution.spec_v2_env_overrides_overlap_flag:
        return back_to_v1(ctx)
    return set_flags(
        "run the V1 worker (overlap scheduler off)",
        Applicability.UNSAFE,
        disable_overlap_schedule=True,
    )


BAILING_HYBRID_MTP_CHAIN = (
    "--model-path",
    "/ckpt/bailing-v2.5-hybrid",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)

RULE = Rule(
    check=check,
    code="HY460",
    category=Category.WRONG_OUTPUT,
    name="lightning-hybrid-spec-v2-state-not-committed",
    summary="A bailing_hybrid (lightning linear attention) target on the SpecV2 worker never commits the accepted "
    "recurrent state after verify (0.5.9 to 0.5.12.post1)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN, MTP) or STANDALONE drafting a chain on a target whose config.json `model_type` is "
        "`bailing_hybrid` (BailingMoeV2_5ForCausalLM), run on the SpecV2 worker with the overlap scheduler on "
        "(`SGLANG_ENABLE_SPEC_V2=1` in 0.5.9-0.5.10.post1; the default from 0.5.11 while the topk is 1), "
        "SGLang 0.5.9 to 0.5.12.post1. Not with `--enable-multi-layer-eagle` (another worker).",
        why="A bailing_hybrid target runs the lightning linear-attention backend, whose target verify hands the "
        "per-step states to `temp_cache` (`mamba_cache_params.intermediate_ssm`) instead of the live state (0.5.9 "
        "layers/attention/hybrid_linear_attn_backend.py:1442-1465; 0.5.12.post1 "
        "layers/attention/linear/lightning_backend.py:306-330). The V1 worker then copies the accepted step back "
        "for GDN, mamba2 and lightning targets (0.5.9 speculative/eagle_worker.py:766; 0.5.12.post1 :1009-1016). "
        "`EAGLEWorkerV2.verify` has no such copy in 0.5.9 and, from 0.5.10, calls `_mamba_verify_update` only for "
        "GDN and mamba2 targets (0.5.10 eagle_worker_v2.py:829-836; 0.5.12.post1 :1077-1084), so the lightning "
        "state never takes the accepted tokens. SGLang picks `EAGLEWorkerV2` (and `StandaloneWorkerV2`, its "
        "subclass) whenever the overlap scheduler is on (0.5.9 speculative/spec_info.py:59-92; 0.5.12.post1 "
        ":122-170). 0.5.13 adds `hybrid_lightning_config` to the V2 condition (eagle_worker_v2.py:1274-1279). "
        "0.5.8.post1 has no bailing_hybrid model. A tree (topk > 1) is rule HY313's.",
        fix="Run the V1 worker: `--disable-overlap-schedule` from 0.5.11; before, unset `SGLANG_ENABLE_SPEC_V2`, "
        "which makes 0.5.9-0.5.10.post1 turn the overlap scheduler back on (or upgrade to 0.5.13).",
        fix_safety="Unsafe: the overlap scheduler goes off (slower), though the output becomes right.",
    ),
    bad=Example(
        argv=BAILING_HYBRID_MTP_CHAIN,
        target=BAILING_HYBRID_FACTS,
        gpu="H200",
        sglang_version="0.5.12.post1",
    ),
    good=Example(
        argv=BAILING_HYBRID_MTP_CHAIN,
        target=BAILING_HYBRID_FACTS,
        gpu="H200",
        sglang_version="0.5.13",
    ),
    sources=(
        "sglang 0.5.8.post1: python/sglang/srt (no bailing_hybrid config, no lightning backend)",
        (
            "sglang 0.5.9: python/sglang/srt/speculative/eagle_worker.py:766; speculative/eagle_worker_v2.py (no mamba "
            "or lightning state update); speculative/spec_info.py:59-92; layers/attention/hybrid_linear_attn_backend.py:1442-1465"
        ),
        "sglang 0.5.10: python/sglang/srt/speculative/eagle_worker_v2.py:829-836",
        (
            "sglang 0.5.12.post1: python/sglang/srt/speculative/eagle_worker_v2.py:1077-1084; speculative/eagle_worker.py:1009-1016; "
            "speculative/spec_info.py:122-170; layers/attention/linear/lightning_backend.py:306-330; server_args.py:3745-3772"
        ),
        "sglang 0.5.13: python/sglang/srt/speculative/eagle_worker_v2.py:1274-1279",
    ),
    sglang_versions=">=0.5.9,<0.5.13",
)
