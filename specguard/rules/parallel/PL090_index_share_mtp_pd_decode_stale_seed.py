"""PL090 index-share-mtp-pd-decode-stale-seed."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs
from specguard.rules.spec_params._shared import int_flag
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

TOPK = "--speculative-eagle-topk"
GLM52_INDEX_SHARE = {"architectures": ("GlmMoeDsaForCausalLM",), "index_share_for_mtp_iteration": True}


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.target is None or ctx.target.index_share_for_mtp_iteration is not True:
        return
    if ctx.spec.get("disaggregation_mode") != "decode":
        return
    # 0.5.15 reuses the seed only for a chain draft (eagle_worker_v2.py:267-270); an untyped top-k
    # is left to SGLang's choice, which is 1 for these MTP targets.
    if ctx.spec.has(TOPK) and int_flag(ctx, TOPK) not in (None, 1):
        return
    yield RULE.finding(
        f"{ctx.algorithm} with top-k 1 on a PD decode node (--disaggregation-mode decode) and a target whose "
        "config.json sets index_share_for_mtp_iteration (GLM-5.2 IndexShare), in SGLang 0.5.15: the draft reuses "
        "the DSA indexer top-k seeded by the previous draft extend, but requests arriving from the prefill node "
        "carry no seed, so the decode node keeps a stale one whose row count no longer matches the batch and the "
        "scheduler dies in the seed copy_ as soon as the batch size changes (during warmup already). 0.5.15.post1 "
        "transfers the seed from the prefill node: upgrade, or serve without PD disaggregation on 0.5.15",
        flags=("--disaggregation-mode", "--speculative-algorithm"),
    )


RULE = Rule(
    check=check,
    code="PL090",
    category=Category.CRASH,
    name="index-share-mtp-pd-decode-stale-seed",
    summary="GLM-5.2 IndexShare MTP on a PD decode node crashes on a stale DSA top-k seed (0.5.15 only)",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="EAGLE-family speculation with top-k 1 and `--disaggregation-mode decode`, where the target's "
        "config.json has `index_share_for_mtp_iteration: true` (GLM-5.2), on SGLang 0.5.15.",
        why="PR 29787 (first in 0.5.15) seeds the draft's reused DSA indexer top-k from the draft extend: "
        "`seed_dsa_topk_from_draft_extend` is on for IndexShare targets with `index_topk` and top-k 1 (0.5.15 "
        "speculative/eagle_worker_v2.py:267-276), and the seed rides on the draft input across batches "
        "(eagle_worker_v2.py:975-984; speculative/eagle_info.py:236-285). On a PD decode node the first draft "
        "input is built from the prefill node's transfer, which in 0.5.15 has no seed, so the decode loop copies "
        "a seed of the wrong batch size and the scheduler crashes at the `dsa_seed_topk` copy_ as soon as one "
        "request finishes; with the built-in warmup of a PD deployment it already happens at start-up (issue "
        "30854, GLM-5.2-FP8, TP 8 x DP 8, EAGLE 5/1/6, tag v0.5.15). PR 30839, cherry-picked to the release as "
        "PR 31083, transfers per-request seeds from the prefill node with invalid sentinels (0.5.15.post1 "
        "speculative/eagle_disaggregation.py:54-71), so 0.5.15.post1 and later are not affected by this crash "
        "(PL062 covers the DP-attention hang that remains there).",
        fix="Upgrade to 0.5.15.post1 or later, or serve without PD disaggregation on 0.5.15.",
        fix_safety="No automatic fix: the release or the deployment shape has to change.",
    ),
    bad=Example(
        argv=("--model-path", "zai-org/GLM-5.2-FP8", "--tp-size", "8", "--disaggregation-mode", "decode",
              "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "5", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "6"),
        target=GLM52_INDEX_SHARE,
        sglang_version="0.5.15",
    ),
    good=Example(
        argv=("--model-path", "zai-org/GLM-5.2-FP8", "--tp-size", "8", "--disaggregation-mode", "decode",
              "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "5", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "6"),
        target=GLM52_INDEX_SHARE,
        sglang_version="0.5.15.post1",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/30854",
        "https://github.com/sgl-project/sglang/pull/30839",
        "https://github.com/sgl-project/sglang/pull/31083",
        "sglang 0.5.15: python/sglang/srt/speculative/eagle_worker_v2.py:267-276, 975-984",
        "sglang 0.5.15.post1: python/sglang/srt/speculative/eagle_disaggregation.py:54-71",
    ),
    sglang_versions="==0.5.15",
)
