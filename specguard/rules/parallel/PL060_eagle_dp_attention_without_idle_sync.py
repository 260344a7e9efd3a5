"""PL060 eagle-dp-attention-without-idle-sync."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.spec_params._shared import (
    attn_dp_enabled,
    attn_dp_flags,
    drop_attn_dp,
)
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or not attn_dp_enabled(ctx):
        return
    flags = attn_dp_flags(ctx)
    written = " ".join(ctx.flag(f) for f in flags)
    yield RULE.finding(
        f"{ctx.algorithm} with DP attention ({written}) in SGLang {ctx.env.sglang_version}: the EAGLE worker has no "
        "idle-batch draft path and does not agree across DP ranks on the draft extend, so a rank without requests "
        "skips a collective the others enter; reports show an AttributeError at start-up, a crash on the first "
        "requests or a hang. MTP/EAGLE with DP attention works from SGLang 0.4.8: upgrade, or turn DP attention off",
        flags=flags,
        fix=drop_attn_dp("turn attention DP off"),
    )


RULE = Rule(
    check=check,
    code="PL060",
    category=Category.CRASH,
    name="eagle-dp-attention-without-idle-sync",
    summary="EAGLE/NEXTN with DP attention before SGLang 0.4.8, whose EAGLE worker had no idle-rank path",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 or NEXTN with `--enable-dp-attention` (and `--dp-size` > 1) on SGLang before 0.4.8.",
        why="Under DP attention every DP rank runs each step, the ranks without requests as IDLE batches. Up to "
        "0.4.7 the EAGLE worker ran only the target for an idle batch (0.4.7 speculative/eagle_worker.py:"
        "311-317) and decided the draft extend per rank, so ranks disagree on the draft's collectives. Users "
        "hit it as 'DP + MTP init failed' (issue 4783, 0.4.4.post1, DeepSeek-R1 on two H20 nodes), an "
        "AttributeError (issue 4847), a hang on two nodes (issue 6296) and a crash of R1-0528 (issue 6891); in "
        "April 2025 the maintainers answered that the two were not meant to be combined. PR 6081 ('mtp "
        "support dp-attention') first shipped in 0.4.8: the worker builds idle draft inputs "
        "(`_draft_preprocess_idle`, 0.4.8 eagle_worker.py:492-504) and all-reduces whether any rank needs the "
        "draft extend (`check_forward_draft_extend_after_decode`, :339-350). SGLang checks nothing at argument "
        "time.",
        fix="Upgrade to 0.4.8+, or turn attention DP off.",
        fix_safety="Unsafe: it changes the parallel layout.",
    ),
    bad=Example(
        argv=("--model-path", "deepseek-ai/DeepSeek-R1", "--tp", "8", "--dp", "8", "--enable-dp-attention",
              "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "2"),
        sglang_version="0.4.6.post5",
    ),
    good=Example(
        argv=("--model-path", "deepseek-ai/DeepSeek-R1", "--tp", "8", "--dp", "8", "--enable-dp-attention",
              "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "2"),
        sglang_version="0.4.8",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/4783",
        "https://github.com/sgl-project/sglang/issues/4847",
        "https://github.com/sgl-project/sglang/issues/6296",
        "https://github.com/sgl-project/sglang/issues/6891",
        "https://github.com/sgl-project/sglang/pull/6081",
        "sglang 0.4.7: python/sglang/srt/speculative/eagle_worker.py:311-317",
        "sglang 0.4.8: python/sglang/srt/speculative/eagle_worker.py:339-350, 492-504",
    ),
    sglang_versions="<0.4.8",
)
