"""AB463 fa3-swa-pool-tree-verify-full-pool-slots."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import (
    GPT_OSS,
    effective_topk,
    page_size,
    runtime_backends,
    topk_origin,
    verify_backend,
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
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

NO_SWA_POOL = "--disable-hybrid-swa-memory"
# trtllm_mha in either phase refuses a topk above 1 at start (0.5.9 server_args.py:2433-2441; 0.5.11 :3529-3537),
# so such a launch never verifies a tree.
TREE_REFUSING_BACKEND = "trtllm_mha"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm not in EAGLE_WORKER_ALGORITHMS
        or ctx.target is None
        or ctx.target.architecture != GPT_OSS
    ):
        return
    if ctx.spec.has(NO_SWA_POOL) or TREE_REFUSING_BACKEND in runtime_backends(ctx):
        return
    topk = effective_topk(ctx)
    if topk is None or topk <= 1 or page_size(ctx) != 1:
        return  # a chain; pages above 1 assert instead (AB392)
    backend, flag = verify_backend(ctx)
    if backend != "fa3":
        return
    how = (
        f"{ctx.flag(flag)} fa3"
        if flag
        else "fa3 (SGLang's default for gpt-oss on Hopper)"
    )
    yield RULE.finding(
        f"{how} verifies a tree (topk {topk}{topk_origin(ctx, topk)}) on gpt-oss, whose sliding-window layers keep "
        f"their KV in the hybrid SWA pool, in SGLang {ctx.version}: fa3 builds the sliding-window verify page table "
        "from the full pool's slot numbers without translating them into the SWA pool, so the sliding-window layers "
        "attend to the wrong KV during every verify and the output goes wrong (fixed in 0.5.12). Add "
        f"{ctx.flag(NO_SWA_POOL)}, or draft a chain ({ctx.flag('--speculative-eagle-topk')} 1)",
        flags=tuple(f for f in (flag, "--speculative-eagle-topk") if f),
        fix=fix_of(
            "keep one KV pool (no hybrid SWA memory)",
            Applicability.UNSAFE,
            Edit(name=NO_SWA_POOL, value=True),
        ),
    )


GPT_OSS_TREE = (
    "--model-path",
    "openai/gpt-oss-120b",
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    "nvidia/gpt-oss-120b-Eagle3",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "4",
    "--speculative-num-draft-tokens",
    "8",
)
GPT_OSS_FACTS = {"architectures": (GPT_OSS,), "model_type": "gpt_oss"}

RULE = Rule(
    check=check,
    code="AB463",
    category=Category.WRONG_OUTPUT,
    name="fa3-swa-pool-tree-verify-full-pool-slots",
    summary="fa3 verifying a tree (topk > 1) on gpt-oss's hybrid SWA KV pool reads the sliding-window layers' KV "
    "from full-pool slots (0.5.9 to 0.5.11)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN) or STANDALONE with a topk above 1 (typed or automatic) and page size 1 on a "
        "gpt-oss target (GptOssForCausalLM) whose target verify runs on fa3 (typed, or gpt-oss's default on Hopper), "
        "with the hybrid SWA KV pool kept (no `--disable-hybrid-swa-memory`) and no trtllm_mha in either phase (which "
        "refuses a tree at start), "
        "SGLang 0.5.9 to 0.5.11.",
        why="gpt-oss is a hybrid-SWA model (configs/model_config.py is_hybrid_swa_model: 0.5.9 :1320-1330; 0.5.11 "
        ":1546-1558), so its sliding-window layers get their own, smaller KV pool unless hybrid SWA memory is off. "
        "For a tree, fa3's target-verify metadata calls `_init_sliding_window_attn_spec_metadata` whenever the model "
        "has a window (0.5.11 layers/attention/flashattention_backend.py:478-481, and on graph replay :2135), which "
        "hands `metadata.page_table` and `metadata_expand.page_table`, full-pool slot numbers, straight to "
        "`prepare_swa_spec_page_table_triton` (0.5.9 :2406-2413; 0.5.11 :2468-2475); every other fa3 path translates "
        "them with `translate_loc_from_full_to_swa` first. 0.5.12 translates them here too when "
        "`use_sliding_window_kv_pool` (flashattention_backend.py:2486-2503). 0.5.7 forced hybrid SWA memory off for "
        "gpt-oss (server_args.py:1214) and 0.5.8-0.5.8.post1 for gpt-oss with any speculative algorithm "
        "(0.5.8 server_args.py:1288-1293); 0.5.9-0.5.11 keep the pool (0.5.9 gives it up only for trtllm_mha, "
        ":1354-1362, which refuses topk > 1 anyway, :2433-2441). "
        "Page sizes above 1 assert instead (AB392).",
        fix="Add `--disable-hybrid-swa-memory` (one KV pool), draft a chain (topk 1), or upgrade to 0.5.12.",
        fix_safety="Unsafe: without the SWA pool the sliding-window layers keep full-length KV, so fewer tokens fit.",
    ),
    bad=Example(
        argv=GPT_OSS_TREE, target=GPT_OSS_FACTS, gpu="H100", sglang_version="0.5.11"
    ),
    good=Example(
        argv=(*GPT_OSS_TREE, NO_SWA_POOL),
        target=GPT_OSS_FACTS,
        gpu="H100",
        sglang_version="0.5.11",
    ),
    sources=(
        "sglang 0.5.7: python/sglang/srt/server_args.py:1163-1214 (gpt-oss always without hybrid SWA memory)",
        "sglang 0.5.8: python/sglang/srt/server_args.py:1288-1293 (off with speculative decoding)",
        "sglang 0.5.9: python/sglang/srt/server_args.py:1354-1362,2433-2441; configs/model_config.py:1320-1330",
        "sglang 0.5.9: python/sglang/srt/layers/attention/flashattention_backend.py:2377-2413",
        "sglang 0.5.11: python/sglang/srt/layers/attention/flashattention_backend.py:478-481,2135,2439-2475",
        "sglang 0.5.11: python/sglang/srt/server_args.py:1875-1918 (gpt-oss keeps hybrid SWA memory), 3529-3537",
        "sglang 0.5.12: python/sglang/srt/layers/attention/flashattention_backend.py:2486-2503",
    ),
    sglang_versions=">=0.5.9,<0.5.12",
)
