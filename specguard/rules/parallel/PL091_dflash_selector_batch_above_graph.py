"""PL091 dflash-selector-batch-above-graph."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.memory.estimate import configured_graph_bs
from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs
from specguard.sglang_facts.changes import selector_draft_class

# The DFLASH draft classes that carry a candidate selector (SELECTOR_DRAFT_CLASSES; 0.5.23
# models/dflash.py:1264-1330): their draft sampler is folded into the decode CUDA graph, with static
# buffers sized to its largest batch.


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DFLASH":
        return
    draft_arch = ctx.draft.architecture if ctx.draft is not None else None
    if draft_arch is not None and not selector_draft_class(draft_arch, ctx.version):
        return
    mrr = ctx.resolution.max_running_requests
    configured = configured_graph_bs(ctx.spec, ctx.env)
    if not mrr or not configured or mrr <= max(configured):
        return
    largest = max(configured)
    which = (
        f"the draft ({draft_arch}) has a candidate selector"
        if draft_arch is not None
        else "if the draft is a DFlash2 selector draft (its config.json was not read)"
    )
    yield RULE.finding(
        f"DFLASH with {ctx.flag('--max-running-requests')} {mrr} above the largest decode CUDA-graph batch size "
        f"{largest}, in SGLang {ctx.env.sglang_version}: {which}, its graph-folded sampler stages the sampling "
        f"parameters of every batch into buffers sized for {largest} requests before the runner decides to run "
        f"eager, so the first batch of {largest + 1} requests fails (RuntimeError: The size of tensor a ({largest}) "
        f"must match the size of tensor b ({largest + 1}) in stage_sampling_params) and the TP schedulers exit. "
        f"Cap {ctx.flag('--max-running-requests')} at {largest}, or raise the decode graph batch size to {mrr}",
        flags=("--max-running-requests", "--cuda-graph-max-bs-decode"),
        # A warning even for a known selector draft: the server starts and serves until the load
        # first forms a batch above the largest graph; an error is for a launch that fails (#25).
    )


RULE = Rule(
    check=check,
    code="PL091",
    category=Category.CRASH,
    name="dflash-selector-batch-above-graph",
    summary="DFLASH selector draft with more running requests than its largest decode CUDA graph crashes in stage_sampling_params",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="DFLASH with a DFlash2 selector draft (`DFlash2DraftModel`, `DFlash2BeamDraftModel`, "
        "`MiniMaxDFlash2DraftModel`), or a draft whose config.json is unknown, where the "
        "resolved `--max-running-requests` is above the largest decode CUDA-graph batch size, from 0.5.19.",
        why="0.5.19 folds a selector draft's sampling into the draft's decode CUDA graph: `_SelectorDraftSampler` "
        "allocates its static `temperatures`/`greedy_mask` buffers for `max(cuda_graph_config.decode.bs)` "
        "(0.5.19 speculative/dflash_worker_v2.py:212-237, 528) and `stage_sampling_params` copies every batch into "
        "them before `draft_model_runner.forward` decides whether the batch can replay a graph (0.5.19 "
        "dflash_worker_v2.py:2006-2012; 0.5.23 dflash_worker_v2.py:280-296, 2676-2683). A batch above the largest "
        "captured size, which should fall back to eager, overflows the buffers: PR 37531 shows it with draft size "
        "8, `--max-running-requests 9`, `--cuda-graph-max-bs-decode 8` (RuntimeError: The size of tensor a (8) "
        "must match the size of tensor b (9), both TP schedulers terminate). The PR, which stages only batches "
        "that fit, is open; 0.5.23 still stages unconditionally. Plain DFLASH drafts do not stage parameters "
        "(the call is guarded by the selector), so the rule stays silent for a known non-selector draft.",
        fix="Cap `--max-running-requests` at the largest decode CUDA-graph batch size, or raise "
        "`--cuda-graph-max-bs-decode` (or the list) to cover the running requests.",
        fix_safety="No automatic fix: either the concurrency or the graph memory changes.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "DFLASH",
              "--speculative-draft-model-path", "dflash2-draft", "--speculative-num-draft-tokens", "8",
              "--max-running-requests", "9", "--cuda-graph-max-bs-decode", "8"),
        draft={"architectures": ("DFlash2DraftModel",)},
        sglang_version="0.5.19",
    ),
    good=Example(
        argv=("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "DFLASH",
              "--speculative-draft-model-path", "dflash2-draft", "--speculative-num-draft-tokens", "8",
              "--max-running-requests", "8", "--cuda-graph-max-bs-decode", "8"),
        draft={"architectures": ("DFlash2DraftModel",)},
        sglang_version="0.5.19",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/pull/37531",
        "sglang 0.5.19: python/sglang/srt/speculative/dflash_worker_v2.py:212-237, 528, 2006-2012",
        "sglang 0.5.23: python/sglang/srt/speculative/dflash_worker_v2.py:280-296, 907-923, 2676-2683; python/sglang/srt/models/dflash.py:1264-1330",
    ),
    sglang_versions=">=0.5.19",
)
