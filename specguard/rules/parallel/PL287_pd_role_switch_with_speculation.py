"""PL287 pd-role-switch-with-speculation."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3

ROLE_SWITCH = "--enable-pd-role-switch"


def check(ctx: CheckContext) -> Iterator[Finding]:
    # The check sits in the PD branch of handle_pd_disaggregation: without a PD role the flag is not read here.
    if (
        ctx.algorithm is None
        or not ctx.spec.has(ROLE_SWITCH)
        or ctx.spec.get("disaggregation_mode") not in ("prefill", "decode")
    ):
        return
    yield RULE.finding(
        f"{ctx.flag(ROLE_SWITCH)} with {ctx.algorithm} on a PD {ctx.spec.get('disaggregation_mode')} node in SGLang "
        f"{ctx.version}: a role flip does not rebuild the speculative state, so SGLang raises ValueError "
        "'--enable-pd-role-switch does not rebuild role-specific state for the following features: speculative "
        f"decoding (--speculative-algorithm ...)' at argument time. Drop {ctx.flag(ROLE_SWITCH)} or the speculation",
        flags=(ROLE_SWITCH, "--speculative-algorithm"),
    )


PD_PREFILL_EAGLE3 = (
    *LLAMA31_8B_EAGLE3,
    "--disaggregation-mode",
    "prefill",
    ROLE_SWITCH,
)

RULE = Rule(
    check=check,
    code="PL287",
    category=Category.START,
    name="pd-role-switch-with-speculation",
    summary="--enable-pd-role-switch on a PD node with any speculative algorithm is refused at argument time (0.5.21+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--enable-pd-role-switch` with `--disaggregation-mode` prefill or decode and any `--speculative-algorithm`, "
        "SGLang 0.5.21 or later.",
        why="0.5.21 added runtime prefill<->decode role switching (arg_groups/fields/disagg.py:112-115) and, in the PD "
        "branch of `handle_pd_disaggregation`, a list of features whose role-specific state a flip does not rebuild: "
        "speculative decoding is one of them, and any entry raises ValueError '--enable-pd-role-switch does not "
        "rebuild role-specific state for the following features: ... Remove these options or drop "
        "--enable-pd-role-switch.' (arg_groups/pd_disaggregation_hook.py:147, 158-189). 0.5.22 (:191-198) and 0.5.23 "
        "(:185-192) keep it; 0.5.20 has no such flag.",
        fix="Drop `--enable-pd-role-switch` (fixed PD roles), or serve without speculative decoding.",
        fix_safety="No automatic fix: role switching and speculation are both deployment choices.",
    ),
    bad=Example(argv=PD_PREFILL_EAGLE3, sglang_version="0.5.21"),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--disaggregation-mode", "prefill"),
        sglang_version="0.5.21",
    ),
    sources=(
        "sglang 0.5.20: python/sglang/srt/arg_groups/pd_disaggregation_hook.py (no enable_pd_role_switch)",
        "sglang 0.5.21: python/sglang/srt/arg_groups/pd_disaggregation_hook.py:147,158-189; arg_groups/fields/disagg.py:112-115",
        "sglang 0.5.22: python/sglang/srt/arg_groups/pd_disaggregation_hook.py:172,191-198",
        "sglang 0.5.23: python/sglang/srt/arg_groups/pd_disaggregation_hook.py:165,185-192",
    ),
    sglang_versions=">=0.5.21",
    log_signatures=(
        r"--enable-pd-role-switch does not rebuild role-specific state for the following features: .*speculative decoding",
    ),
)
