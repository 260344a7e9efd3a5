"""SP196 dp-spec-prefill-coordination-algorithm."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3, QWEN3_8B_DFLASH
from specguard.rules.spec_params.SP194_rejection_sampling_multi_layer_eagle import (
    multi_layer_source,
)
from specguard.sglang_facts.algorithms import DP_SPEC_PREFILL_COORDINATION_ALGORITHMS
from specguard.sglang_facts.changes import DSPARK_DP_SPEC_PREFILL_COORDINATION

COORDINATION = "SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION"


def _coordinated(ctx: CheckContext) -> tuple[str, ...]:
    """0.5.22 adds DSPARK to the algorithms the coordination serves (0.5.21: EAGLE and EAGLE3)."""
    if DSPARK_DP_SPEC_PREFILL_COORDINATION.present_in(ctx.version):
        return DP_SPEC_PREFILL_COORDINATION_ALGORITHMS
    return tuple(name for name in DP_SPEC_PREFILL_COORDINATION_ALGORITHMS if name != "DSPARK")


def check(ctx: CheckContext) -> Iterator[Finding]:
    # EnvBool's true spellings (0.5.21 environ.py:144-150); any other non-false value raises on its own.
    value = ctx.spec.env_value(COORDINATION)
    if value is None or value.lower() not in ("true", "1", "yes", "y"):
        return
    allowed = _coordinated(ctx)
    # The test runs whether or not speculation is on (handle_speculative_decoding has no early return), on the
    # algorithm after NEXTN is aliased to EAGLE.
    if ctx.algorithm is None:
        launch = "no speculative algorithm"
    elif ctx.algorithm not in allowed:
        launch = ctx.algorithm
    else:
        source = multi_layer_source(ctx)
        if source is None:
            return
        launch = f"multi-layer EAGLE ({source})"
    names = " or ".join(", ".join(allowed).rsplit(", ", 1))
    yield RULE.finding(
        f"{COORDINATION}={value} with {launch} in SGLang {ctx.version}: DP spec/prefill coordination serves only "
        f"single-layer {names}, so argument handling raises (ValueError 'DP spec/prefill coordination requires "
        f"single-layer {names}'). Unset {COORDINATION}",
        flags=("--speculative-algorithm",) if ctx.algorithm else (),
        fix=fix_of(
            f"unset {COORDINATION}",
            Applicability.UNSAFE,
            Edit(target="env", name=COORDINATION, value=None),
        ),
    )


RULE = Rule(
    check=check,
    code="SP196",
    category=Category.START,
    name="dp-spec-prefill-coordination-algorithm",
    summary="SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION refuses any launch but single-layer EAGLE/EAGLE3 "
    "(DSPARK from 0.5.22) (0.5.21+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION` on, SGLang 0.5.21 or later, with no speculative algorithm, "
        "an algorithm other than EAGLE/EAGLE3/NEXTN (and DSPARK from 0.5.22), or multi-layer EAGLE "
        "(`--enable-multi-layer-eagle`, or a target whose model override turns it on).",
        why="0.5.21 added the variable (environ.py:1373, EnvBool(False)); `handle_speculative_decoding` raises "
        "'DP spec/prefill coordination requires single-layer EAGLE or EAGLE3' when it is on and the resolved "
        "algorithm is not EAGLE/EAGLE3 or multi-layer EAGLE is enabled (speculative_hook.py:222-229). The test is "
        "not under `speculative_algorithm is not None`, and the hook has no early return, so a launch without "
        "speculation is refused too. 0.5.22 adds DSPARK to the set (speculative_hook.py:244-251), unchanged in "
        "0.5.23 (:252-259). 0.5.20 has no such variable.",
        fix=f"Unset `{COORDINATION}` unless the launch runs single-layer EAGLE/EAGLE3 (or DSPARK from 0.5.22).",
        fix_safety="Unsafe: DP ranks stop coordinating speculative decode with prefill, which changes scheduling.",
    ),
    bad=Example(argv=QWEN3_8B_DFLASH, env={COORDINATION: "1"}, sglang_version="0.5.21"),
    good=Example(
        argv=LLAMA31_8B_EAGLE3, env={COORDINATION: "1"}, sglang_version="0.5.21"
    ),
    sources=(
        "sglang 0.5.20: python/sglang/srt/environ.py (no SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION)",
        "sglang 0.5.21: python/sglang/srt/environ.py:1373; arg_groups/speculative_hook.py:120-229",
        "sglang 0.5.22: python/sglang/srt/arg_groups/speculative_hook.py:244-251",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:252-259",
    ),
    sglang_versions=">=0.5.21",
    log_signatures=(r"DP spec/prefill coordination requires single-layer EAGLE",),
)
