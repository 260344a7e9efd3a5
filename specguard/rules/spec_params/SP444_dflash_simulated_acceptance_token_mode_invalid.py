"""SP444 dflash-simulated-acceptance-token-mode-invalid."""

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
from specguard.rules.examples import QWEN3_8B_DFLASH
from specguard.rules.spec_params.SP296_simulated_acceptance_switch_on import simulating
from specguard.sglang_facts.changes import Change

MODE = "SGLANG_SIMULATE_ACC_TOKEN_MODE"
# The values SGLang's simulated verify knows (speculative/spec_utils.py check_simulate_acc_token_mode).
KNOWN_MODES = ("fixed", "real-draft-token")
# The DFLASH worker checks the mode at its first simulated verify (0.5.17-0.5.21), then when it starts.
CHECKED_AT_START = Change(
    "0.5.22",
    "0.5.22 speculative/dflash_worker_v2.py:409, spec_utils.py:215-222 (0.5.21 :2811-2817 at verify)",
)

# What SGLang raises: "Invalid SGLANG_SIMULATE_ACC_TOKEN_MODE 'x'; expected 'fixed' or 'real-draft-token'."


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DFLASH" or (switch := simulating(ctx)) is None:
        return
    mode = ctx.spec.env_value(MODE)
    if mode is None or mode in KNOWN_MODES:
        return
    when = (
        "when the DFLASH worker starts, after both models have loaded"
        if CHECKED_AT_START.present_in(ctx.version)
        else "at the first decode step, killing the server"
    )
    yield RULE.finding(
        f'{switch[0]}={switch[1]} with {MODE}={mode!r}: SGLang {ctx.version} raises "Invalid {MODE} {mode!r}; '
        f"expected 'fixed' or 'real-draft-token'.\" {when}. Set {MODE} to fixed or real-draft-token, or unset it",
        flags=("--speculative-algorithm",),
        fix=fix_of(
            f"unset {MODE}",
            Applicability.SAFE,
            Edit(target="env", name=MODE, value=None),
        ),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="SP444",
    category=Category.CRASH,
    name="dflash-simulated-acceptance-token-mode-invalid",
    summary="DFLASH simulating acceptance with an unknown SGLANG_SIMULATE_ACC_TOKEN_MODE fails (0.5.17+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with `SGLANG_SIMULATE_ACC_LEN` above 0 (the benchmarking switch) and "
        "`SGLANG_SIMULATE_ACC_TOKEN_MODE` set to anything but `fixed` or `real-draft-token`, SGLang 0.5.17 or later.",
        why="0.5.17 taught the DFLASH worker to simulate acceptance; its verify raises `ValueError: Invalid "
        "SGLANG_SIMULATE_ACC_TOKEN_MODE ...; expected 'fixed' or 'real-draft-token'.` when the switch is on and the "
        "mode is another string (0.5.17 `speculative/dflash_worker_v2.py:1810-1816`, 0.5.21 :2811-2817), which kills "
        "the server at the first decode step. 0.5.22 moves the check into `check_simulate_acc_token_mode`, called "
        "when the DFLASH worker starts (0.5.22 `speculative/spec_utils.py:215-222`, `dflash_worker_v2.py:409`; 0.5.23 "
        "`spec_utils.py:281-289`, `dflash_worker_v2.py:417`). The variable defaults to `fixed` (0.5.23 "
        "`environ.py:529`). 0.5.16's DFLASH worker reads neither variable. SP296 says what the switch itself does.",
        fix="Unset SGLANG_SIMULATE_ACC_TOKEN_MODE (the default is fixed) or set it to real-draft-token.",
        fix_safety="Safe: unsetting it runs SGLang's default mode, the one a launch without it gets.",
    ),
    bad=Example(
        argv=QWEN3_8B_DFLASH,
        env={"SGLANG_SIMULATE_ACC_LEN": "3", MODE: "random"},
        sglang_version="0.5.22",
    ),
    good=Example(
        argv=QWEN3_8B_DFLASH,
        env={"SGLANG_SIMULATE_ACC_LEN": "3", MODE: "real-draft-token"},
        sglang_version="0.5.22",
    ),
    sources=(
        "sglang 0.5.16: python/sglang/srt/speculative/dflash_worker_v2.py (no SIMULATE_ACC_LEN)",
        "sglang 0.5.17: python/sglang/srt/speculative/dflash_worker_v2.py:1810-1816",
        "sglang 0.5.21: python/sglang/srt/speculative/dflash_worker_v2.py:2811-2817",
        "sglang 0.5.22: python/sglang/srt/speculative/spec_utils.py:215-222",
        "sglang 0.5.22: python/sglang/srt/speculative/dflash_worker_v2.py:409",
        "sglang 0.5.23: python/sglang/srt/speculative/spec_utils.py:281-289",
        "sglang 0.5.23: python/sglang/srt/speculative/dflash_worker_v2.py:417",
        "sglang 0.5.23: python/sglang/srt/environ.py:529",
    ),
    sglang_versions=">=0.5.17",
    log_signatures=(
        r"Invalid SGLANG_SIMULATE_ACC_TOKEN_MODE '[^']*'; expected 'fixed' or 'real-draft-token'",
    ),
)
