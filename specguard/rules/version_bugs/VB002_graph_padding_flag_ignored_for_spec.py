"""VB002 graph-padding-flag-ignored-for-spec."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
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
from specguard.sglang_facts.defaults import DEFAULT_MAX_RUNNING_REQUESTS_FOR_SPEC

# The largest size SGLang's own speculative capture list reached before 0.5.3 on <90 GB GPUs.
_MAX_DENSE_BS = 160


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or not ctx.spec.get("disable_cuda_graph_padding"):
        return
    if ctx.spec.get("disable_cuda_graph") or ctx.spec.has("--cuda-graph-bs"):
        return
    running = ctx.resolution.max_running_requests or DEFAULT_MAX_RUNNING_REQUESTS_FOR_SPEC
    top = min(running, _MAX_DENSE_BS)
    dense = tuple(str(n) for n in range(1, top + 1))
    yield RULE.finding(
        f"SGLang {ctx.env.sglang_version} ignores {ctx.flag('--disable-cuda-graph-padding')} when it chooses the "
        "batch sizes to capture for speculative decoding (it keeps the sparse 1-8, 10-32 step 2, 40-56, "
        "80-160 step 16 list), so most batch sizes run without CUDA graphs instead of unpadded; slime "
        f"reports the flag does not work around issue 9888. Give {ctx.flag('--cuda-graph-bs')} 1..{top} "
        "explicitly (or upgrade to 0.5.3+)",
        flags=("--disable-cuda-graph-padding", "--cuda-graph-bs"),
        fix=set_flags(f"capture every batch size 1..{top}", Applicability.UNSAFE, cuda_graph_bs=dense),
    )


RULE = Rule(
    check=check,
    code="VB002",
    category=Category.PERF,
    name="graph-padding-flag-ignored-for-spec",
    summary="--disable-cuda-graph-padding does not change the speculative capture list before SGLang 0.5.3",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--disable-cuda-graph-padding` with EAGLE, EAGLE3 (NEXTN) or STANDALONE, CUDA graphs on and "
        "no explicit `--cuda-graph-bs`, on SGLang < 0.5.3.",
        why="Up to 0.5.2 `get_batch_sizes_to_capture` only looks at the flag when no speculative "
        "algorithm is set (`model_executor/cuda_graph_runner.py:169-183` in 0.5.2); with speculation "
        "it captures the sparse speculative list. The runners do honour the flag at replay (they run "
        "eagerly when the exact size was not captured), so most batch sizes lose their graph. "
        "slime's Known Issues call the flag \"currently ineffective for speculative decoding\". From "
        "0.5.3 the flag gives the dense list 1..max_bs for speculative runs too "
        "(`server_args.py:690-692` in 0.5.3; `arg_groups/cuda_graph_hook.py:506-508` in 0.5.23), "
        "which is what the catalogue (§3d) saw in 0.5.23.",
        fix="Give `--cuda-graph-bs` every size from 1 to the running-request limit (48 by default for "
        "speculative decoding), so no replay is padded and none falls back to eager.",
        fix_safety="Unsafe: more CUDA graphs are captured (start-up time and graph memory).",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3_CHAIN, "--disable-cuda-graph-padding"),
        sglang_version="0.4.9.post2",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3_CHAIN, "--disable-cuda-graph-padding"),
        sglang_version="0.5.3",
    ),
    sources=(
        "seed: slime-speculative-decoding.en.md (Known Issues, workaround 4)",
        "sglang 0.5.2: python/sglang/srt/model_executor/cuda_graph_runner.py:169-183",
        "sglang 0.5.3: python/sglang/srt/server_args.py:690-692",
        "sglang 0.5.23: python/sglang/srt/arg_groups/cuda_graph_hook.py:506-508",
        "catalogue: shared/design/sglang-spec-checks.md §3(d), P30",
    ),
    sglang_versions="<0.5.3",
    dialects=SGLANG_DIALECTS,
)
