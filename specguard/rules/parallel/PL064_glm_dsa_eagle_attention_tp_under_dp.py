"""PL064 glm-dsa-eagle-attention-tp-under-dp."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs
from specguard.rules.spec_params._shared import (
    attn_dp_flags,
    attn_dp_size,
)
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

GLM_DSA_ARCHS = frozenset({"GlmMoeDsaForCausalLM"})


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.target is None or ctx.target.architecture not in GLM_DSA_ARCHS:
        return
    dp = attn_dp_size(ctx)
    tp = ctx.spec.get("tp_size") or 1
    if dp <= 1 or tp // dp <= 1:
        return
    written = " ".join(ctx.flag(f) for f in attn_dp_flags(ctx))
    yield RULE.finding(
        f"GLM-5.x (DSA) with {ctx.algorithm} and DP attention ({written}) leaving {tp // dp} attention-TP ranks per DP "
        f"group, in SGLang {ctx.env.sglang_version}: the speculative draft/verify path hands the DSA kernels query and "
        "KV metadata that disagree and the server fails (reported on 0.5.14 and 0.5.15 with attention TP 4 and 8; "
        f"attention TP 1 works). Set the DP size equal to {ctx.flag('--tp-size')} ({tp}), or serve without speculation",
        flags=attn_dp_flags(ctx),
    )


RULE = Rule(
    check=check,
    code="PL064",
    category=Category.CRASH,
    name="glm-dsa-eagle-attention-tp-under-dp",
    summary="GLM-5.x (DSA) with EAGLE/MTP and DP attention whose groups keep attention TP > 1 fails in the DSA kernels (0.5.14-0.5.15)",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="A `GlmMoeDsaForCausalLM` target with EAGLE-family speculation and attention DP where tp / dp > 1, "
        "on SGLang 0.5.14-0.5.15.",
        why="Issue 30296 (GLM-5.2-FP8, 0.5.14, TP 32 over 4 nodes) tabulates it: DP 32 (attention TP 1) with "
        "EAGLE works, DP 8 (attention TP 4) and DP 4 (attention TP 8) with EAGLE fail at the DSA attention kernel "
        "boundary (query-side varlen metadata and KV-side batch metadata disagree in the draft/verify path), and "
        "DP 4 without speculation works. Issue 31384 (GLM-5.2-FP8, v0.5.15 image, 2x H20, TP 16) reports the same "
        "split: DP 16 serves, DP 2 fails with EAGLE and works without it. Neither thread links a fix, so the rule "
        "covers the two releases reported and says nothing about later ones.",
        fix="Use DP size = TP size (attention TP 1), which both reports found to work, or drop speculation.",
        fix_safety="No automatic fix: the DP layout changes memory and throughput.",
    ),
    bad=Example(
        argv=("--model-path", "zai-org/GLM-5.2-FP8", "--tp", "32", "--dp", "4", "--ep", "32", "--enable-dp-attention",
              "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "5", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "6"),
        target={"architectures": ("GlmMoeDsaForCausalLM",)},
        sglang_version="0.5.14",
    ),
    good=Example(
        argv=("--model-path", "zai-org/GLM-5.2-FP8", "--tp", "32", "--dp", "32", "--ep", "32", "--enable-dp-attention",
              "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "5", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "6"),
        target={"architectures": ("GlmMoeDsaForCausalLM",)},
        sglang_version="0.5.14",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/30296",
        "https://github.com/sgl-project/sglang/issues/31384",
    ),
    sglang_versions=">=0.5.14,<0.5.16",
)
