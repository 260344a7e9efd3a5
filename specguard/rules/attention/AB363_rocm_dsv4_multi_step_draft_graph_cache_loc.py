"""AB363 rocm-dsv4-multi-step-draft-graph-cache-loc."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.AB362_dsv4_multi_step_draft_cache_loc import (
    DSV4,
    DSV4_FACTS,
    DSV4_FLASH_MTP,
    draft_steps,
)
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

STEPS = "--speculative-num-steps"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "EAGLE"
        or ctx.target is None
        or ctx.target.architecture != DSV4
    ):
        return
    gpu = ctx.env.gpu
    if gpu is None or gpu.platform != "rocm" or ctx.spec.get("disable_cuda_graph"):
        return
    steps = draft_steps(ctx)
    if effective_topk(ctx) != 1 or steps is None or steps <= 1:
        return
    yield RULE.finding(
        f"DeepSeek-V4 MTP on ROCm ({gpu.name}) with {ctx.flag(STEPS)} {steps} in SGLang {ctx.version}: when the "
        "draft CUDA graph replays, the HIP DeepSeek-V4 backend builds step 0's metadata from the whole draft "
        "out_cache_loc cropped to the batch and reuses it for every later step, so each step writes its "
        "compressed KV to the same rows with unadvanced lengths and the draft reads the wrong context: acceptance "
        f"drops (the output stays right). Draft one step ({ctx.flag(STEPS)} 1) or use SGLang 0.5.20 or later",
        flags=(STEPS,),
        fix=set_flags(
            "draft one step",
            Applicability.UNSAFE,
            speculative_num_steps=1,
            speculative_num_draft_tokens=2,
        ),
    )


RULE = Rule(
    check=check,
    code="AB363",
    category=Category.PERF,
    name="rocm-dsv4-multi-step-draft-graph-cache-loc",
    summary="DeepSeek-V4 MTP on ROCm with more than one draft step writes every graphed draft step's KV to the "
    "same rows (0.5.13 to 0.5.19)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="A target whose config.json architectures[0] is DeepseekV4ForCausalLM with EAGLE/NEXTN (its MTP "
        "layers), `--speculative-eagle-topk 1` and more than one draft step (typed or chosen by SGLang), on a ROCm "
        "GPU with CUDA graphs on, SGLang 0.5.13 to 0.5.19.",
        why="On HIP the DeepSeek-V4 attention is `DeepseekV4HipRadixBackend` (0.5.13 "
        "layers/attention/attention_registry.py:133-139, new in 0.5.13; 0.5.12 shares the CUDA backend, AB362). "
        "Its eager draft path slices the draft out_cache_loc per step, but the multi-step graph path "
        "(`DeepseekV4MultiStepBackend.init_forward_metadata_out_graph`, 0.5.19 "
        "deepseek_v4_backend_hip_radix.py:1765-1805, the same code from 0.5.13 :1269-1309) hands step 0 the "
        "whole buffer, which the inner backend crops to the batch (`pad=(0, bs - len(out_cache_loc))`, :923-928; 0.5.13 :772-777), "
        "and copies that metadata to every later step with the same seq_lens. The draft's C4/C128 writes of all "
        "steps land on one set of rows, so later steps read a wrong context and fewer drafts are accepted; "
        "verification keeps the output right. 0.5.20 gives each step its own row and seq_lens advanced by "
        "step + 1 ('every speculative step must consume its own cache-location row', "
        "deepseek_v4_backend_hip_radix.py:1914-1985, :820-830).",
        fix="Draft one step (`--speculative-num-steps 1`, two draft tokens), or upgrade to 0.5.20 or later.",
        fix_safety="Unsafe: fewer draft tokens per step changes the speed-up.",
    ),
    bad=Example(
        argv=(*DSV4_FLASH_MTP, STEPS, "3"),
        target=DSV4_FACTS,
        gpu="MI300X",
        sglang_version="0.5.19",
    ),
    good=Example(
        argv=(*DSV4_FLASH_MTP, STEPS, "3"),
        target=DSV4_FACTS,
        gpu="MI300X",
        sglang_version="0.5.20",
    ),
    sources=(
        "sglang 0.5.12: python/sglang/srt/layers/attention/ (no deepseek_v4_backend_hip_radix.py)",
        (
            "sglang 0.5.13: python/sglang/srt/layers/attention/deepseek_v4_backend_hip_radix.py:772-777,1247-1309; "
            "attention_registry.py:133-139"
        ),
        (
            "sglang 0.5.19: python/sglang/srt/layers/attention/deepseek_v4_backend_hip_radix.py:863-930,1013-1028,"
            "1743-1809"
        ),
        "sglang 0.5.20: python/sglang/srt/layers/attention/deepseek_v4_backend_hip_radix.py:820-830,1914-1985",
    ),
    sglang_versions=">=0.5.13,<=0.5.19",
)
