"""JX236 simulated-acceptance-in-serving."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Dialect, Edit, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of
from specguard.rules.sgl_jax._jax import (
    TOPK_DRAFT_ALGORITHMS,
    jax_example,
    params,
    raw_algorithm,
    runnable_in,
)
from specguard.sglang_facts.sgl_jax import SIMULATED_ACCEPTANCE_CHECKED

# sgl-jax says (d8b61193 to cddbf6f1 speculative/spec_utils.py:34-40): "Invalid SIMULATE_ACC_METHOD 'x'; expected
# 'match-expected' or 'multinomial'." and "Invalid SIMULATE_ACC_TOKEN_MODE 'x'; expected ...".
LENGTH = "SIMULATE_ACC_LEN"
METHOD = "SIMULATE_ACC_METHOD"
TOKEN_MODE = "SIMULATE_ACC_TOKEN_MODE"
METHODS = ("match-expected", "multinomial")
TOKEN_MODES = ("fixed", "real-draft-token")
# The token every accepted position is overwritten with: 100 up to d8b61193^ (f671c326 eagle_util.py:972),
# 32 from d8b61193 in the default 'fixed' mode (cddbf6f1 spec_utils.py:112-113).
OLD_FIXED_TOKEN = 100
FIXED_TOKEN = 32


def as_float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    algorithm = raw_algorithm(ctx)
    built = ctx.env.sgl_jax_built
    # The EAGLE-family verify paths apply it (eagle_info.py, draft_extend_fused.py); DFLASH's does not.
    if algorithm not in TOPK_DRAFT_ALGORITHMS or algorithm not in runnable_in(built):
        return
    length = ctx.spec.env_value(LENGTH)
    if not length:
        return
    unset = fix_of(f"unset {LENGTH}", Applicability.SAFE, Edit(target="env", name=LENGTH, value=None))
    flags = (LENGTH,)
    if built is not None and not SIMULATED_ACCEPTANCE_CHECKED.present_in(built):
        method = ctx.spec.env_value(METHOD) or "multinomial"
        if as_float(length) is None or method not in METHODS:
            yield RULE.finding(
                f"{LENGTH}={length!r} with {METHOD}={method!r} on this sgl-jax build ({built.isoformat()}): the first "
                "verify raises ValueError (the length must be a float, the method match-expected or multinomial)",
                flags=flags, fix=unset, severity=Severity.ERROR,
            )
            return
        yield RULE.finding(
            f"{LENGTH}={length} on this sgl-jax build ({built.isoformat()}): every {algorithm} verify replaces the "
            f"real acceptance with a simulated length and every predicted token with token id {OLD_FIXED_TOKEN}, so "
            f"the server returns garbage. It is a benchmarking hook: unset {LENGTH} to serve",
            flags=flags, fix=unset,
        )
        return
    value = as_float(length)
    if value is None:
        yield RULE.finding(
            f"{LENGTH}={length!r}: sgl-jax raises 'SIMULATE_ACC_LEN must be a float' when it imports its "
            "speculative verify, before the server starts",
            flags=flags, fix=unset, severity=Severity.ERROR,
        )
        return
    if value <= 0:
        return  # off (spec_utils.py: enabled = accept_len > 0)
    method = ctx.spec.env_value(METHOD) or "match-expected"
    mode = ctx.spec.env_value(TOKEN_MODE) or "fixed"
    if method not in METHODS or mode not in TOKEN_MODES:
        yield RULE.finding(
            f"{METHOD}={method!r}, {TOKEN_MODE}={mode!r}: with {LENGTH} set, sgl-jax raises 'Invalid "
            f"SIMULATE_ACC_...' when it imports its speculative verify (methods {', '.join(METHODS)}; token modes "
            f"{', '.join(TOKEN_MODES)})",
            flags=(LENGTH, METHOD, TOKEN_MODE), fix=unset, severity=Severity.ERROR,
        )
        return
    topk = params(ctx)[1]
    if mode == "real-draft-token" and topk != 1:
        yield RULE.finding(
            f"{TOKEN_MODE}=real-draft-token with --speculative-eagle-topk {topk}: the first verify raises "
            "\"SIMULATE_ACC_TOKEN_MODE='real-draft-token' requires speculative_eagle_topk=1.\"",
            flags=(TOKEN_MODE, "--speculative-eagle-topk"), fix=unset, severity=Severity.ERROR,
        )
        return
    served = (
        f"every accepted token with token id {FIXED_TOKEN}, so the server returns garbage"
        if mode == "fixed"
        else "the accepted tokens with the draft's own, unverified, so the output is not the target model's"
    )
    yield RULE.finding(
        f"{LENGTH}={length}: every {algorithm} verify replaces the real acceptance with a simulated length and "
        f"{served}. It is a benchmarking hook: unset {LENGTH} to serve",
        flags=flags, fix=unset,
    )


_EAGLE3 = ("--speculative-eagle-topk", "1", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4",
           "--disable-overlap-schedule")


def _example(env: dict[str, str]) -> Example:
    base = jax_example(*_EAGLE3)
    return Example(argv=base.argv, env=env, dialect=base.dialect, gpu=base.gpu)

RULE = Rule(
    check=check,
    code="JX236",
    category=Category.WRONG_OUTPUT,
    name="simulated-acceptance-in-serving",
    summary="sgl-jax: SIMULATE_ACC_LEN replaces verified tokens (or fails) in an EAGLE-family launch",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="sgl-jax EAGLE, EAGLE3 or NEXTN launches with the benchmarking env var `SIMULATE_ACC_LEN` set "
        "(with `SIMULATE_ACC_METHOD` and, from d8b61193, `SIMULATE_ACC_TOKEN_MODE`).",
        why="From the first speculative build (f671c326 eagle_util.py:48-49, :905-972) a non-empty "
        "`SIMULATE_ACC_LEN` makes the verify draw a simulated acceptance length and overwrite every predicted "
        "token with id 100 (a non-float length or a method other than multinomial/match-expected raises at the "
        "first verify). sglang-jax #1485 (d8b61193, 2026-07-31) parses the variables at import "
        "(spec_utils.py:21-48: a non-float length or an unknown method or token mode raises, a length <= 0 is "
        "off) and applies the simulation on every EAGLE-family verify path: the default `fixed` mode writes "
        "token id 32 (:112-113), `real-draft-token` keeps the draft's tokens unverified and needs topk 1 "
        "(:89-91). The same at cddbf6f1. Either way the served text is not the target model's.",
        fix=f"Unset `{LENGTH}` (it exists to benchmark acceptance, not to serve).",
        fix_safety="Safe: without it the server verifies drafts with the target model, as speculative decoding should.",
    ),
    bad=_example({LENGTH: "3.5"}),
    good=_example({LENGTH: "-1"}),
    sources=(
        "sglang-jax f671c326 (#378): python/sgl_jax/srt/speculative/eagle_util.py:48-49,905-972",
        "sglang-jax d8b61193 (#1485): python/sgl_jax/srt/speculative/spec_utils.py:21-48,89-91,112-113",
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/speculative/spec_utils.py:21-48,112-113; eagle_info.py:731; draft_extend_fused.py:220,367",
    ),
    dialects=(Dialect.SGL_JAX,),
    log_signatures=(
        r"SIMULATE_ACC_LEN must be a float",
        r"Invalid SIMULATE_ACC_(METHOD|TOKEN_MODE)",
        r"SIMULATE_ACC_TOKEN_MODE='real-draft-token' requires speculative_eagle_topk=1",
    ),
)
