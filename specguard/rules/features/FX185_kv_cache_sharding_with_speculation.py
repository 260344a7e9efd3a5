"""FX185 kv-cache-sharding-with-speculation."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import GLM52_FACTS, GLM52_FP8_TP8

SHARDING = "--enable-kv-cache-sharding"

# A PD prefill worker: the only role KV sharding accepts (kv_shard_hook.py:60-65), so the example shows
# the speculative refusal rather than that one.
GLM5_PREFILL_SHARDED = (
    *GLM52_FP8_TP8,
    "--disaggregation-mode",
    "prefill",
    SHARDING,
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or not ctx.spec.has(SHARDING):
        return
    yield RULE.finding(
        f"{ctx.flag(SHARDING)} with {ctx.algorithm} in SGLang {ctx.version}: KV cache sharding refuses every "
        "speculative algorithm at argument time (ValueError '--enable-kv-cache-sharding does not support "
        f"speculative decoding.'). Drop {ctx.flag(SHARDING)} or the speculative flags (0.5.23 accepts GLM DSA "
        "single-layer NextN MTP with EAGLE and topk 1)",
        flags=(SHARDING, "--speculative-algorithm"),
    )


RULE = Rule(
    check=check,
    code="FX185",
    category=Category.START,
    name="kv-cache-sharding-with-speculation",
    summary="--enable-kv-cache-sharding with any speculative algorithm is refused at argument time (0.5.22)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--enable-kv-cache-sharding` with any `--speculative-algorithm`, SGLang 0.5.22 (0.5.23 narrows the "
        "refusal: FX186).",
        why="0.5.22 added KV cache sharding (a PD prefill rank's pool holds one stripe of every page); "
        "`handle_kv_cache_sharding` raises '--enable-kv-cache-sharding does not support speculative decoding.' "
        "whenever a speculative algorithm is set (kv_shard_hook.py:66-69), in the resolution pipeline "
        "(pipeline.py:272, re-run at :347). 0.5.21 has no such flag; 0.5.23 replaces the refusal with the GLM DSA "
        "single-layer NextN form (kv_shard_hook.py:105-119).",
        fix="Drop `--enable-kv-cache-sharding` or the speculative flags, or move to 0.5.23 with a GLM DSA target.",
        fix_safety="No automatic fix: which feature to give up is the user's choice.",
    ),
    bad=Example(
        argv=(*GLM5_PREFILL_SHARDED, "--speculative-algorithm", "EAGLE"),
        target=GLM52_FACTS,
        sglang_version="0.5.22",
    ),
    good=Example(argv=GLM5_PREFILL_SHARDED, target=GLM52_FACTS, sglang_version="0.5.22"),
    sources=(
        "sglang 0.5.21: python/sglang/srt/arg_groups/fields/parallel.py (no enable_kv_cache_sharding)",
        "sglang 0.5.22: python/sglang/srt/arg_groups/fields/parallel.py:184 (the flag)",
        "sglang 0.5.22: python/sglang/srt/arg_groups/kv_shard_hook.py:48,60-69",
        "sglang 0.5.22: python/sglang/srt/arg_groups/pipeline.py:272,347",
        "sglang 0.5.23: python/sglang/srt/arg_groups/kv_shard_hook.py:105-119 (narrowed: FX186)",
    ),
    sglang_versions="==0.5.22",
    log_signatures=(
        r"--enable-kv-cache-sharding does not support speculative decoding",
    ),
)
