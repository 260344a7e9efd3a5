"""FX493 kv-sharding-mtp-draft-kv-dtype."""

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
from specguard.rules.examples import GLM52_FACTS
from specguard.rules.features.FX185_kv_cache_sharding_with_speculation import (
    GLM5_PREFILL_SHARDED,
    SHARDING,
)
from specguard.rules.features.FX186_kv_cache_sharding_speculation_outside_glm_dsa_mtp import (
    GLM_DSA,
)
from specguard.rules.features.FX186_kv_cache_sharding_speculation_outside_glm_dsa_mtp import (
    unified_gate_refusal as sharding_gate_refusal,
)

DRAFT_KV = "--speculative-draft-kv-cache-dtype"
TARGET_KV = "--kv-cache-dtype"
# The KV dtype names that resolve to the same torch dtype (0.5.23 mem_cache/kv_cache_dtype.py:63-75).
SAME_DTYPE = {"bfloat16": "bf16"}
# The only target KV dtype GLM DSA sharding admits: any other is refused at argument time, before a pool is built
# (0.5.23 arg_groups/kv_shard_hook.py:44-53).
DSA_SHARDED_KV = "fp8_e4m3"
# What SGLang prints when the sharded MTP draft pool is built (0.5.23 mem_cache/kv_cache_configurator.py:1990-2003):
#   "MTP and target KV pools must use the same KV geometry and dtype."


def _typed_dtype(ctx: CheckContext, flag: str) -> str | None:
    """A KV dtype typed as a concrete dtype (not 'auto'), in one spelling per torch dtype; None otherwise."""
    value = ctx.spec.last_value(flag)
    if value is None or value == "auto":
        return None
    return SAME_DTYPE.get(value, value)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm is None
        or not ctx.spec.has(SHARDING)
        or ctx.spec.get("disaggregation_mode")
        != "prefill"  # the only role sharding takes
        or ctx.target is None
        or ctx.target.architecture != GLM_DSA
        or sharding_gate_refusal(ctx) is not None  # FX186's refusal comes first
    ):
        return
    draft = _typed_dtype(ctx, DRAFT_KV)
    if (
        _typed_dtype(ctx, TARGET_KV) != DSA_SHARDED_KV
        or draft is None
        or draft == DSA_SHARDED_KV
    ):
        return
    yield RULE.finding(
        f"{ctx.flag(SHARDING)} with an EAGLE MTP draft in SGLang {ctx.version}: the draft's KV pool shares the "
        f"target's sharded logical space and must hold the target's KV dtype, but {ctx.flag(DRAFT_KV)} "
        f"{ctx.spec.last_value(DRAFT_KV)} differs from {ctx.flag(TARGET_KV)} {ctx.spec.last_value(TARGET_KV)}: the "
        "draft worker raises 'ValueError: MTP and target KV pools must use the same KV geometry and dtype.' when "
        f"its pool is built. Drop {ctx.flag(DRAFT_KV)} (the draft then follows {ctx.flag(TARGET_KV)})",
        flags=(SHARDING, DRAFT_KV),
        fix=fix_of(
            f"drop {DRAFT_KV}", Applicability.UNSAFE, Edit(name=DRAFT_KV, value=None)
        ),
    )


GLM5_SHARDED_MTP = (
    *GLM5_PREFILL_SHARDED,
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "1",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "2",
    TARGET_KV,
    "fp8_e4m3",
)

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="FX493",
    category=Category.START,
    name="kv-sharding-mtp-draft-kv-dtype",
    summary="--enable-kv-cache-sharding with an MTP draft whose --speculative-draft-kv-cache-dtype differs from "
    "--kv-cache-dtype fails when the draft pool is built (0.5.23+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--enable-kv-cache-sharding` with the speculative launch KV sharding admits (EAGLE NextN MTP on GLM "
        "DSA, FX186) and `--speculative-draft-kv-cache-dtype` and `--kv-cache-dtype` both typed as concrete dtypes "
        "that differ (bf16 and bfloat16 are one), the target's being fp8_e4m3, SGLang 0.5.23 or later.",
        why="0.5.23 admits one speculative shape with KV sharding (arg_groups/kv_shard_hook.py:105-119) and builds its "
        "draft pool in the target's sharded logical space (`_build_mtp_kv_shard_pool`, mem_cache/"
        "kv_cache_configurator.py:1922-2003), which raises unless the draft's KV dtype equals the target pool's "
        "(:1990-2003). An explicit draft dtype replaces `--kv-cache-dtype` for the draft worker (mem_cache/"
        "kv_cache_dtype.py:45-49). 0.5.22 refuses every speculative algorithm with KV sharding (kv_shard_hook.py:"
        "66-69; FX185). A draft or target dtype left at `auto` (resolved from the checkpoint's quant config) is not "
        "checked, nor a target dtype other than fp8_e4m3, which GLM DSA sharding refuses at argument time first "
        "(kv_shard_hook.py:44-53).",
        fix=f"Drop `{DRAFT_KV}`, so the draft follows `{TARGET_KV}`.",
        fix_safety="Unsafe: it changes the draft's KV cache dtype and memory.",
    ),
    bad=Example(
        argv=(*GLM5_SHARDED_MTP, DRAFT_KV, "bf16"),
        target=GLM52_FACTS,
        sglang_version="0.5.23",
    ),
    good=Example(
        argv=(*GLM5_SHARDED_MTP, DRAFT_KV, "fp8_e4m3"),
        target=GLM52_FACTS,
        sglang_version="0.5.23",
    ),
    sources=(
        "sglang 0.5.22: python/sglang/srt/arg_groups/kv_shard_hook.py:66-69 (every speculative algorithm refused)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/kv_shard_hook.py:30-53, 105-119, 235",
        "sglang 0.5.23: python/sglang/srt/mem_cache/kv_cache_configurator.py:1922-2003",
        "sglang 0.5.23: python/sglang/srt/mem_cache/kv_cache_dtype.py:34-75",
        "sglang 0.5.23: python/sglang/srt/arg_groups/fields/spec.py:151-163 (the draft dtype's choices)",
    ),
    sglang_versions=">=0.5.23",
    log_signatures=(
        r"MTP and target KV pools must use the same KV geometry and dtype",
    ),
)
