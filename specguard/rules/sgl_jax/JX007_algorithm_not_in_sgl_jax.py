"""JX007 algorithm-not-in-sgl-jax."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Dialect, Finding, Severity
from specguard.rules.base import CheckContext, FixAvailability, Rule, RuleDocs
from specguard.rules.sgl_jax._jax import (
    algorithms_in,
    jax_example,
    raw_algorithm,
    runnable_in,
)
from specguard.sglang_facts.sgl_jax import NEXTN_RUNS, SPECULATIVE_DECODING


def check(ctx: CheckContext) -> Iterator[Finding]:
    algorithm = raw_algorithm(ctx)
    built = ctx.env.sgl_jax_built
    choices = algorithms_in(built)
    if algorithm is None:
        return
    if algorithm in choices:
        if algorithm in runnable_in(built):
            return
        if algorithm == "STANDALONE":
            message = (
                f"{ctx.flag('--speculative-algorithm')} STANDALONE passes sgl-jax's argument parser, but its scheduler "
                "builds a draft worker only for EAGLE, EAGLE3, NEXTN and DFLASH, then calls it: the start fails with "
                "AttributeError: 'Scheduler' object has no attribute 'draft_worker' (at precompile, or at the first "
                "request with --disable-precompile), at every build to the HEAD specguard read. Use EAGLE3 with an "
                "EAGLE3 draft"
            )
        else:
            message = (
                f"{ctx.flag('--speculative-algorithm')} {algorithm} passes this sgl-jax build's argument parser "
                f"({built}), but its SpeculativeAlgorithm.from_string has no {algorithm}: the scheduler raises "
                f"KeyError: '{algorithm}' as it starts. {NEXTN_RUNS.ref} ({NEXTN_RUNS.first.isoformat()}) made it run; "
                "use a build from then on (EAGLE with the MTP draft served the same role before)"
            )
        yield RULE.finding(message, flags=("--speculative-algorithm",))
        return
    flag = ctx.flag("--speculative-algorithm")
    if not choices:
        yield RULE.finding(
            f"this sgl-jax build ({built}) predates speculative decoding ({SPECULATIVE_DECODING.ref}, "
            f"{SPECULATIVE_DECODING.first.isoformat()}): it has no {flag}, and argparse exits on it. PyPI's "
            "sglang-jax (0.0.1.post1) is such a build: install sgl-jax from a recent checkout",
            flags=("--speculative-algorithm",),
        )
        return
    if algorithm in algorithms_in(None):
        message = f"{flag} {algorithm} is not in this sgl-jax build ({built}; its choices: {', '.join(choices)}): it arrived later"
    else:
        message = (
            f"{flag} {algorithm} is an SGLang algorithm that sgl-jax does not have "
            f"(its choices: {', '.join(choices)}): argparse exits before anything loads"
            + (". For draft-free speculation on TPU there is no NGRAM; use an EAGLE3 draft or NEXTN for MTP models"
               if algorithm == "NGRAM" else "")
        )
    yield RULE.finding(message, flags=("--speculative-algorithm",))


RULE = Rule(
    check=check,
    code="JX007",
    category=Category.START,
    name="algorithm-not-in-sgl-jax",
    summary="sgl-jax: a speculative algorithm the build does not run (NGRAM, STANDALONE; NEXTN before #1192)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm` in an sgl-jax launch against sgl-jax's choices "
        "(EAGLE, EAGLE3, NEXTN, STANDALONE, DFLASH).",
        why="sgl-jax declares `choices` for the flag; NGRAM (and SGLang's UNO, DSPARK, FROZEN_KV_MTP) "
        "are not among them, so the launch fails at argument parsing. DFLASH is recent: the first "
        "speculative version (#378, 2025-11-19) had only EAGLE, EAGLE3, NEXTN and STANDALONE; DFLASH came with "
        "#1467 (2026-07-28), and builds before #378 (PyPI's sglang-jax 0.0.1.post1 among them) have no speculative "
        "flags at all. NEXTN was among the choices from #378 but `SpeculativeAlgorithm.from_string` had no "
        "NEXTN key until #1192 (10fe9e8b, 2026-05-28; f671c326 spec_info.py:30-39 against 10fe9e8b :85-95), so "
        "before it a NEXTN launch passed argparse and died with KeyError: 'NEXTN' as the scheduler started "
        "(the v0.0.3rc tags are such builds: their code is main's of 2026-05-27). STANDALONE is a choice at "
        "every build but never runs: the scheduler builds a draft worker only for `is_eagle()` algorithms "
        "(EAGLE, EAGLE3, and NEXTN from #1192) and DFLASH (f671c326 scheduler.py:231-236; cddbf6f1 :383-417), "
        "then calls `self.draft_worker` (cddbf6f1 :561, and every speculative decode step), an AttributeError. "
        "With `--sgl-jax-version` the choices are those of that build.",
        fix="No automatic fix: the replacement needs a draft model (EAGLE3) or MTP layers (NEXTN).",
        fix_safety="No fix is offered.",
    ),
    bad=jax_example(base=("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "NGRAM")),
    good=jax_example("--speculative-eagle-topk", "1", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4",
                     "--disable-overlap-schedule"),
    sources=(
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/server_args.py (--speculative-algorithm choices)",
        "sglang-jax f671c326 (#378) and 4406938a (#1467): server_args.py --speculative-algorithm choices",
        "sglang-jax f671c326: python/sgl_jax/srt/speculative/spec_info.py:30-39 (from_string without NEXTN); 10fe9e8b (#1192) :85-95",
        "sglang-jax f671c326: python/sgl_jax/srt/managers/scheduler.py:231-236, 345; cddbf6f1 :383-417, 561 (no STANDALONE worker)",
        "PyPI sglang-jax 0.0.1.post1 wheel: sgl_jax/srt/server_args.py has no speculative flag",
        "seed: sgl-jax-speculative-decoding.md (--speculative-algorithm {EAGLE,EAGLE3,NEXTN,STANDALONE})",
        "design: shared/design/dialects.md §2",
    ),
    dialects=(Dialect.SGL_JAX,),
)
