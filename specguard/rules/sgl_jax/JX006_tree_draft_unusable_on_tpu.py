"""JX006 tree-draft-unusable-on-tpu."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Dialect, Finding, Severity
from specguard.rules.base import (
    CheckContext,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.sgl_jax._jax import (
    TOPK_DRAFT_ALGORITHMS,
    jax_example,
    params,
    raw_algorithm,
)

# sglang-jax#1611 (2026-09-08, open): "Tree drafting (--speculative-eagle-topk > 1) is unusable today. No
# configuration reaches even a single tree draft step". Read against sgl-jax HEAD cddbf6f1 (2026-08-21).
TREE_DRAFT_REPORT = "sglang-jax#1611"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if raw_algorithm(ctx) not in TOPK_DRAFT_ALGORITHMS:
        return
    steps, topk, _ = params(ctx)
    if topk <= 1:
        return
    given = "" if ctx.spec.get("speculative_eagle_topk") is not None else " (sgl-jax's default)"
    yield RULE.finding(
        f"topk {topk}{given} asks sgl-jax for a draft tree, and sgl-jax cannot run one: the server either "
        "refuses to start (the overlap check) or crashes in the startup precompile, so no tree draft step ever "
        f"runs ({TREE_DRAFT_REPORT}: the draft-decode mask, its length contract and the post-verify "
        "bookkeeping are unfinished). Adding --disable-overlap-schedule only moves the failure to the "
        f"precompile. Use a chain: topk 1 with {ctx.flag('--speculative-num-draft-tokens')} = steps + 1, the "
        "configuration sgl-jax validates on TPU",
        flags=("--speculative-eagle-topk",),
        fix=set_flags(f"use a chain: topk 1, {steps + 1} draft tokens", Applicability.UNSAFE,
                      speculative_eagle_topk=1, speculative_num_draft_tokens=steps + 1),
    )


RULE = Rule(
    check=check,
    code="JX006",
    category=Category.START,
    name="tree-draft-unusable-on-tpu",
    summary="sgl-jax: topk above 1 (a draft tree), which sgl-jax cannot run",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="sgl-jax EAGLE-family launches (EAGLE, EAGLE3, NEXTN, STANDALONE) whose topk (typed, or sgl-jax's "
        "default 5) is above 1.",
        why="sgl-jax ports SGLang's tree drafting only in part. sglang-jax#1611 (2026-09-08, against main "
        "after HEAD cddbf6f1): 'Tree drafting (`--speculative-eagle-topk > 1`) is unusable today. No "
        "configuration reaches even a single tree draft step: the server either refuses to start or crashes "
        "during startup precompile'; the missing pieces are the draft-decode mask, one length contract "
        "and the post-verify bookkeeping. sgl-jax's own default is topk 5 (`server_args.py:235`), so a "
        "launch that leaves topk unset builds a tree: with the overlap scheduler it stops at the overlap "
        "check, whose message asks for `--disable-overlap-schedule`, and with that flag it crashes in the "
        "precompile. The speculative test pins topk 1 ('FIXME(pc) topk > 1 has poor performance now'), and "
        "the only validated configuration (Qwen3-32B + AngelSlim EAGLE3 on TPU) is topk 1, steps 3, draft "
        "tokens 4. DFLASH is excluded (its own checks require topk 1, JX005).",
        fix="Use topk 1 with draft tokens = steps + 1.",
        fix_safety="Unsafe: the draft changes shape from a tree to a chain (acceptance per step changes).",
    ),
    bad=jax_example("--speculative-num-steps", "3", "--disable-overlap-schedule"),
    good=jax_example("--speculative-eagle-topk", "1", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4",
                     "--disable-overlap-schedule"),
    sources=(
        "https://github.com/sgl-project/sglang-jax/issues/1611 ('Tree drafting ... is unusable today')",
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/server_args.py (speculative_eagle_topk default 5; overlap check)",
        "sglang-jax HEAD cddbf6f1: test/srt/test_speculative_decoding.py (FIXME(pc) topk > 1 has poor performance now)",
        "seed: sgl-jax-speculative-decoding.md (Known Gaps: verifying branched candidate tokens is incomplete)",
        "design: shared/design/dialects.md §2",
    ),
    dialects=(Dialect.SGL_JAX,),
)
