"""HY022 gdn-speculative-falls-back-to-triton."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

# The hybrid GDN targets whose SM100 default SGLang picks in its model override: triton unless
# `_get_default_attn_backend` returns trtllm_mha (sglang 0.5.10 server_args.py:1977-2005, 0.5.14
# server_args.py:4182-4211; InternS2Preview joined the list in 0.5.14). 0.5.9 gave them triton on
# SM100 whatever the launch (0.5.9 server_args.py:1600-1605), so the speculative launch lost nothing.
GDN_SM100_OVERRIDE_ARCHITECTURES = frozenset(
    {
        "Qwen3NextForCausalLM",
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForConditionalGeneration",
        "InternS2PreviewForConditionalGeneration",
    }
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.target is None:
        return
    arch = ctx.target.architecture
    if arch not in GDN_SM100_OVERRIDE_ARCHITECTURES:
        return
    gpu = ctx.env.gpu
    if gpu is None or gpu.platform != "cuda" or gpu.compute_capability is None or gpu.compute_capability[0] != 10:
        return
    if ctx.spec.get("attention_backend") is not None or ctx.spec.get("decode_attention_backend") is not None:
        return
    topk = ctx.spec.get("speculative_eagle_topk")
    page = ctx.spec.get("page_size")
    backend_flag = ctx.flag("--attention-backend")
    if topk is None:
        reason = (
            f"{ctx.flag('--speculative-eagle-topk')} is not typed, and SGLang picks the backend before it fills "
            "the speculative settings in"
        )
        next_step = (
            f"Type the chain ({ctx.flag('--speculative-eagle-topk')} 1 with its steps and draft tokens) and "
            f"{backend_flag} trtllm_mha"
        )
        fix = None
    elif topk == 1 and page is not None and page > 1:
        reason = (
            f"{ctx.flag('--page-size')} {page} with {ctx.flag('--speculative-eagle-topk')} 1 fails the topk-1 test "
            "SGLang shares with fa3 (it wants page size 1)"
        )
        next_step = f"Add {backend_flag} trtllm_mha, which runs paged topk-1 chains (the report keeps page size {page})"
        fix = fix_of("use trtllm_mha", Applicability.UNSAFE, Edit(name="--attention-backend", value="trtllm_mha"))
    else:
        return
    yield RULE.finding(
        f"On {gpu.name} SGLang gives {arch} trtllm_mha only when its default-backend test passes; here "
        f"{reason}, so the target silently gets triton (and from 0.5.14 page size 1 in place of the one typed). "
        "sglang#39515 measured the NEXTN server 2.6x slower than with trtllm_mha at ~12k tokens. "
        f"{next_step}",
        flags=("--attention-backend",),
        fix=fix,
    )


RULE = Rule(
    check=check,
    code="HY022",
    category=Category.PERF,
    name="gdn-speculative-falls-back-to-triton",
    summary="Qwen3-Next / Qwen3.5 speculative on Blackwell without a backend: SGLang falls back to triton",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN, MTP) or STANDALONE on a Qwen3-Next, Qwen3.5 or InternS2-Preview target on an "
        "SM100 GPU (B200, GB200, B300, GB300) with no `--attention-backend`, when `--speculative-eagle-topk` is "
        "not typed, or is 1 with `--page-size` above 1.",
        why="For these targets SGLang's model override defaults to triton on SM100 and switches to trtllm_mha only "
        "when `_get_default_attn_backend` would pick it. That test needs the topk typed (the backend is picked "
        "before the speculative settings are filled in) and reuses fa3's topk-1 rule, which asks for page size 1, "
        "so a paged topk-1 chain gets triton although trtllm_mha runs it; 0.5.14 also resets the page size to 1 "
        "for triton. Nothing is logged. sglang#39515 (Qwen3.5-122B-A10B-FP8, one B200) measured 119 tok/s with "
        "NEXTN against 229 without it at ~12k tokens, and flat speed once `--attention-backend trtllm_mha` was "
        "added; the fix, PR 39819, was still open in September 2026.",
        fix="Add `--attention-backend trtllm_mha` (topk 1); with the topk untyped, type the chain first.",
        fix_safety="Unsafe: another attention kernel runs.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen3.5-122B-A10B-FP8", "--page-size", "16", "--speculative-algorithm", "NEXTN",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"),
        target={"architectures": ("Qwen3_5MoeForConditionalGeneration",)},
        gpu="B200",
        sglang_version="0.5.14",
    ),
    good=Example(
        argv=("--model-path", "Qwen/Qwen3.5-122B-A10B-FP8", "--page-size", "16", "--speculative-algorithm", "NEXTN",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
              "--attention-backend", "trtllm_mha"),
        target={"architectures": ("Qwen3_5MoeForConditionalGeneration",)},
        gpu="B200",
        sglang_version="0.5.14",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/39515",
        "https://github.com/sgl-project/sglang/pull/39819",
        "sglang 0.5.9: python/sglang/srt/server_args.py:1600-1605 (triton on SM100 whatever the launch)",
        "sglang 0.5.10: python/sglang/srt/server_args.py:1977-2005, 2217-2250; utils/common.py:2669-2673",
        ("sglang 0.5.14: python/sglang/srt/server_args.py:4182-4211 (page size 64 or 1), 4407-4446; "
        "utils/common.py:3010-3014"),
    ),
    dialects=SGLANG_DIALECTS,
    sglang_versions=">=0.5.10",
)
