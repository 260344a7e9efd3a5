"""AB062 rocm-eagle-tp-rank-divergence."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.spec_params._shared import attn_dp_size
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import ROCM_VERIFY_BROADCAST


def check(ctx: CheckContext) -> Iterator[Finding]:
    gpu = ctx.env.gpu
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or gpu is None or gpu.platform != "rocm":
        return
    tp = ctx.spec.get("tp_size") or 1
    attn_tp = tp // max(attn_dp_size(ctx), 1)
    if attn_tp <= 1:
        return
    steps = ctx.spec.get("speculative_num_steps") or ctx.resolution.num_steps
    if ctx.version < ROCM_VERIFY_BROADCAST.release:
        yield RULE.finding(
            f"EAGLE-family verify on ROCm with {attn_tp} attention-TP ranks in SGLang {ctx.env.sglang_version}: ROCm "
            "always takes the greedy verify path, which decides the accepted drafts per rank without a broadcast, so "
            "near-tied logits can make ranks accept different counts and the next collective deadlocks (reported "
            "2 hangs in 5 runs). SGLang 0.5.18 broadcasts the decision; upgrade, or run attention TP 1",
            flags=("--tp-size",),
        )
    elif steps is not None and steps > 1:
        yield RULE.finding(
            f"EAGLE-family drafting on ROCm with {attn_tp} attention-TP ranks and {steps} draft steps: the draft "
            "sampling is not synchronised across ranks (only the verify decision is, from 0.5.18), so ranks can "
            "feed different draft tokens into the next step's collectives and hang silently at high concurrency. "
            f"{ctx.flag('--speculative-num-steps')} 1 avoids it",
            flags=("--speculative-num-steps",),
        )


RULE = Rule(
    check=check,
    code="AB062",
    category=Category.CRASH,
    name="rocm-eagle-tp-rank-divergence",
    summary="EAGLE-family speculation on ROCm with attention TP > 1, where TP ranks can diverge and deadlock",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="EAGLE, EAGLE3, NEXTN or STANDALONE on an AMD GPU with more than one attention-TP rank "
        "(`--tp-size` over the attention-DP size): before 0.5.18 always, from 0.5.18 with more than one draft step.",
        why="ROCm has no tree-sampling kernel, so verify is always the greedy path: 0.5.2-0.5.13 fall back to it "
        "because `TREE_SPEC_KERNEL_AVAILABLE` is CUDA/MUSA-only (0.5.13 speculative/spec_utils.py:72-74, "
        "eagle_info.py:335-347), 0.5.14-0.5.17 list `_is_hip` in its condition (0.5.14 eagle_utils.py:437). That "
        "branch takes a per-rank argmax and, unlike the sampling branch, broadcasts nothing, so floating-point "
        "differences between ranks (e.g. a non-deterministic all-reduce) make ranks accept different numbers of "
        "drafts, their batches diverge and the next collective deadlocks: issues 28815, 31071, PR 31478 (v0.5.12.post1, "
        "MI350X, tp 2), PR 34238 (4x MI355X, GLM-4.7-Flash, 2 hangs in 5 runs). PR 34238 adds the broadcast on ROCm "
        "from 0.5.18 (eagle_utils.py:741-754). The draft side still samples per rank: with more than one draft step "
        "ranks can diverge inside drafting (PR 35079, open; 0.5.23 has no draft-side sync). The hang is "
        "intermittent and data-dependent, hence a warning.",
        fix="Upgrade to 0.5.18+; there, one draft step (chain of 2) avoids the draft-side divergence. Attention "
        "TP 1 (DP attention over all GPUs) avoids both.",
        fix_safety="No automatic fix: each option changes the parallel layout or the draft length.",
    ),
    bad=Example(
        argv=("--model-path", "zai-org/GLM-4.7-Flash", "--tp", "4", "--speculative-algorithm", "EAGLE",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"),
        gpu="MI355X",
        sglang_version="0.5.17",
    ),
    good=Example(
        argv=("--model-path", "zai-org/GLM-4.7-Flash", "--tp", "4", "--speculative-algorithm", "EAGLE",
              "--speculative-num-steps", "1", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "2"),
        gpu="MI355X",
        sglang_version="0.5.18",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/28815",
        "https://github.com/sgl-project/sglang/issues/31071",
        "https://github.com/sgl-project/sglang/pull/31478",
        "https://github.com/sgl-project/sglang/pull/34238",
        "https://github.com/sgl-project/sglang/pull/35079",
        "sglang 0.5.13: python/sglang/srt/speculative/spec_utils.py:72-74; python/sglang/srt/speculative/eagle_info.py:335-347, 405-421",
        "sglang 0.5.14: python/sglang/srt/speculative/eagle_utils.py:437",
        "sglang 0.5.18: python/sglang/srt/speculative/eagle_utils.py:726-754",
    ),
    sglang_versions=">=0.5.2",
    dialects=SGLANG_DIALECTS,
)
