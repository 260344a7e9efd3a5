"""JX002 overlap-scheduler-speculative."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Dialect, Finding, Severity
from specguard.rules.base import CheckContext, Rule, RuleDocs, set_flags
from specguard.rules.sgl_jax._jax import (
    backend,
    jax_example,
    params,
    raw_algorithm,
)
from specguard.sglang_facts.sgl_jax import EAGLE3_OVERLAP, OVERLAP_RELAXED


def overlap_supported(ctx: CheckContext) -> bool:
    """From #1293: NEXTN with topk 1 and draft tokens = steps + 1; DFLASH from its arrival (#1467,
    which added it to the list); EAGLE3 on fa with the same chain only from #1534."""
    algorithm = raw_algorithm(ctx)
    if algorithm == "DFLASH":
        return True
    steps, topk, draft = params(ctx)
    chain = topk == 1 and draft == steps + 1
    if algorithm == "EAGLE3":
        built = ctx.env.sgl_jax_built
        return chain and backend(ctx) == "fa" and (built is None or EAGLE3_OVERLAP.present_in(built))
    return algorithm == "NEXTN" and chain


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or ctx.spec.get("disable_overlap_schedule"):
        return
    flag = ctx.flag("--disable-overlap-schedule")
    fix = set_flags(f"add {flag}", Applicability.SAFE, disable_overlap_schedule=True)
    relaxed = f"{OVERLAP_RELAXED.ref}, {OVERLAP_RELAXED.first.isoformat()}"
    built = ctx.env.sgl_jax_built
    if built is not None and not OVERLAP_RELAXED.present_in(built):
        yield RULE.finding(
            f"this sgl-jax build ({built.isoformat()}) predates {relaxed}: it raises 'Speculative decoding does "
            f"not support overlap scheduler' for every speculative launch without {flag}: add it",
            flags=("--disable-overlap-schedule",),
            fix=fix,
        )
        return
    if not overlap_supported(ctx):
        eagle3 = f"{EAGLE3_OVERLAP.ref}, {EAGLE3_OVERLAP.first.isoformat()}"
        before_eagle3 = built is not None and raw_algorithm(ctx) == "EAGLE3" and not EAGLE3_OVERLAP.present_in(built)
        yield RULE.finding(
            (
                f"this sgl-jax build ({built.isoformat()}) predates {eagle3}, which let EAGLE3 on fa with "
                "topk 1 and draft tokens = steps + 1 overlap: before it sgl-jax raises 'Speculative overlap "
                "scheduler only supports DFLASH or NEXTN with --speculative-eagle-topk=1 ...' for every EAGLE3 "
                f"launch without {flag}: add it"
                if before_eagle3 and built is not None
                else f"sgl-jax raises 'Speculative overlap scheduler only supports DFLASH, EAGLE3+FA, or NEXTN with "
                f"--speculative-eagle-topk=1 and --speculative-num-draft-tokens == --speculative-num-steps + 1' "
                f"for this {raw_algorithm(ctx)} configuration: add {flag} (sgl-jax builds before {relaxed} "
                "require it for every speculative launch)"
            ),
            flags=("--disable-overlap-schedule",),
            fix=fix,
        )
        return
    if raw_algorithm(ctx) == "EAGLE3":
        yield RULE.finding(
            f"sgl-jax accepts the overlap scheduler for this EAGLE3 configuration since "
            f"{EAGLE3_OVERLAP.ref}, {EAGLE3_OVERLAP.first.isoformat()}, but "
            f"its guide recommends {flag} for EAGLE3 (the verify pass reuses mutable draft metadata), "
            + ("builds before that change reject the launch without it, " if built is None else "")
            + "and the validated TPU command sets it",
            flags=("--disable-overlap-schedule",),
            severity=Severity.INFO,
        )


RULE = Rule(
    check=check,
    code="JX002",
    category=Category.START,
    name="overlap-scheduler-speculative",
    summary="sgl-jax: the overlap scheduler is on for a speculative configuration it does not support",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="sgl-jax speculative launches without `--disable-overlap-schedule`, with sgl-jax's "
        "defaults (steps 4, topk 5, draft tokens 4) filled in.",
        why="At sgl-jax HEAD the overlap scheduler is allowed only for DFLASH, for EAGLE3 on the fa "
        "backend with topk 1 and draft tokens = steps + 1, and for NEXTN with the same topk/draft "
        "rule; anything else raises ValueError at argument parsing. The list grew commit by commit: "
        "the first speculative version (#378, 2025-11-19) raised for every speculative launch without "
        "the flag; #1293 (2026-06-24) let NEXTN chains overlap; #1467 (2026-07-28) brought DFLASH "
        "with overlap; #1534 (2026-08-21) added EAGLE3 on fa. With `--sgl-jax-version` naming a build, "
        "the list of that build applies. The guide recommends the flag for EAGLE3 in any case (info).",
        fix="Add `--disable-overlap-schedule`.",
        fix_safety="Safe: it only stops the host scheduler from overlapping with the device step; the "
        "tokens produced are the same, and sgl-jax refuses to start otherwise.",
    ),
    bad=jax_example("--speculative-eagle-topk", "4", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "8"),
    good=jax_example("--speculative-eagle-topk", "4", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "8",
                     "--disable-overlap-schedule"),
    sources=(
        "seed: sgl-jax-speculative-decoding.md (--disable-overlap-schedule: recommended for EAGLE3)",
        "sglang-jax f671c326 (#378): python/sgl_jax/srt/server_args.py (overlap disallowed with speculation)",
        "sglang-jax b735f16e (#1293): python/sgl_jax/srt/server_args.py:1513-1527 (NEXTN chains only)",
        "sglang-jax 4406938a (#1467): python/sgl_jax/srt/server_args.py:1796-1809 (DFLASH or NEXTN chains)",
        "sglang-jax 0348ee13 (#1534): python/sgl_jax/srt/server_args.py:1865-1886 (supports_eagle3_overlap)",
        "design: shared/design/dialects.md §2",
    ),
    dialects=(Dialect.SGL_JAX,),
)
