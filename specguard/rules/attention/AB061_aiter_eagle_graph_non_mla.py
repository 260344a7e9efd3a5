"""AB061 aiter-eagle-graph-non-mla."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    attention_backend,
    is_mla_target,
)
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3_CHAIN
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

PERSIST = "SGLANG_AITER_MLA_PERSIST"  # default True (aiter_backend.py:55 in 0.5.9)


def _runs_aiter(ctx: CheckContext) -> bool:
    """aiter typed, or SGLang's default: on ROCm a non-MLA target gets aiter when nothing is typed
    (0.5.8 server_args.py:1675-1676), whatever SGLANG_USE_AITER says."""
    backend, _ = attention_backend(ctx)
    return backend == "aiter"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.spec.get("disable_cuda_graph") or not _runs_aiter(ctx):
        return
    if is_mla_target(ctx):
        return
    known = ctx.target is not None and (ctx.target.architectures is not None or ctx.target.num_attention_heads is not None)
    persist_off = ctx.spec.env_value(PERSIST) is not None and not ctx.spec.env_flag(PERSIST)
    backend = ctx.flag("--attention-backend")
    if persist_off:
        problem = (f"with {PERSIST}=0 the crash is avoided, but the non-MLA target-verify graph reads stale "
                   f"indices and the output is garbled (reported on GLM-4.7)")
        severity = Severity.WARNING
    else:
        problem = ("the draft-extend CUDA-graph capture reads max_split_per_batch, which only MLA targets set: "
                   "'AttributeError: AiterAttnBackend object has no attribute max_split_per_batch' after the "
                   "weights load")
        severity = Severity.ERROR if known else Severity.WARNING
    subject = "this non-MLA target" if known else "a non-MLA target (specguard cannot tell whether this one uses MLA)"
    yield RULE.finding(
        f"{backend} aiter with speculative decoding on {subject} in SGLang {ctx.env.sglang_version}: {problem}. "
        f"Use {backend} triton, or SGLang 0.5.10+ (PR 19362)",
        flags=("--attention-backend",),
        fix=set_flags("use the triton backend", Applicability.UNSAFE, attention_backend="triton"),
        severity=severity,
    )


RULE = Rule(
    check=check,
    code="AB061",
    category=Category.CRASH,
    name="aiter-eagle-graph-non-mla",
    summary="aiter attention with EAGLE-family speculative decoding on a non-MLA target (0.5.6.post2-0.5.9)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="The aiter backend (typed, or chosen on ROCm by `SGLANG_USE_AITER=1`) with EAGLE, EAGLE3, NEXTN or "
        "STANDALONE, CUDA graphs on, and a target without MLA (`kv_lora_rank` absent), on 0.5.6.post2-0.5.9.",
        why="In these releases the aiter backend's CUDA-graph paths test `_use_mla_ps_kernel` (on by default, "
        "`SGLANG_AITER_MLA_PERSIST`) without `self.use_mla`, e.g. the draft-extend capture (0.5.9 "
        "layers/attention/aiter_backend.py:993-1020; 0.5.6.post2 :832-857), and read `max_split_per_batch`, "
        "which only the MLA branch of `__init__` sets (0.5.9 :191-216). A non-MLA target (GLM-4.7, Llama, Qwen) "
        "therefore fails after the weights load with `AttributeError: 'AiterAttnBackend' object has no "
        "attribute 'max_split_per_batch'` (issue 16027). With `SGLANG_AITER_MLA_PERSIST=0` it starts, but the "
        "non-MLA target-verify graph used tensors the replay never updated, and the output was garbage (same "
        "issue, 2026-02-04). PR 19362 fixed both; 0.5.10 guards every such test with `self.use_mla` (0.5.10 "
        "aiter_backend.py:1507-1535). 0.5.6 has no unguarded test. With `--disable-cuda-graph` the eager paths "
        "are guarded. When the target's config is unknown the rule warns.",
        fix="Use the triton backend, or upgrade to 0.5.10+.",
        fix_safety="Unsafe: another attention kernel runs.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3_CHAIN, "--attention-backend", "aiter"),
        target={"architectures": ("LlamaForCausalLM",), "num_attention_heads": 32},
        gpu="MI300X",
        sglang_version="0.5.9",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3_CHAIN, "--attention-backend", "aiter"),
        target={"architectures": ("LlamaForCausalLM",), "num_attention_heads": 32},
        gpu="MI300X",
        sglang_version="0.5.10",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/16027",
        "https://github.com/sgl-project/sglang/pull/19362",
        "sglang 0.5.9: python/sglang/srt/layers/attention/aiter_backend.py:55, 191-216, 993-1020",
        "sglang 0.5.6.post2: python/sglang/srt/layers/attention/aiter_backend.py:832-857",
        "sglang 0.5.10: python/sglang/srt/layers/attention/aiter_backend.py:1507-1535",
    ),
    sglang_versions=">=0.5.6.post2,<0.5.10rc0",
    dialects=SGLANG_DIALECTS,
)
