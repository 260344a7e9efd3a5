"""PL307 kimi-k3-dcp-dspark-ragged-verify."""

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
from specguard.rules.spec_params._ragged_verify import RAGGED, unset_ragged
from specguard.rules.spec_params._shared import int_flag

KIMI_K3 = "KimiK3ForConditionalGeneration"
# read_ragged_verify_mode's non-static modes; any other value is refused earlier for every algorithm (SP175).
NON_STATIC_MODES = ("cap-accept", "compact")
DCP = "--dcp-size"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "DSPARK"
        or ctx.target is None
        or ctx.target.architecture != KIMI_K3
    ):
        return
    mode = ctx.spec.env_value(RAGGED)
    dcp = int_flag(ctx, DCP)
    if mode not in NON_STATIC_MODES or dcp is None or dcp <= 1:
        return
    yield RULE.finding(
        f"DSPARK on a Kimi-K3 target with {ctx.flag(DCP)} {dcp} and {RAGGED}={mode}: SGLang {ctx.version} raises "
        f"'Kimi-K3 DCP + DSPARK currently requires SGLANG_RAGGED_VERIFY_MODE=static; compact/cap-accept are not "
        f"validated under DCP' at argument time. Unset {RAGGED} (static is the default)",
        flags=(DCP,),
        fix=unset_ragged(),
    )


K3_DSPARK_DCP = (
    "--model-path",
    "moonshotai/Kimi-K3",
    "--tp-size",
    "8",
    "--dcp-size",
    "8",
    "--speculative-algorithm",
    "DSPARK",
    "--speculative-draft-model-path",
    "/ckpt/dspark-draft",
)

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="PL307",
    category=Category.START,
    name="kimi-k3-dcp-dspark-ragged-verify",
    summary="Kimi-K3 with --dcp-size above 1 and DSPARK refuses a ragged SGLANG_RAGGED_VERIFY_MODE (0.5.17+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="A target whose config.json architectures[0] is KimiK3ForConditionalGeneration with "
        "`--speculative-algorithm DSPARK`, `--dcp-size` above 1 and `SGLANG_RAGGED_VERIFY_MODE` cap-accept or "
        "compact, SGLang 0.5.17 or later.",
        why="0.5.17 added Kimi-K3 (models/kimi_k3.py) and its model overrides: with DCP and DSPARK "
        '`_kimi_k3_overrides` raises "Kimi-K3 DCP + DSPARK currently requires SGLANG_RAGGED_VERIFY_MODE=static; '
        "compact/cap-accept are not validated under DCP (got 'compact').\" at argument time "
        "(arg_groups/overrides.py:366-389; every provider registered for the class runs, :83-97). 0.5.20 moves it "
        "to arg_groups/model_overrides/kimi_k3.py; unchanged in 0.5.23 (:51-75). 0.5.16 has no Kimi-K3 model.",
        fix="Unset `SGLANG_RAGGED_VERIFY_MODE` (static verify), or drop DCP.",
        fix_safety="Unsafe: the verify schedule changes.",
    ),
    bad=Example(
        argv=K3_DSPARK_DCP,
        target={"architectures": (KIMI_K3,)},
        env={RAGGED: "compact"},
        sglang_version="0.5.17",
    ),
    good=Example(
        argv=K3_DSPARK_DCP,
        target={"architectures": (KIMI_K3,)},
        env={RAGGED: "static"},
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.16: python/sglang/srt/models/ (no kimi_k3.py; no _kimi_k3_overrides)",
        "sglang 0.5.17: python/sglang/srt/arg_groups/overrides.py:83-97,366-389",
        "sglang 0.5.23: python/sglang/srt/arg_groups/model_overrides/kimi_k3.py:51-75",
    ),
    sglang_versions=">=0.5.17",
    log_signatures=(
        r"Kimi-K3 DCP \+ DSPARK currently requires SGLANG_RAGGED_VERIFY_MODE=static",
    ),
)
