"""FX452 dspark-observability-env-refused."""

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

DEBUG_DUMP = "SGLANG_DSPARK_DEBUG_DUMP"
ESTIMATE_PATH = "SGLANG_DSPARK_BLOCK_ACCEPT_ESTIMATE_PATH"
ONLINE_INTERVAL = "SGLANG_DSPARK_BLOCK_ACCEPT_ONLINE_INTERVAL"
SIMULATE = "SGLANG_SIMULATE_ACC_LEN"
# InfoComponent's values and the token that enables them all, the same in every release with DSPARK
# (speculative/dspark_components/dspark_observability.py: 0.5.16 :32-41, 0.5.23 :34-43).
ALL_TOKEN = "all"
COMPONENTS = (
    "core",
    "step_cpu_time",
    "step_gpu_time",
    "draft_gpu_time",
    "target_verify_gpu_time",
    "reqs",
)


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def unknown_dump_tokens(value: str) -> list[str]:
    """The tokens resolve_components refuses: EnvTuple splits on commas and strips (environ.py), and "all"
    anywhere enables every component."""
    tokens = sorted({token.strip() for token in value.split(",") if token.strip()})
    if ALL_TOKEN in tokens:
        return []
    return [token for token in tokens if token not in COMPONENTS]


def estimator_on(ctx: CheckContext) -> str | None:
    """The variable that makes create_block_accept_estimate_recorder build its recorder on TP rank 0."""
    if ctx.spec.env_value(ESTIMATE_PATH):
        return ESTIMATE_PATH
    interval = ctx.spec.env_value(ONLINE_INTERVAL)
    if (
        interval is not None
        and interval.strip().lstrip("-").isdigit()
        and int(interval) > 0
    ):
        return ONLINE_INTERVAL
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DSPARK":
        return
    dump = ctx.spec.env_value(DEBUG_DUMP)
    unknown = unknown_dump_tokens(dump) if dump else []
    if unknown:
        yield RULE.finding(
            f"{DEBUG_DUMP}={dump} names {', '.join(unknown)}, which is no DSpark debug component: SGLang "
            f'{ctx.version} raises "Invalid {DEBUG_DUMP} token in ..." when the DSpark worker starts, after the '
            f"models load. Use {ALL_TOKEN} or a comma-separated list of {', '.join(COMPONENTS)}",
            flags=("--speculative-algorithm",),
            fix=fix_of(
                f"unset {DEBUG_DUMP}",
                Applicability.UNSAFE,
                Edit(target="env", name=DEBUG_DUMP, value=None),
            ),
        )
    estimator = estimator_on(ctx)
    simulate = ctx.spec.env_value(SIMULATE)
    simulated = _number(simulate)
    if estimator is not None and simulated is not None and simulated > 0:
        yield RULE.finding(
            f"{estimator} turns on DSpark's block-accept estimator and {SIMULATE}={simulate} simulates acceptance: "
            f"SGLang {ctx.version} refuses the pair when the DSpark worker starts, after the models load "
            f'("{ESTIMATE_PATH} cannot be combined with {SIMULATE}"). Unset one of them',
            flags=("--speculative-algorithm",),
            fix=fix_of(
                f"unset {SIMULATE}",
                Applicability.UNSAFE,
                Edit(target="env", name=SIMULATE, value=None),
            ),
        )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="FX452",
    category=Category.START,
    name="dspark-observability-env-refused",
    summary="DSPARK with an unknown SGLANG_DSPARK_DEBUG_DUMP component, or the block-accept estimator with "
    "SGLANG_SIMULATE_ACC_LEN, fails at start (0.5.16+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` with `SGLANG_DSPARK_DEBUG_DUMP` naming a token other than `all` and "
        "core, step_cpu_time, step_gpu_time, draft_gpu_time, target_verify_gpu_time, reqs; or with "
        "`SGLANG_DSPARK_BLOCK_ACCEPT_ESTIMATE_PATH` set (or `SGLANG_DSPARK_BLOCK_ACCEPT_ONLINE_INTERVAL` above 0) "
        "together with `SGLANG_SIMULATE_ACC_LEN` above 0.",
        why="The DSpark worker builds its step observers when it starts, after both models load "
        "(speculative/dspark_components/dspark_worker_v2.py: 0.5.16 :245-252, 0.5.23 :507-514). They resolve the "
        'debug-dump components and raise `ValueError("Invalid SGLANG_DSPARK_DEBUG_DUMP token in [...]; valid: [...] '
        "or 'all'.\")` for an "
        "unknown one (dspark_observability.py: 0.5.16 :54-77, 0.5.23 :56-79), and raise "
        '`ValueError("SGLANG_DSPARK_BLOCK_ACCEPT_ESTIMATE_PATH cannot be combined with SGLANG_SIMULATE_ACC_LEN ...")` '
        "when the block-accept estimator is on (a path, or an online interval above 0, on TP rank 0: "
        "dspark_block_accept_estimator.py 0.5.16 :819-828, 0.5.23 :823-832) and the simulated acceptance length is "
        "above 0 (dspark_observability.py 0.5.16 :765-770, 0.5.23 :766-771). The component list and both checks are "
        "the same from 0.5.16, where DSPARK and these variables arrive (0.5.15.post1 has neither), to 0.5.23.",
        fix="Name only known debug components (or `all`), and do not simulate acceptance while estimating it.",
        fix_safety="Unsafe: unsetting the variable changes what is recorded or simulated.",
    ),
    bad=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK,
        env={DEBUG_DUMP: "core,draft_time"},
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK,
        env={DEBUG_DUMP: "core,draft_gpu_time"},
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/speculative/spec_info.py:28-41 (no DSPARK algorithm)",
        "sglang 0.5.16: python/sglang/srt/speculative/dspark_components/dspark_observability.py:32-41,54-77,765-770",
        "sglang 0.5.16: python/sglang/srt/speculative/dspark_components/dspark_block_accept_estimator.py:819-828",
        "sglang 0.5.16: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:214,245-252",
        "sglang 0.5.16: python/sglang/srt/environ.py:105-107 (EnvTuple splits on commas)",
        "sglang 0.5.23: python/sglang/srt/speculative/dspark_components/dspark_observability.py:34-43,56-79,766-771",
        "sglang 0.5.23: python/sglang/srt/speculative/dspark_components/dspark_block_accept_estimator.py:823-832",
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(
        r"Invalid SGLANG_DSPARK_DEBUG_DUMP token in \[.*\]; valid: \[",
        r"SGLANG_DSPARK_BLOCK_ACCEPT_ESTIMATE_PATH cannot be combined with SGLANG_SIMULATE_ACC_LEN",
    ),
)
