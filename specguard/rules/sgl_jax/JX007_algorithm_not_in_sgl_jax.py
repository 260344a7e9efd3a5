"""JX007 algorithm-not-in-sgl-jax."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Dialect, Finding, Severity
from specguard.rules.base import CheckContext, FixAvailability, Rule, RuleDocs
from specguard.rules.sgl_jax._jax import ALGORITHMS, jax_example, raw_algorithm


def check(ctx: CheckContext) -> Iterator[Finding]:
    algorithm = raw_algorithm(ctx)
    if algorithm is None or algorithm in ALGORITHMS:
        return
    yield RULE.finding(
        f"{ctx.flag('--speculative-algorithm')} {algorithm} is an SGLang algorithm that sgl-jax does not have "
        f"(its choices: {', '.join(ALGORITHMS)}): argparse exits before anything loads"
        + (". For draft-free speculation on TPU there is no NGRAM; use an EAGLE3 draft or NEXTN for MTP models"
           if algorithm == "NGRAM" else ""),
        flags=("--speculative-algorithm",),
    )


RULE = Rule(
    check=check,
    code="JX007",
    name="algorithm-not-in-sgl-jax",
    summary="sgl-jax: a speculative algorithm only SGLang implements (NGRAM, ...)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm` in an sgl-jax launch against sgl-jax's choices "
        "(EAGLE, EAGLE3, NEXTN, STANDALONE, DFLASH).",
        why="sgl-jax declares `choices` for the flag; NGRAM (and SGLang's UNO, DSPARK, FROZEN_KV_MTP) "
        "are not among them, so the launch fails at argument parsing. DFLASH is recent: the first "
        "speculative version (#378) had only EAGLE, EAGLE3, NEXTN and STANDALONE.",
        fix="No automatic fix: the replacement needs a draft model (EAGLE3) or MTP layers (NEXTN).",
        fix_safety="No fix is offered.",
    ),
    bad=jax_example(base=("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "NGRAM")),
    good=jax_example("--speculative-eagle-topk", "1", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4",
                     "--disable-overlap-schedule"),
    sources=(
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/server_args.py (--speculative-algorithm choices)",
        "seed: sgl-jax-speculative-decoding.md (--speculative-algorithm {EAGLE,EAGLE3,NEXTN,STANDALONE})",
        "design: shared/design/dialects.md §2",
    ),
    dialects=(Dialect.SGL_JAX,),
)
