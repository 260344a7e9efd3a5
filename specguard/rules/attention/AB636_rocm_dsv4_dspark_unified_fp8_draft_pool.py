"""AB636 rocm-dsv4-dspark-unified-fp8-draft-pool."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.AB472_rocm_dsv4_dspark_unified_kv_draft_write import (
    BACKEND,
    DSV4_DSPARK_DRAFT,
    UNIFIED_KV,
)
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.draft_model._common import draft_config
from specguard.rules.examples import DEEPSEEK_V4_FLASH_DSPARK
from specguard.sglang_facts.architectures import DSV4_ARCHITECTURES

FP8 = "SGLANG_DSV4_UNIFIED_KV_FP8"
# The known GPUs is_gfx95_supported() accepts: AMD CDNA4, gfx950. Elsewhere (gfx94x: MI300X, MI325X) the
# variable falls back to the bf16 pool with a warning (0.5.20 sglang/kernels/ops/attention/dsv4/unified_kv_kernels/
# env_gate.py:18-35).
GFX95_GPUS = frozenset({"MI350X", "MI355X"})
# SGLang says (0.5.20 sglang/kernels/ops/attention/dsv4/unified_kv_kernels/runtime.py:206):
# assert kv.is_contiguous() and kv.dtype == unified_kv.dtype


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "DSPARK"
        or ctx.spec.env_value(BACKEND) != UNIFIED_KV
        or not ctx.spec.env_flag(FP8)
    ):
        return
    gpu = ctx.env.gpu
    if gpu is None or gpu.name not in GFX95_GPUS:
        return
    draft = draft_config(ctx)
    if draft is None or draft.architecture not in DSV4_ARCHITECTURES:
        return  # only a DeepSeek-V4 draft gets the DeepSeek-V4 KV pool
    yield RULE.finding(
        f"DSPARK with a DeepSeek-V4 draft on {gpu.name} with {BACKEND}={UNIFIED_KV} and {FP8}=1 in SGLang "
        f"{ctx.version}: every DeepSeek-V4 KV pool, the draft's included, takes the FP8 unified layout, but the "
        "DSpark draft scatters its bf16 KV (its attention store and the injected target hidden states) with a "
        "kernel that asserts the pool holds bf16, so the first draft KV write raises AssertionError. Unset "
        f"{FP8} (the bf16 unified pool), or use SGLang 0.5.21, which keeps the DSpark draft pool bf16",
        flags=("--speculative-algorithm",),
        fix=fix_of(
            f"unset {FP8}",
            Applicability.UNSAFE,
            Edit(target="env", name=FP8, value=None),
        ),
    )


_ENV = {BACKEND: UNIFIED_KV, FP8: "1"}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB636",
    category=Category.CRASH,
    name="rocm-dsv4-dspark-unified-fp8-draft-pool",
    summary="DSPARK with a DeepSeek-V4 draft on a gfx950 GPU with the FP8 unified KV layout fails at the first "
    "draft KV write (0.5.20)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` on a known gfx950 GPU (MI350X, MI355X) with "
        "`SGLANG_HACK_FLASHMLA_BACKEND=unified_kv_triton`, `SGLANG_DSV4_UNIFIED_KV_FP8` true and a draft whose "
        "config.json names a DeepSeek-V4 architecture (the target's own config.json when the draft comes from "
        "the target checkpoint), SGLang 0.5.20.",
        why="0.5.20 adds `SGLANG_DSV4_UNIFIED_KV_FP8` (environ.py:1465; absent in 0.5.19), honoured on HIP with "
        "the unified layout on gfx95 only (sglang/kernels/ops/attention/dsv4/unified_kv_kernels/env_gate.py:"
        "18-35). `DeepSeekV4TokenToKVPool` reads it for every pool, the DSpark draft's included "
        "(mem_cache/deepseek_v4_memory_pool.py:710-717, :801), and allocates the unified buffer as FP8 nope rows "
        "beside a bf16 rope pool (:590-610); `get_unified_kv` returns the FP8 half (:628-629, :841-845). The "
        "DSpark draft writes its KV through `set_unified_key_buffer_radix_fused_norm_rope` "
        "(models/deepseek_v4_dspark.py:158-167, :800-801; pool :1479-1505), which calls "
        "`scatter_bf16_into_unified`, asserting `kv.dtype == unified_kv.dtype` (unified_kv_kernels/runtime.py:"
        "190-217). 0.5.21 keeps the DSpark draft's pool bf16 (`unified_fp8_for_dsv4_pool`, "
        "mem_cache/kv_cache_configurator.py:136-143, :1374-1377). 0.5.16-0.5.17 fail earlier with the unified "
        "layout alone (AB472).",
        fix="Unset `SGLANG_DSV4_UNIFIED_KV_FP8` (the bf16 unified pool), or upgrade to SGLang 0.5.21.",
        fix_safety="Unsafe: the KV cache takes the bf16 layout, which holds fewer tokens.",
    ),
    bad=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK,
        target={"architectures": ("DeepseekV4ForCausalLM",)},
        draft=DSV4_DSPARK_DRAFT,
        env=_ENV,
        gpu="MI355X",
        sglang_version="0.5.20",
    ),
    good=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK,
        target={"architectures": ("DeepseekV4ForCausalLM",)},
        draft=DSV4_DSPARK_DRAFT,
        env={BACKEND: UNIFIED_KV},
        gpu="MI355X",
        sglang_version="0.5.20",
    ),
    sources=(
        "sglang 0.5.19: python/sglang/srt/environ.py (no SGLANG_DSV4_UNIFIED_KV_FP8)",
        "sglang 0.5.20: python/sglang/srt/environ.py:1465",
        "sglang 0.5.20: python/sglang/kernels/ops/attention/dsv4/unified_kv_kernels/env_gate.py:18-35",
        "sglang 0.5.20: python/sglang/kernels/ops/attention/dsv4/unified_kv_kernels/runtime.py:190-217",
        "sglang 0.5.20: python/sglang/srt/mem_cache/deepseek_v4_memory_pool.py:590-610,628-629,710-717,801,841-845,1479-1505",
        "sglang 0.5.20: python/sglang/srt/models/deepseek_v4_dspark.py:158-167,800-801",
        "sglang 0.5.21: python/sglang/srt/mem_cache/kv_cache_configurator.py:136-143,1374-1377",
    ),
    sglang_versions="==0.5.20",
    log_signatures=(
        r"assert kv\.is_contiguous\(\) and kv\.dtype == unified_kv\.dtype",
    ),
)
