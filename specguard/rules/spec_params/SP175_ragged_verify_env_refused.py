"""SP175 ragged-verify-env-refused."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import DEEPSEEK_V4_FLASH_DSPARK
from specguard.rules.spec_params._ragged_verify import RAGGED, unset_ragged
from specguard.sglang_facts.changes import Change

# SGLang says (0.5.16 speculative/dspark_components/dspark_planner.py:202-208):
# "DSpark ragged-verify mode 'compact' requires SGLANG_PREP_IN_CUDA_GRAPH=1 (the captured-graph prepare path)."
PREP = "SGLANG_PREP_IN_CUDA_GRAPH"
# speculative/ragged_verify.py:13-16 RaggedVerifyMode, compared as typed (an EnvStr, not lower-cased).
MODES = ("static", "cap-accept", "compact")
# environ.py EnvBool.parse: these turn it off; anything else unparsable falls back to its default (on).
FALSE_WORDS = ("false", "0", "no", "n")
# 0.5.16-0.5.17 DSparkVerifyPlanner refused a non-static mode without the captured-graph prepare path;
# 0.5.18 dropped _require_prep_in_cuda_graph.
PREP_REQUIRED_UNTIL = Change(
    "0.5.18",
    "0.5.18 speculative/dspark_components/dspark_planner.py (no _require_prep_in_cuda_graph)",
)


def _unset(name: str) -> Edit:
    return Edit(target="env", name=name, value=None)


def check(ctx: CheckContext) -> Iterator[Finding]:
    mode = ctx.spec.env_value(RAGGED)
    if ctx.algorithm is None or mode is None:
        return
    if mode not in MODES:
        yield RULE.finding(
            f"{RAGGED}={mode!r} is none of {', '.join(MODES)}: with any speculative algorithm SGLang reads it at "
            f"argument time and raises 'invalid {RAGGED}'",
            flags=("--speculative-algorithm",),
            fix=unset_ragged(),
        )
        return
    prep = ctx.spec.env_value(PREP)
    if (
        ctx.algorithm == "DSPARK"
        and mode != "static"
        and prep is not None
        and prep.strip().lower() in FALSE_WORDS
        and not PREP_REQUIRED_UNTIL.present_in(ctx.version)
    ):
        yield RULE.finding(
            f"DSPARK with {RAGGED}={mode} needs the captured-graph prepare path, and {PREP}={prep} turns it off: "
            f"SGLang {ctx.version} raises when the DSPARK worker builds its verify planner (before serving)",
            flags=("--speculative-algorithm",),
            fix=fix_of(
                f"unset {PREP} (on by default)", Applicability.UNSAFE, _unset(PREP)
            ),
        )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="SP175",
    category=Category.START,
    name="ragged-verify-env-refused",
    summary="SGLANG_RAGGED_VERIFY_MODE set to an unknown mode, or a ragged DSPARK mode without the in-graph prepare "
    "(0.5.16+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="Any `--speculative-algorithm` with `SGLANG_RAGGED_VERIFY_MODE` set to something other than static, "
        "cap-accept or compact (0.5.16+); DSPARK with it cap-accept or compact and `SGLANG_PREP_IN_CUDA_GRAPH` "
        "off (0.5.16-0.5.17).",
        why="0.5.16 added ragged verify (speculative/ragged_verify.py:13-27): `read_ragged_verify_mode` raises "
        "for an unknown value, and `SpeculativeAlgorithm.handle_server_args` calls it for every algorithm at "
        "argument time (0.5.16 speculative/spec_info.py:197-201; 0.5.23 :249-253). In 0.5.16-0.5.17 "
        "`DSparkVerifyPlanner.__init__` also required `SGLANG_PREP_IN_CUDA_GRAPH` for a non-static mode and raised "
        "otherwise when the DSPARK worker started (0.5.16 speculative/dspark_components/dspark_planner.py:128-139, "
        "201-209; 0.5.17 :150, 211-219); 0.5.18 removed that requirement. 0.5.15.post1 has no such variable.",
        fix="Unset the variable (static is the default), or keep `SGLANG_PREP_IN_CUDA_GRAPH` on (its default).",
        fix_safety="Unsafe: the verify schedule changes.",
    ),
    bad=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK, env={RAGGED: "compact", PREP: "0"}, sglang_version="0.5.16"
    ),
    good=Example(argv=DEEPSEEK_V4_FLASH_DSPARK, env={RAGGED: "compact"}, sglang_version="0.5.16"),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/environ.py (no SGLANG_RAGGED_VERIFY_MODE; no speculative/ragged_verify.py)",
        "sglang 0.5.16: python/sglang/srt/speculative/ragged_verify.py:13-27",
        "sglang 0.5.16: python/sglang/srt/speculative/spec_info.py:197-201",
        "sglang 0.5.16: python/sglang/srt/speculative/dspark_components/dspark_planner.py:128-139, 201-209",
        "sglang 0.5.17: python/sglang/srt/speculative/dspark_components/dspark_planner.py:150, 211-219",
        "sglang 0.5.18: python/sglang/srt/speculative/dspark_components/dspark_planner.py (no _require_prep_in_cuda_graph)",
        "sglang 0.5.23: python/sglang/srt/speculative/spec_info.py:249-253; speculative/ragged_verify.py:13-27",
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(
        r"invalid SGLANG_RAGGED_VERIFY_MODE=",
        r"DSpark ragged-verify mode '[\w-]+' requires SGLANG_PREP_IN_CUDA_GRAPH=1",
    ),
)
