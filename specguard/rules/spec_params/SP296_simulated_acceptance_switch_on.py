"""SP296 simulated-acceptance-switch-on."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import SIMULATE_ACC_LEN_RENAMED

OLD = "SIMULATE_ACC_LEN"
NEW = "SGLANG_SIMULATE_ACC_LEN"


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def simulating(ctx: CheckContext) -> tuple[str, str] | None:
    """The variable that turns the simulation on in this release, and its value; None when it is off.

    Up to 0.5.3rc0 SGLang reads SIMULATE_ACC_LEN and simulates for any non-empty value
    (`if SIMULATE_ACC_LEN:` on the string, 0.5.2 speculative/eagle_utils.py:47,505); from 0.5.3rc2 it
    reads SGLANG_SIMULATE_ACC_LEN as a float and simulates above 0. A value that is not a number
    stays quiet here: it fails differently."""
    if SIMULATE_ACC_LEN_RENAMED.present_in(ctx.version):
        value = ctx.spec.env_value(NEW)
        number = _number(value) if value is not None else None
        return (
            (NEW, value)
            if value is not None and number is not None and number > 0
            else None
        )
    value = ctx.spec.env_value(OLD)
    return (OLD, value) if value and _number(value) is not None else None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS:
        return
    found = simulating(ctx)
    if found is None:
        return
    name, value = found
    yield RULE.finding(
        f"{name}={value} with {ctx.algorithm} in SGLang {ctx.version}: this benchmarking switch replaces the verify's "
        "result with a simulated acceptance length, so the server returns made-up tokens (a fixed token id, or "
        "unverified draft tokens) instead of the model's output. Unset it for any real serving",
        flags=("--speculative-algorithm",),
        fix=fix_of(
            f"unset {name}",
            Applicability.UNSAFE,
            Edit(target="env", name=name, value=None),
        ),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="SP296",
    category=Category.WRONG_OUTPUT,
    name="simulated-acceptance-switch-on",
    summary="SIMULATE_ACC_LEN / SGLANG_SIMULATE_ACC_LEN set for an EAGLE-family launch: the served tokens are simulated",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="An EAGLE, EAGLE3, NEXTN or STANDALONE launch whose environment turns on simulated acceptance: "
        "`SIMULATE_ACC_LEN` set to any number (0.4.4.post4 to 0.5.3rc0), or `SGLANG_SIMULATE_ACC_LEN` above 0 (from 0.5.3rc2).",
        why="0.4.4.post4 added a benchmarking switch to the EAGLE verify: when it is on, `_generate_simulated_accept_index` "
        "draws an accept length around the given value and overwrites the accepted tokens with `predict.fill_(100)  "
        "# some legit token id` (0.4.4.post4 speculative/eagle_utils.py:42,408-416,785-812; 0.5.2 :47,505-513,1132-1179). "
        "Up to 0.5.3rc0 the variable is `SIMULATE_ACC_LEN` and any non-empty value turns it on (`if SIMULATE_ACC_LEN:`, "
        "even 0); 0.5.3rc2 renames it `SGLANG_SIMULATE_ACC_LEN`, a float that is off at -1 and on above 0 "
        "(environ.py:127; speculative/eagle_info.py:334; spec_utils.py:29,439-488). In 0.5.23 the verify still does it "
        "(speculative/eagle_utils.py:807-830; spec_utils.py:276-289,527-568): the tokens are the fixed id, or, with "
        "`SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token`, the draft's own tokens without the target's check. Either "
        "way the served text is not the model's. 0.4.4.post2 has no such switch.",
        fix="Unset the variable; it is meant for measuring speed at a chosen acceptance length, never for serving.",
        fix_safety="Unsafe: it changes what the server returns (the real tokens) and its speed.",
    ),
    bad=Example(argv=LLAMA31_8B_EAGLE3, env={NEW: "3"}, sglang_version="0.5.23"),
    good=Example(argv=LLAMA31_8B_EAGLE3, env={NEW: "-1"}, sglang_version="0.5.23"),
    sources=(
        "sglang 0.4.4.post2: python/sglang/srt/speculative/eagle_utils.py (no SIMULATE_ACC_LEN)",
        "sglang 0.4.4.post4: python/sglang/srt/speculative/eagle_utils.py:42,408-416,785-812",
        "sglang 0.5.2: python/sglang/srt/speculative/eagle_utils.py:47,505-513,1132-1179",
        "sglang 0.5.3rc0: python/sglang/srt/speculative/eagle_utils.py:45,503-509",
        "sglang 0.5.3rc2: python/sglang/srt/environ.py:127; python/sglang/srt/speculative/eagle_info.py:334; spec_utils.py:29,439-488",
        "sglang 0.5.23: python/sglang/srt/environ.py:527-529; python/sglang/srt/speculative/eagle_utils.py:807-830; spec_utils.py:276-289,527-568",
    ),
    sglang_versions=">=0.4.4.post4",
)
