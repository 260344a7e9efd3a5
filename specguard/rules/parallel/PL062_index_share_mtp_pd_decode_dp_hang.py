"""PL062 index-share-mtp-pd-decode-dp-hang."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs
from specguard.rules.spec_params._shared import (
    attn_dp_enabled,
    attn_dp_flags,
    drop_attn_dp,
)
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

GLM52_INDEX_SHARE = {"architectures": ("GlmMoeDsaForCausalLM",), "index_share_for_mtp_iteration": True}


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.target is None or ctx.target.index_share_for_mtp_iteration is not True:
        return
    if ctx.spec.get("disaggregation_mode") != "decode" or not attn_dp_enabled(ctx):
        return
    written = " ".join(ctx.flag(f) for f in attn_dp_flags(ctx))
    yield RULE.finding(
        f"{ctx.algorithm} on a PD decode node with DP attention ({written}) and a target whose config.json sets "
        "index_share_for_mtp_iteration (GLM-5.2 IndexShare), in SGLang "
        f"{ctx.env.sglang_version}: requests arriving from the prefill node carry no DSA top-k seed, so only the "
        "DP ranks that hold them drop the draft to eager while idle ranks replay the CUDA graph; the ranks then "
        "meet different collectives and the decode server hangs in warmup or on the first requests. Run the "
        "decode node without DP attention, or without PD disaggregation (the seed is then produced locally)",
        flags=attn_dp_flags(ctx),
        fix=drop_attn_dp("turn attention DP off on the decode node"),
    )


RULE = Rule(
    check=check,
    code="PL062",
    category=Category.CRASH,
    name="index-share-mtp-pd-decode-dp-hang",
    summary="GLM-5.2 IndexShare MTP on a PD decode node with DP attention: DP ranks disagree on draft graph replay and hang",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="EAGLE-family speculation (the target's MTP) with `--disaggregation-mode decode` and attention DP, "
        "where the target's config.json has `index_share_for_mtp_iteration: true` (GLM-5.2), from 0.5.15.post1.",
        why="With IndexShare the draft reuses the indexer top-k that the draft extend seeds. PR 30839 (first in "
        "0.5.15.post1) made `EAGLEWorkerV2.draft` fall back to eager on a rank whose batch lacks that seed, a "
        "rank-local decision taken after the DP-attention MLP sync (0.5.23 speculative/eagle_worker_v2.py:673-679; "
        "absent from 0.5.15). On a PD decode node the requests come from the prefill node without the seed "
        "(0.5.23 speculative/eagle_disaggregation.py:124-134 marks them not graph-compatible), so busy ranks run "
        "the draft eager while idle ranks replay the captured graph and the NCCL all-gathers of the two paths "
        "mismatch: issue 32527 (zai-org/GLM-5.2-FP8, TP 8 x DP 8, EAGLE 3/1/4, hang in warmup; removing EAGLE, DP "
        "attention or IndexShare avoids it) and PR 32209 (nvidia/GLM-5.2-NVFP4). Without disaggregation the seed "
        "is produced locally on every rank and the server runs. The fixes that vote the decision across DP ranks "
        "(PRs 32196, 32209) are open; only the NPU runner got one (PR 32210), so up to 0.5.23 CUDA is affected.",
        fix="Run the decode node without attention DP, or serve without PD disaggregation, until a release syncs "
        "the draft's graph decision across DP ranks.",
        fix_safety="Unsafe: dropping attention DP changes the parallel layout and the KV capacity.",
    ),
    bad=Example(
        argv=("--model-path", "zai-org/GLM-5.2-FP8", "--tp", "8", "--dp", "8", "--enable-dp-attention",
              "--disaggregation-mode", "decode", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
              "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"),
        target=GLM52_INDEX_SHARE,
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=("--model-path", "zai-org/GLM-5.2-FP8", "--tp", "8", "--disaggregation-mode", "decode",
              "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
              "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"),
        target=GLM52_INDEX_SHARE,
        sglang_version="0.5.16",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/32527",
        "https://github.com/sgl-project/sglang/pull/32209",
        "https://github.com/sgl-project/sglang/pull/32196",
        "https://github.com/sgl-project/sglang/pull/32210",
        "sglang 0.5.15.post1: python/sglang/srt/speculative/eagle_worker_v2.py (the seed check in draft(); absent in 0.5.15)",
        "sglang 0.5.23: python/sglang/srt/speculative/eagle_worker_v2.py:673-679; python/sglang/srt/speculative/eagle_disaggregation.py:124-134",
    ),
    sglang_versions=">=0.5.15.post1",
)
