"""HY590 adaptive-state-overflows-mamba-verify-cache."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.hybrid.HY314_mamba2_target_verify_token_count import (
    MAMBA2_ARCHITECTURES,
)
from specguard.rules.spec_params._shared import device
from specguard.sglang_facts.architectures import GDN_ARCHITECTURES

ADAPTIVE = "--speculative-adaptive"
# The largest step of SGLang's default adaptive candidates ([1, 3, 7]: 0.5.11 and 0.5.12.post1
# speculative/adaptive_spec_params.py:98 and :95); each state verifies its steps + 1 tokens.
LARGEST_DEFAULT_STEP = 7
# The targets whose recurrent layers keep one intermediate state per draft token in the verify cache and
# write it at request x cache_steps: the GDN backend (gdn_backend.py:450/454 cache_steps=draft_token_num)
# and the Mamba2 mixer (mamba/mamba.py:682).
VERIFY_CACHE_ARCHITECTURES = GDN_ARCHITECTURES | MAMBA2_ARCHITECTURES


def largest_adaptive_draft_tokens(start_steps: int) -> int:
    """The draft tokens of the largest state the adaptive controller builds: the default candidates' largest
    step or the starting steps (0.5.12 joins the start to the candidates; 0.5.11 starts at the nearest
    candidate), plus one."""
    return max(LARGEST_DEFAULT_STEP, start_steps) + 1


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.resolution.adaptive is not True or ctx.spec.has(
        "--speculative-adaptive-config"
    ):
        return  # switched off (SP008), or candidates of its own that are not read here
    if device(ctx) == "npu":
        return  # the Ascend GDN verify kernel indexes its states its own way (npu/attention/ascend_gdn_backend.py), not read
    architectures = (ctx.target.architectures if ctx.target is not None else None) or ()
    architecture = next(
        (a for a in architectures if a in VERIFY_CACHE_ARCHITECTURES), None
    )
    steps, pooled = ctx.resolution.num_steps, ctx.resolution.num_draft_tokens
    if architecture is None or steps is None or pooled is None:
        return
    needed = largest_adaptive_draft_tokens(steps)
    if pooled >= needed:
        return
    yield RULE.finding(
        f"{ctx.flag(ADAPTIVE)} on {architecture} (a mamba/linear-attention hybrid) in SGLang {ctx.version}: the "
        f"verify cache of intermediate recurrent states is sized for the starting {pooled} draft tokens, but the "
        f"adaptive controller also builds the {needed - 1}-step state, whose verify writes {needed} states per "
        f"request at a {needed}-token stride. Every verify at that step writes into the next request's slots (and, "
        "at large batches, past the last layer's cache) and commits another request's state: expect corrupted output "
        f"once the controller steps up, possibly an illegal memory access. Start at {ctx.flag('--speculative-num-steps')} {needed - 1} with "
        f"{ctx.flag('--speculative-num-draft-tokens')} {needed}, drop {ctx.flag(ADAPTIVE)}, or upgrade to 0.5.13",
        flags=(ADAPTIVE, "--model-path"),
        fix=set_flags(
            f"start adaptive at its largest step ({needed - 1} steps, {needed} draft tokens)",
            Applicability.UNSAFE,
            speculative_num_steps=needed - 1,
            speculative_eagle_topk=1,
            speculative_num_draft_tokens=needed,
        ),
    )


_QWEN3_NEXT_MTP = (
    "--model-path",
    "Qwen/Qwen3-Next-80B-A3B-Instruct",
    "--speculative-algorithm",
    "NEXTN",
    ADAPTIVE,
)
_QWEN3_NEXT = {"architectures": ("Qwen3NextForCausalLM",)}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="HY590",
    category=Category.WRONG_OUTPUT,
    name="adaptive-state-overflows-mamba-verify-cache",
    summary="--speculative-adaptive on a mamba/GDN hybrid target overflows the verify state cache sized for the "
    "starting draft tokens (0.5.11-0.5.12.post1)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-adaptive` that SGLang runs (EAGLE/EAGLE3/NEXTN chain, not switched off: SP008) on a "
        "target whose recurrent layers run the GDN backend (Qwen3-Next, Qwen3.5, JetNemotron, InternS2-Preview) or "
        "the Mamba2 mixer (NemotronH, FalconH1), starting below 7 steps (the automatic start is 3), with SGLang's "
        "default adaptive candidates, SGLang 0.5.11 to 0.5.12.post1. Quiet with `--speculative-adaptive-config` "
        "(its candidates are not read) and on `--device npu` (the Ascend GDN verify kernel is not read).",
        why="The hybrid request pool allocates the intermediate SSM-state and conv-window caches as "
        "[layers, requests + 1, speculative_num_draft_tokens, ...] from the starting draft tokens (0.5.11 "
        "model_runner_kv_cache_mixin.py:233, 267; 0.5.12.post1 :277, 311; mem_cache/memory_pool.py:290-296 and "
        ":293-299). The adaptive controller builds a runtime state for every candidate step, 1, 3 and 7 by "
        "default, with steps + 1 draft tokens and a target CUDA-graph runner of its own (adaptive_runtime_state.py:98-106; "
        "0.5.11 eagle_worker.py:339-375; 0.5.12.post1 eagle_worker_v2.py:836-872). Verify passes "
        "cache_steps = the state's draft tokens to the recurrent kernels (gdn_backend.py:450 / :454, mamba/mamba.py:682), "
        "which address request i's states at i x cache_steps (fla/fused_recurrent.py:670), while "
        "fused_mamba_state_scatter_with_mask reads them back with the pool's own step stride "
        "(mamba_state_scatter_triton.py:88-147): at 8 draft tokens over a 4-token pool the writes run past each "
        "request's slots (off the last layer's end once batch x 8 exceeds (requests + 1) x 4), and the "
        "committed state is another request's. Whether an out-of-bounds write faults depends on what lies past the "
        "allocation, so the certain effect is corrupted recurrent state (a warning, not a crash). 0.5.13 sizes the "
        "pools by max_speculative_num_draft_tokens = max(candidate steps) + 1 under adaptive (server_args.py:7370-7386; "
        "model_runner_kv_cache_mixin.py:298), which also widens the req_to_token rows (mem_cache/common.py:194-210).",
        fix="Start adaptive at its largest candidate (`--speculative-num-steps 7 --speculative-eagle-topk 1 "
        "--speculative-num-draft-tokens 8`) so the pools hold every state, drop `--speculative-adaptive`, or "
        "upgrade to 0.5.13.",
        fix_safety="Unsafe: it changes the starting draft length (the controller then steps down).",
    ),
    bad=Example(
        argv=_QWEN3_NEXT_MTP,
        target=_QWEN3_NEXT,
        gpu="H100",
        sglang_version="0.5.12.post1",
    ),
    good=Example(
        argv=(
            *_QWEN3_NEXT_MTP,
            "--speculative-num-steps",
            "7",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "8",
        ),
        target=_QWEN3_NEXT,
        gpu="H100",
        sglang_version="0.5.12.post1",
    ),
    sources=(
        "sglang 0.5.11: python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py:233,267; mem_cache/memory_pool.py:290-296",
        "sglang 0.5.11: python/sglang/srt/speculative/adaptive_spec_params.py:98; adaptive_runtime_state.py:98-106; eagle_worker.py:339-375",
        "sglang 0.5.12.post1: python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py:277,311; mem_cache/memory_pool.py:293-299",
        "sglang 0.5.12.post1: python/sglang/srt/speculative/adaptive_spec_params.py:95-106; eagle_worker_v2.py:836-872",
        "sglang 0.5.12.post1: python/sglang/srt/layers/attention/linear/gdn_backend.py:454; mamba/mamba.py:682; fla/fused_recurrent.py:670",
        "sglang 0.5.12.post1: python/sglang/srt/layers/attention/mamba/mamba_state_scatter_triton.py:88-147",
        "sglang 0.5.13: python/sglang/srt/server_args.py:7370-7386; model_executor/model_runner_kv_cache_mixin.py:298",
    ),
    sglang_versions=">=0.5.11,<=0.5.12.post1",
)
