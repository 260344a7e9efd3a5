"""AB472 rocm-dsv4-dspark-unified-kv-draft-write."""

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
from specguard.rules.draft_model._common import draft_config
from specguard.rules.examples import DEEPSEEK_V4_FLASH_DSPARK
from specguard.sglang_facts.architectures import DSV4_ARCHITECTURES

# SGLang's unified KV layout for DeepSeek-V4, on HIP only (is_unified_kv_triton: 0.5.15
# layers/attention/dsv4/unified_kv_kernels/env_gate.py:9-12; from 0.5.16 the gate lives in sglang.kernels).
BACKEND = "SGLANG_HACK_FLASHMLA_BACKEND"
UNIFIED_KV = "unified_kv_triton"
# What the draft's KV write hits: "AttributeError: 'NoneType' object has no attribute 'kv_buffer'"
# (self.swa_kv_pool.kv_buffer with swa_kv_pool None, 0.5.17 mem_cache/deepseek_v4_memory_pool.py:1191).


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DSPARK" or ctx.spec.env_value(BACKEND) != UNIFIED_KV:
        return
    gpu = ctx.env.gpu
    if gpu is None or gpu.platform != "rocm":
        return
    draft = draft_config(ctx)
    if draft is None or draft.architecture not in DSV4_ARCHITECTURES:
        return  # only a DeepSeek-V4 draft gets the DeepSeek-V4 KV pool
    yield RULE.finding(
        f"DSPARK with a DeepSeek-V4 draft on ROCm ({gpu.name}) and {BACKEND}={UNIFIED_KV} in SGLang {ctx.version}: "
        "the unified KV layout builds no separate sliding-window pool (swa_kv_pool is None), but the DSpark draft "
        "still writes its KV and the injected target hidden states there, so the first draft KV write fails with "
        f"\"AttributeError: 'NoneType' object has no attribute 'kv_buffer'\". Unset {BACKEND}, or use SGLang "
        "0.5.18 or later",
        flags=("--speculative-algorithm",),
        fix=fix_of(
            f"unset {BACKEND}",
            Applicability.UNSAFE,
            Edit(target="env", name=BACKEND, value=None),
        ),
    )


DSV4_DSPARK_DRAFT = {"architectures": ("DeepseekV4ForCausalLMDSpark",)}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB472",
    category=Category.CRASH,
    name="rocm-dsv4-dspark-unified-kv-draft-write",
    summary="DSPARK with a DeepSeek-V4 draft on ROCm with SGLANG_HACK_FLASHMLA_BACKEND=unified_kv_triton fails at "
    "the first draft KV write (0.5.16-0.5.17)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` on ROCm with `SGLANG_HACK_FLASHMLA_BACKEND=unified_kv_triton` and a "
        "draft whose config.json names a DeepSeek-V4 architecture (DeepseekV4ForCausalLM, its NextN or DSpark "
        "class; the target's own config.json when the draft comes from the target checkpoint), SGLang "
        "0.5.16-0.5.17.",
        why="With the variable on HIP every DeepSeek-V4 KV pool, the draft's included, takes the unified layout and "
        "sets `swa_kv_pool = None` (0.5.17 mem_cache/deepseek_v4_memory_pool.py:568-598; 0.5.16 :572-575). The "
        "DSpark draft's KV writes all go through `set_swa_key_buffer_radix_fused_norm_rope`, which writes "
        "`self.swa_kv_pool.kv_buffer[...]` (0.5.17 :1174-1193): its attention's store (0.5.17 "
        "models/deepseek_v4_dspark.py:135-146) and the injection of the target's hidden states "
        "(`write_target_hidden_kv` :649-673, called from speculative/dspark_components/dspark_kv_inject.py:57-66, "
        "80-103 after translating full locations to the SWA pool). 0.5.18 adds the unified ring path: "
        "`set_unified_key_buffer_radix_fused_norm_rope` (deepseek_v4_memory_pool.py:1201) chosen by "
        "`is_unified_kv_triton()` in the draft (deepseek_v4_dspark.py:154-167, 795-815) and the injector "
        "(dspark_kv_inject.py:108-117, `_unified_inject_loc` :137-172). DSPARK arrives in 0.5.16.",
        fix="Unset SGLANG_HACK_FLASHMLA_BACKEND (tilelang, the default), or upgrade to 0.5.18.",
        fix_safety="Unsafe: another DeepSeek-V4 attention kernel and KV layout run.",
    ),
    bad=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK,
        target={"architectures": ("DeepseekV4ForCausalLM",)},
        draft=DSV4_DSPARK_DRAFT,
        env={BACKEND: UNIFIED_KV},
        gpu="MI355X",
        sglang_version="0.5.17",
    ),
    good=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK,
        target={"architectures": ("DeepseekV4ForCausalLM",)},
        draft=DSV4_DSPARK_DRAFT,
        env={BACKEND: UNIFIED_KV},
        gpu="MI355X",
        sglang_version="0.5.18",
    ),
    sources=(
        "sglang 0.5.15: python/sglang/srt/layers/attention/dsv4/unified_kv_kernels/env_gate.py:9-12",
        "sglang 0.5.16: python/sglang/srt/mem_cache/deepseek_v4_memory_pool.py:572-575, 1194",
        "sglang 0.5.16: python/sglang/srt/models/deepseek_v4_dspark.py:144, 670",
        "sglang 0.5.17: python/sglang/srt/mem_cache/deepseek_v4_memory_pool.py:568-598, 1174-1193",
        "sglang 0.5.17: python/sglang/srt/models/deepseek_v4_dspark.py:135-146, 649-673",
        "sglang 0.5.17: python/sglang/srt/speculative/dspark_components/dspark_kv_inject.py:57-66, 80-103",
        "sglang 0.5.18: python/sglang/srt/models/deepseek_v4_dspark.py:154-167, 795-815",
        "sglang 0.5.18: python/sglang/srt/speculative/dspark_components/dspark_kv_inject.py:108-117, 137-172",
    ),
    sglang_versions=">=0.5.16,<=0.5.17",
    log_signatures=(r"AttributeError: 'NoneType' object has no attribute 'kv_buffer'",),
)
