"""FX186 kv-cache-sharding-speculation-outside-glm-dsa-mtp."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import GLM52_FACTS
from specguard.rules.features.FX185_kv_cache_sharding_with_speculation import (
    GLM5_PREFILL_SHARDED,
    SHARDING,
)

MULTI_LAYER = "--enable-multi-layer-eagle"
GLM_DSA = "GlmMoeDsaForCausalLM"


def unified_gate_refusal(ctx: CheckContext) -> str | None:
    """Why the 0.5.23 gate refuses this launch; None when it passes or when a config fact it needs is unknown.

    The gate's first run precedes handle_speculative_decoding (pipeline.py:284 vs :306), so it sees the
    algorithm as written (NEXTN is not EAGLE yet) and the topk as written (unset reads None, not 1).
    """
    written = ctx.spec.get("speculative_algorithm")
    if written != "EAGLE":
        return f"the gate runs before SGLang aliases the algorithm and wants EAGLE as written, not {written}"
    topk = ctx.spec.get("speculative_eagle_topk")
    if topk is None:
        return f"{ctx.flag('--speculative-eagle-topk')} is unset, which the gate reads as None, not 1"
    if topk != 1:
        return f"{ctx.flag('--speculative-eagle-topk')} is {topk}, not 1"
    if ctx.spec.has(MULTI_LAYER):
        return f"{ctx.flag(MULTI_LAYER)} is set"
    target = ctx.target
    if target is None:
        return None
    if target.architecture is not None and target.architecture != GLM_DSA:
        return f"the target is {target.architecture}, not {GLM_DSA}"
    if (
        target.num_nextn_predict_layers is not None
        and target.num_nextn_predict_layers != 1
    ):
        return f"the target has num_nextn_predict_layers {target.num_nextn_predict_layers}, not 1"
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or not ctx.spec.has(SHARDING):
        return
    reason = unified_gate_refusal(ctx)
    if reason is None:
        return
    yield RULE.finding(
        f"{ctx.flag(SHARDING)} with {ctx.spec.get('speculative_algorithm')} in SGLang {ctx.version}: {reason}, so the KV-sharding gate "
        "raises at argument time (ValueError 'KV sharding supports speculative decoding only for GLM DSA "
        f"single-layer NextN MTP with EAGLE and topk=1.'). Speculate with {ctx.flag(SHARDING)} only on a {GLM_DSA} "
        f"target with one NextN layer, written {ctx.flag('--speculative-algorithm')} EAGLE "
        f"{ctx.flag('--speculative-eagle-topk')} 1 without {ctx.flag(MULTI_LAYER)}; otherwise drop one of the two",
        flags=(SHARDING, "--speculative-algorithm"),
    )


GLM5_MTP_CHAIN = (
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)

RULE = Rule(
    check=check,
    code="FX186",
    category=Category.START,
    name="kv-cache-sharding-speculation-outside-glm-dsa-mtp",
    summary="--enable-kv-cache-sharding speculates only for GLM DSA single-layer NextN written as EAGLE with "
    "topk 1 (0.5.23+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--enable-kv-cache-sharding` with a `--speculative-algorithm`, SGLang 0.5.23 or later, unless the "
        "launch writes `--speculative-algorithm EAGLE` and `--speculative-eagle-topk 1`, has no "
        "`--enable-multi-layer-eagle`, and the target is a GlmMoeDsaForCausalLM with num_nextn_predict_layers 1 "
        "(0.5.22 refuses every algorithm: FX185). An unknown target config keeps it quiet.",
        why="0.5.23's `handle_kv_cache_sharding` raises 'KV sharding supports speculative decoding only for GLM "
        "DSA single-layer NextN MTP with EAGLE and topk=1.' when the algorithm is not 'EAGLE', "
        "architectures[0] is not GlmMoeDsaForCausalLM, num_nextn_predict_layers is not 1, topk is not 1 or "
        "multi-layer EAGLE is on (kv_shard_hook.py:105-119). The hook first runs before "
        "handle_speculative_decoding (pipeline.py:284; the speculative hook at :306 uppercases the algorithm, "
        "aliases NEXTN to EAGLE and fills topk), so a launch written NEXTN, or with topk left unset, is refused "
        "too; the KV pool builder repeats the check (mem_cache/kv_cache_configurator.py, "
        "`_build_mtp_kv_shard_pool`).",
        fix="On a GLM DSA target write `--speculative-algorithm EAGLE --speculative-eagle-topk 1` without "
        "`--enable-multi-layer-eagle`; otherwise drop `--enable-kv-cache-sharding` or the speculative flags.",
        fix_safety="No automatic fix: the fix depends on the target and on which feature the user keeps.",
    ),
    bad=Example(
        argv=(
            *GLM5_PREFILL_SHARDED,
            "--speculative-algorithm",
            "NEXTN",
            *GLM5_MTP_CHAIN,
        ),
        target=GLM52_FACTS,
        sglang_version="0.5.23",
    ),
    good=Example(
        argv=(
            *GLM5_PREFILL_SHARDED,
            "--speculative-algorithm",
            "EAGLE",
            *GLM5_MTP_CHAIN,
        ),
        target=GLM52_FACTS,
        sglang_version="0.5.23",
    ),
    sources=(
        "sglang 0.5.22: python/sglang/srt/arg_groups/kv_shard_hook.py:66-69 (every algorithm refused: FX185)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/kv_shard_hook.py:87,105-119",
        "sglang 0.5.23: python/sglang/srt/arg_groups/pipeline.py:284,306,371",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:109-110,126-160 (NEXTN aliased after the gate)",
    ),
    sglang_versions=">=0.5.23",
    log_signatures=(
        r"KV sharding supports speculative decoding only for GLM DSA single-layer NextN MTP with EAGLE and topk=1",
    ),
)
