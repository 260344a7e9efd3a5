"""SP487 simulated-acceptance-token-mode-refused."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import effective_topk
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3, LLAMA31_8B_EAGLE3_CHAIN
from specguard.rules.spec_params.SP296_simulated_acceptance_switch_on import simulating
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import Change

MODE = "SGLANG_SIMULATE_ACC_TOKEN_MODE"
FIXED = "fixed"
REAL_DRAFT_TOKEN = "real-draft-token"
TOKEN_MODE_ADDED = Change(
    "0.5.15",
    "0.5.15 environ.py:267 SGLANG_SIMULATE_ACC_TOKEN_MODE; speculative/eagle_utils.py:730-746 (none in 0.5.14)",
)


def _refusal(ctx: CheckContext, mode: str) -> str | None:
    """What the first verify raises for this token mode, or None when the mode is accepted."""
    if mode not in (FIXED, REAL_DRAFT_TOKEN):
        return f"Invalid SGLANG_SIMULATE_ACC_TOKEN_MODE {mode!r}; expected 'fixed' or 'real-draft-token'."
    topk = effective_topk(ctx)
    if mode == REAL_DRAFT_TOKEN and topk is not None and topk != 1:
        return "SGLANG_SIMULATE_ACC_LEN with real draft tokens currently requires speculative_eagle_topk=1."
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or not TOKEN_MODE_ADDED.present_in(
        ctx.version
    ):
        return
    mode = ctx.spec.env_value(MODE)
    found = simulating(ctx) if mode is not None else None
    refusal = _refusal(ctx, mode) if found is not None and mode is not None else None
    if found is None or refusal is None:
        return
    name, value = found
    yield RULE.finding(
        f"{name}={value} with {MODE}={mode} for {ctx.algorithm} in SGLang {ctx.version}: the server starts, then "
        f"the first verify raises ValueError '{refusal}' and the scheduler dies. Unset {MODE} (the default is "
        f"'{FIXED}'), or unset {name} for real serving",
        flags=("--speculative-eagle-topk",) if mode == REAL_DRAFT_TOKEN else (),
        fix=fix_of(
            f"unset {MODE}",
            Applicability.UNSAFE,
            Edit(target="env", name=MODE, value=None),
        ),
    )


RULE = Rule(
    check=check,
    code="SP487",
    category=Category.CRASH,
    name="simulated-acceptance-token-mode-refused",
    summary="SGLANG_SIMULATE_ACC_LEN with a SGLANG_SIMULATE_ACC_TOKEN_MODE other than fixed/real-draft-token, or "
    "real-draft-token on a tree, crashes the first verify (0.5.15+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="An EAGLE, EAGLE3, NEXTN or STANDALONE launch with simulated acceptance on (`SGLANG_SIMULATE_ACC_LEN` "
        "above 0) and `SGLANG_SIMULATE_ACC_TOKEN_MODE` set to anything but `fixed` or `real-draft-token` "
        "(case-sensitive), or to `real-draft-token` with a topk other than 1 (typed or SGLang's automatic "
        "choice), SGLang 0.5.15 or later.",
        why="0.5.15 added the token mode (environ.py:267, default 'fixed'; read once at import, "
        "speculative/spec_utils.py:101). The verify's simulation branch raises ValueError 'Invalid "
        "SGLANG_SIMULATE_ACC_TOKEN_MODE ...; expected 'fixed' or 'real-draft-token'.' for any other value, and "
        "'SGLANG_SIMULATE_ACC_LEN with real draft tokens currently requires speculative_eagle_topk=1.' when the "
        "tree's topk is not 1 (0.5.15 speculative/eagle_utils.py:730-746), on the first decode batch; nothing "
        "checks it at start. Unchanged in 0.5.23 (eagle_utils.py:807-822). 0.5.14 has no token mode.",
        fix="Unset `SGLANG_SIMULATE_ACC_TOKEN_MODE` (or set a supported mode with a topk-1 chain); simulated "
        "acceptance itself is for benchmarks only (SP296).",
        fix_safety="Unsafe: the simulated tokens change from the draft's to a fixed id.",
    ),
    bad=Example(
        argv=LLAMA31_8B_EAGLE3,
        target={"architectures": ("LlamaForCausalLM",)},
        env={"SGLANG_SIMULATE_ACC_LEN": "3", MODE: REAL_DRAFT_TOKEN},
        sglang_version="0.5.15",
    ),
    good=Example(
        argv=LLAMA31_8B_EAGLE3_CHAIN,
        env={"SGLANG_SIMULATE_ACC_LEN": "3", MODE: REAL_DRAFT_TOKEN},
        sglang_version="0.5.15",
    ),
    sources=(
        "sglang 0.5.14: python/sglang/srt/environ.py (no SGLANG_SIMULATE_ACC_TOKEN_MODE)",
        "sglang 0.5.15: python/sglang/srt/environ.py:267; speculative/spec_utils.py:101",
        "sglang 0.5.15: python/sglang/srt/speculative/eagle_utils.py:730-746",
        "sglang 0.5.23: python/sglang/srt/speculative/eagle_utils.py:807-822",
    ),
    sglang_versions=">=0.5.15",
    log_signatures=(
        r"Invalid SGLANG_SIMULATE_ACC_TOKEN_MODE",
        r"SGLANG_SIMULATE_ACC_LEN with real draft tokens currently requires speculative_eagle_topk=1",
    ),
)
