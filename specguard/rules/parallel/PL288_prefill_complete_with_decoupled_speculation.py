"""PL288 prefill-complete-with-decoupled-speculation."""

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
from specguard.rules.examples import LLAMA31_8B

POLICY = "--disaggregation-decode-allocation-policy"
ROLE = "--decoupled-spec-role"


def check(ctx: CheckContext) -> Iterator[Finding]:
    role = ctx.spec.last_value(ROLE)
    if ctx.spec.last_value(POLICY) != "prefill_complete" or role in (None, "null"):
        return
    yield RULE.finding(
        f"{ctx.flag(POLICY)} prefill_complete with {ctx.flag(ROLE)} {role} in SGLang {ctx.version}: the "
        "prefill_complete policy refuses decoupled speculation at argument time (ValueError "
        "'--disaggregation-decode-allocation-policy prefill_complete does not yet support ... PD multiplexing or "
        f"decoupled speculation'). Keep the default policy (early) or drop {ctx.flag(ROLE)}",
        flags=(POLICY, ROLE),
    )


VERIFIER_PREFILL_COMPLETE = (
    *LLAMA31_8B,
    "--disaggregation-mode",
    "decode",
    ROLE,
    "verifier",
    POLICY,
    "prefill_complete",
)

RULE = Rule(
    check=check,
    code="PL288",
    category=Category.START,
    name="prefill-complete-with-decoupled-speculation",
    summary="--disaggregation-decode-allocation-policy prefill_complete with a --decoupled-spec-role is refused (0.5.22+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--disaggregation-decode-allocation-policy prefill_complete` with `--decoupled-spec-role` verifier or "
        "drafter (decoupled speculative decoding), SGLang 0.5.22 or later.",
        why="0.5.22 added the prefill_complete policy (arg_groups/fields/disagg.py:59-64) and validates it early "
        "in `handle_pd_disaggregation` (pd_disaggregation_hook.py:47-48): `_validate_prefill_complete` lists "
        "'PD multiplexing or decoupled speculation' whenever `decoupled_spec_role` is not null and raises "
        "ValueError '--disaggregation-decode-allocation-policy prefill_complete does not yet support ...' "
        "(:205-247, :217). 0.5.23 keeps it (:199-241, :211). 0.5.21 has no such policy.",
        fix="Keep the default allocation policy (`early`) with decoupled speculation, or run without a decoupled role.",
        fix_safety="No automatic fix: both are deployment choices.",
    ),
    bad=Example(argv=VERIFIER_PREFILL_COMPLETE, sglang_version="0.5.22"),
    good=Example(
        argv=(*LLAMA31_8B, "--disaggregation-mode", "decode", ROLE, "verifier"),
        sglang_version="0.5.22",
    ),
    sources=(
        "sglang 0.5.21: python/sglang/srt/arg_groups/fields/disagg.py (no disaggregation_decode_allocation_policy)",
        "sglang 0.5.22: python/sglang/srt/arg_groups/pd_disaggregation_hook.py:47-48,205-247; arg_groups/fields/disagg.py:46-50,59-64",
        "sglang 0.5.23: python/sglang/srt/arg_groups/pd_disaggregation_hook.py:199-241",
    ),
    sglang_versions=">=0.5.22",
    log_signatures=(
        r"--disaggregation-decode-allocation-policy prefill_complete does not yet support .*decoupled speculation",
    ),
)
