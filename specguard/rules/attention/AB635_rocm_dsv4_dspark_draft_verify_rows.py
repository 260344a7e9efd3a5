"""AB635 rocm-dsv4-dspark-draft-verify-rows."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
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
)
from specguard.rules.draft_model._common import draft_config
from specguard.rules.examples import DEEPSEEK_V4_FLASH_DSPARK
from specguard.sglang_facts.architectures import DSV4_ARCHITECTURES


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DSPARK":
        return
    gpu = ctx.env.gpu
    if gpu is None or gpu.platform != "rocm":
        return
    if ctx.spec.env_value(BACKEND) == UNIFIED_KV:
        return  # the draft's first KV write fails first (AB472)
    draft = draft_config(ctx)
    if draft is None or draft.architecture not in DSV4_ARCHITECTURES:
        return  # only a DeepSeek-V4 draft runs the DeepSeek-V4 (HIP radix) backend
    yield RULE.finding(
        f"DSPARK with a DeepSeek-V4 draft on ROCm ({gpu.name}) in SGLang {ctx.version}: the draft proposes with a "
        "gamma-token TARGET_VERIFY forward, but the HIP DeepSeek-V4 backend builds that forward's metadata for "
        "--speculative-num-draft-tokens (gamma + 1) tokens per request, so each request's draft attention reads "
        "positions, KV lengths and slots laid out one row per request off. The proposals are wrong and acceptance "
        "collapses (the target's verify keeps the output correct), if the draft forward does not fail outright. 0.5.18 sizes the draft's metadata with gamma "
        "rows; upgrade, or use a draft that is not DeepSeek-V4",
        flags=("--speculative-algorithm",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB635",
    category=Category.PERF,
    name="rocm-dsv4-dspark-draft-verify-rows",
    summary="A DeepSeek-V4 DSPARK draft on ROCm lays its gamma-token propose out as a gamma + 1 verify "
    "(0.5.16-0.5.17)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` on a known AMD (ROCm) GPU with a draft whose config.json names a "
        "DeepSeek-V4 architecture (the target's own config.json when the draft comes from the target checkpoint), "
        "without `SGLANG_HACK_FLASHMLA_BACKEND=unified_kv_triton` (AB472), SGLang 0.5.16-0.5.17.",
        why="The DSpark draft runs one TARGET_VERIFY forward over a block of gamma tokens per request "
        "(0.5.17 speculative/dspark_components/dspark_draft.py:301-356). On HIP a DeepSeek-V4 runner gets "
        "`DeepseekV4HipRadixBackend` (0.5.16 layers/attention/attention_registry.py:138-154), whose target-verify "
        "metadata assumes `speculative_num_draft_tokens` (gamma + 1) tokens per request: seq_lens, extend lengths "
        "and the token count (0.5.17 deepseek_v4_backend_hip_radix.py:458, :606-633, :643-656, :872; 0.5.16 "
        ":458-459, :618-622, :645, :874). `expand_prefill_casually` then maps the batch's gamma-per-request tokens "
        "onto rows built for gamma + 1 (:1521-1551), so request i's tokens read request-shifted positions and KV "
        "slots. The CUDA backend asserts the DSpark block is gamma (0.5.17 deepseek_v4_backend.py:1959-1968). "
        "0.5.18 adds `is_dspark_draft` and `target_verify_num_draft_tokens = speculative_num_draft_tokens - 1` and "
        "uses it for the draft's verify metadata (deepseek_v4_backend_hip_radix.py:464-475, :676-681, :708).",
        fix="Upgrade to SGLang 0.5.18, or draft with a dense (non-DeepSeek-V4) DSpark draft.",
        fix_safety="No automatic fix: it takes another release or draft.",
    ),
    bad=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK,
        target={"architectures": ("DeepseekV4ForCausalLM",)},
        draft=DSV4_DSPARK_DRAFT,
        gpu="MI355X",
        sglang_version="0.5.17",
    ),
    good=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK,
        target={"architectures": ("DeepseekV4ForCausalLM",)},
        draft=DSV4_DSPARK_DRAFT,
        gpu="MI355X",
        sglang_version="0.5.18",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/speculative/ (no DSPARK)",
        "sglang 0.5.16: python/sglang/srt/layers/attention/attention_registry.py:138-154",
        "sglang 0.5.16: python/sglang/srt/layers/attention/deepseek_v4_backend_hip_radix.py:458-459,618-622,645,874",
        "sglang 0.5.17: python/sglang/srt/speculative/dspark_components/dspark_draft.py:301-356",
        "sglang 0.5.17: python/sglang/srt/layers/attention/deepseek_v4_backend_hip_radix.py:458,606-633,643-656,872,1521-1551",
        "sglang 0.5.17: python/sglang/srt/layers/attention/deepseek_v4_backend.py:1959-1968",
        "sglang 0.5.18: python/sglang/srt/layers/attention/deepseek_v4_backend_hip_radix.py:464-475,676-681,708",
    ),
    sglang_versions=">=0.5.16,<=0.5.17",
)
