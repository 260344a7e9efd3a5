"""RS001 sglang-will-set-values."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Dialect, Finding, Severity
from specguard.resolution.cuda_graph import graph_max_flag
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import LLAMA31_8B_EAGLE

_FIELD_FLAGS = {
    "algorithm": "--speculative-algorithm",
    "num_steps": "--speculative-num-steps",
    "eagle_topk": "--speculative-eagle-topk",
    "num_draft_tokens": "--speculative-num-draft-tokens",
    "draft_model_path": "--speculative-draft-model-path",
    "max_running_requests": "--max-running-requests",
    "attention_backend": "--attention-backend",
    "disable_overlap_schedule": "--disable-overlap-schedule",
    "enable_mixed_chunk": "--enable-mixed-chunk",
    "draft_attention_backend": "--speculative-draft-attention-backend",
    "page_size": "--page-size",
    "fp8_gemm_runner_backend": "--fp8-gemm-backend",
    "linear_attn_verify_backend": "--linear-attn-verify-backend",
    "enable_symm_mem": "--enable-symm-mem",
}


def _flag(ctx: CheckContext, field: str) -> str:
    if field == "cuda_graph_max_bs":
        return graph_max_flag(ctx.version)  # the release's own name of the flag
    return _FIELD_FLAGS[field]


def check(ctx: CheckContext) -> Iterator[Finding]:
    resolution = ctx.resolution
    if not resolution.set_by:
        return
    parts = []
    for field, reason in resolution.set_by.items():
        value = getattr(resolution, field)
        # A value only the runtime can know (it reads a file not at hand) is said as its reason.
        parts.append(f"{ctx.flag(_flag(ctx, field))} to {reason}" if value is None else f"{ctx.flag(_flag(ctx, field))}={value} ({reason})")
    runtime = "sgl-jax" if ctx.spec.dialect is Dialect.SGL_JAX else "SGLang"
    yield RULE.finding(
        f"{runtime} will set " + "; ".join(parts),
        flags=tuple(_flag(ctx, field) for field in resolution.set_by),
    )


RULE = Rule(
    check=check,
    code="RS001",
    category=Category.HYGIENE,
    name="sglang-will-set-values",
    summary="Values SGLang's own argument resolution will fill in or rewrite",
    severity=Severity.INFO,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="Predicts the speculative values SGLang resolves at start-up (automatic steps/topk/draft "
        "tokens by target architecture, draft tokens forced to steps + 1 under topk 1, NGRAM's derived "
        "values, DFLASH's block size and draft backend, DSPARK's one step, topk 1 and gamma + 1 draft tokens, "
        "max running requests reset to 48, the overlap scheduler and mixed chunked prefill switched off (or the "
        "overlap scheduler switched back on by SGLANG_ENABLE_SPEC_V2=1 before 0.5.11), the default attention backend for the GPU, the "
        "decode CUDA-graph max batch size, and the model hooks' defaults: LongCat-Flash FP8's FP8 GEMM, the Kimi hybrid "
        "and GLM-5-Next linear-attention verify backend, the Kimi DSPARK draft backend, symmetric memory dropped for Kimi "
        "hybrids under CUDA graphs in 0.5.17-0.5.18) and shows each with the step that sets it. The predictions are "
        "checked against SGLang 0.5.23's own resolution by tests/parity/test_differential.py.",
        why="SGLang changes these silently or with a log line the user rarely reads, so the server runs "
        "with values nobody wrote: e.g. Llama targets get topk 4 (a tree) where a chain was expected, "
        "and max running requests drops to 48. Seeing them before launch avoids surprises.",
        fix="None needed; write the values explicitly to pin them.",
        fix_safety="No fix: this finding is informational.",
    ),
    bad=Example(
        argv=LLAMA31_8B_EAGLE,
        target={"architectures": ("LlamaForCausalLM",)},
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE, "--speculative-num-steps", "5", "--speculative-eagle-topk", "4",
              "--speculative-num-draft-tokens", "8", "--max-running-requests", "48"),
        target={"architectures": ("LlamaForCausalLM",)},
        sglang_version="0.5.23",
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1159-1174,1430-1461 (auto params)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1255-1266 (topk 1 => draft tokens = steps + 1)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1086-1094 (max running requests 48)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1285-1371 (NGRAM)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:886-987 (DFLASH draft attention backend)",
        "sglang 0.5.16: python/sglang/srt/arg_groups/speculative_hook.py:323-404 (DSPARK steps, topk, gamma + 1, 48, mixed chunk off)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:757-860 (DSPARK; mixed chunk kept from 0.5.19)",
        "sglang 0.5.10: python/sglang/srt/server_args.py:2999-3004 (SGLANG_ENABLE_SPEC_V2=1 turns overlap back on)",
        "sglang 0.5.13: python/sglang/srt/arg_groups/speculative_hook.py:240-243 (DFLASH overlap off; not in 0.5.14)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/model_override_base.py:277-351 (default attention backend)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/memory_hook.py:84-188 (decode CUDA-graph max batch size)",
        "sglang 0.5.15.post1: python/sglang/srt/arg_groups/overrides.py:1177-1246 (no LongCat-Flash FP8 GEMM default)",
        "sglang 0.5.16: python/sglang/srt/arg_groups/overrides.py:1400-1410 (LongCat-Flash FP8 GEMM flashinfer_trtllm on SM100)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/overrides.py:832-842 (the same LongCat-Flash FP8 GEMM default)",
        "sglang 0.5.16: python/sglang/srt/server_args.py:4366-4374 (the branch that runs that pass lists LongcatFlashForCausalLM, not its NextN class)",
        "sglang 0.5.17: python/sglang/srt/arg_groups/kimi_k3_hook.py:12-41 (Kimi hybrid verify backend nv_cutedsl, DSPARK draft trtllm_mha on SM100)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/kimi_k3_hook.py:18-55 (the same Kimi hybrid defaults, from model_hook.py:239-249)",
        "sglang 0.5.18: python/sglang/srt/arg_groups/kimi_k3_hook.py:44-84 (Kimi hybrid symm-mem off under CUDA graphs, from server_args.py:4442-4447)",
        "sglang 0.5.19: python/sglang/srt/arg_groups/cuda_graph_hook.py:461-468 (symm-mem no longer turned off for Kimi hybrids)",
        "sglang 0.5.22: python/sglang/srt/arg_groups/glm5_next_hook.py:18-37 (GLM-5-Next verify backend nv_cutedsl on SM100; absent from 0.5.21)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/glm5_next_hook.py:18-37 (the same GLM-5-Next default, from model_hook.py:251-256)",
        "seed: sglang-speculative-decoding.md (Full Parameter Reference)",
    ),
)
