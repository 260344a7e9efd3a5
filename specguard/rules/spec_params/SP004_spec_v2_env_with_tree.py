"""SP004 spec-v2-env-with-tree."""

from __future__ import annotations

from collections.abc import Iterator
from enum import Enum

from packaging.version import Version

from specguard.models import Applicability, Category, Edit, Finding, Fix, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    Rule,
    RuleDocs,
    fix_of,
    set_flags,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE, LLAMA31_8B_EAGLE_CHAIN
from specguard.sglang_facts.changes import (
    SPEC_V2_ALWAYS,
    SPEC_V2_DEFAULT_ON,
    SPEC_V2_ENV_ADDED,
    SPEC_V2_ENV_GONE,
    SPEC_V2_ENV_REMOVED,
    SPEC_V2_TOPK_CHECKED,
    Change,
    as_of,
    spec_v2_algorithms,
)

ENV = "SGLANG_ENABLE_SPEC_V2"


class EnvPhase(Enum):
    """What SGLANG_ENABLE_SPEC_V2 does in a release (the changes carry where each was read)."""

    ABSENT = "no such variable"
    OPT_IN = "opt-in, no topk check"
    OPT_IN_TOPK_CHECKED = "opt-in, an explicit topk > 1 raises"
    DEFAULT_ON = "on by default, an explicit topk > 1 falls back to V1"
    TREES = "V2 always, the variable only picks overlap"
    REMOVED = "removed, with a warning"
    GONE = "no trace"


# The life of SGLANG_ENABLE_SPEC_V2, newest first.
ENV_PHASES: tuple[tuple[Change, EnvPhase], ...] = (
    (SPEC_V2_ENV_GONE, EnvPhase.GONE),
    (SPEC_V2_ENV_REMOVED, EnvPhase.REMOVED),
    (SPEC_V2_ALWAYS, EnvPhase.TREES),
    (SPEC_V2_DEFAULT_ON, EnvPhase.DEFAULT_ON),
    (SPEC_V2_TOPK_CHECKED, EnvPhase.OPT_IN_TOPK_CHECKED),
    (SPEC_V2_ENV_ADDED, EnvPhase.OPT_IN),
)


def env_phase(version: Version) -> EnvPhase:
    return as_of(ENV_PHASES, version, before=EnvPhase.ABSENT)


def _drop_env(title: str) -> Fix:
    return fix_of(title, Applicability.SAFE, Edit(target="env", name=ENV, value=None))


def check(ctx: CheckContext) -> Iterator[Finding]:
    raw = ctx.spec.env_value(ENV)
    version = ctx.version
    phase = env_phase(version)
    if phase in (EnvPhase.ABSENT, EnvPhase.REMOVED, EnvPhase.GONE):
        if raw is None:
            return
        if phase is EnvPhase.ABSENT:
            why = f"SGLang {version} has no {ENV} (it appeared in {SPEC_V2_ENV_ADDED.first_release}): it is ignored, and speculative decoding runs without the overlap scheduler"
        elif phase is EnvPhase.REMOVED:
            why = f"{ENV} was removed in {SPEC_V2_ENV_REMOVED.first_release}: SGLang {version} logs that it is ignored and always runs the V2 worker; use {ctx.flag('--disable-overlap-schedule')} for the synchronous path"
        else:
            why = f"{ENV} no longer exists in SGLang {version} and is ignored without a word: the V2 worker always runs, overlapped unless {ctx.flag('--disable-overlap-schedule')}, and topk > 1 is supported"
        yield RULE.finding(why, fix=_drop_env(f"drop {ENV} (ignored)"), severity=Severity.INFO)
        return
    if phase is EnvPhase.TREES or ctx.algorithm not in spec_v2_algorithms(version):
        return
    default_on = phase is EnvPhase.DEFAULT_ON
    v2_on = (raw is None or ctx.spec.env_flag(ENV)) if default_on else ctx.spec.env_flag(ENV)
    if not v2_on or (default_on and ctx.spec.get("disable_overlap_schedule")):
        return
    topk = ctx.spec.get("speculative_eagle_topk")
    steps = ctx.spec.get("speculative_num_steps") or ctx.resolution.num_steps or 3
    topk_flag = ctx.flag("--speculative-eagle-topk")
    chain = set_flags(
        f"set {topk_flag} 1 with {steps} steps and {steps + 1} draft tokens",
        Applicability.UNSAFE,
        speculative_num_steps=steps,
        speculative_eagle_topk=1,
        speculative_num_draft_tokens=steps + 1,
    )
    where = f"{ENV}={raw}" if raw is not None else f"{ENV} (on by default in {version})"
    if topk is not None and topk > 1:
        if default_on:
            yield RULE.finding(
                f"with {topk_flag} {topk}, SGLang {version} quietly runs spec V1 without the overlap "
                f"scheduler although {where}: V2 only supports topk 1 before 0.5.13",
                flags=("--speculative-eagle-topk",),
                severity=Severity.INFO,
            )
        elif phase is EnvPhase.OPT_IN_TOPK_CHECKED:
            yield RULE.finding(
                f"{where} with {topk_flag} {topk}: SGLang {version} rejects it at argument time "
                "('Spec v2 currently only supports topk = 1 for speculative decoding'). Use topk 1 or drop the env var",
                flags=("--speculative-eagle-topk",),
                fix=chain,
            )
        else:
            yield RULE.finding(
                f"{where} with {topk_flag} {topk}: SGLang {version} does not check it, and the V2 worker "
                "only handles topk 1 (tensor shape errors, issue 14077). Use topk 1 or drop the env var",
                flags=("--speculative-eagle-topk",),
                fix=chain,
            )
        return
    auto_topk = ctx.resolution.eagle_topk
    if topk is None and ctx.spec.get("speculative_num_steps") is None and auto_topk is not None and auto_topk > 1:
        yield RULE.finding(
            f"{where} and {topk_flag} unset: SGLang {version} checks topk before it auto-chooses "
            f"{auto_topk} for this target, so V2 runs a topk-{auto_topk} tree it does not support and fails "
            f"once serving starts (issue 14077). Set {topk_flag} 1 explicitly",
            flags=("--speculative-eagle-topk",),
            fix=chain,
        )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own code path; sgl-jax has its own
    check=check,
    code="SP004",
    category=Category.START,
    name="spec-v2-env-with-tree",
    summary="SGLANG_ENABLE_SPEC_V2 with topk > 1, or set where SGLang ignores it",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="Follows `SGLANG_ENABLE_SPEC_V2` through SGLang's releases and checks the topk it runs with.",
        why="0.5.4.post1-0.5.6: the variable (default off; 0.5.3.post2-0.5.4 had --enable-beta-spec instead) puts "
        "EAGLE and EAGLE3 on the experimental V2 worker with no topk check (server_args.py:1434-1447 in 0.5.4.post1 "
        "and :1539-1552 in 0.5.5 keep the overlap scheduler on; in 0.5.5 EAGLE3 shares EAGLE's "
        "worker factory, speculative/spec_info.py:264-269, 301-305, which returns EAGLEWorkerV2 under overlap). "
        "0.5.7-0.5.10: EAGLE/EAGLE3 (and STANDALONE from "
        "0.5.8, server_args.py:2141) raise 'Spec v2 currently only supports topk = 1' for an explicit topk > 1 (0.5.7 "
        "server_args.py:2000-2014), but the check runs before the auto-choice, so Llama's auto topk 4 slips "
        "through to a worker that cannot run it (issue 14077). 0.5.11-0.5.12: on by default; an explicit "
        "topk > 1 falls back to V1 (0.5.11 server_args.py:3460-3473), an auto one still slips through. "
        "0.5.13: V2 runs trees; the variable only chooses overlap. 0.5.14-0.5.20: removed, with a warning "
        "(arg_groups/speculative_hook.py:69-75 in 0.5.14). 0.5.21 and later: no trace (catalogue P36). "
        "The seed document still describes the 0.5.7-0.5.10 behaviour.",
        fix="Set topk 1 (steps kept, draft tokens steps + 1); where the variable is ignored, drop it.",
        fix_safety="Unsafe where topk changes (a chain instead of a tree); dropping an ignored variable is safe.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE, "--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
              "--speculative-num-draft-tokens", "8"),
        env={ENV: "1"},
        sglang_version="0.5.8",
    ),
    good=Example(
        argv=LLAMA31_8B_EAGLE_CHAIN,
        env={ENV: "1"},
        sglang_version="0.5.8",
    ),
    sources=(
        "seed: sglang-speculative-decoding.md (Speculative Decoding V2 (Overlap Scheduler); Environment variables)",
        "https://github.com/sgl-project/sglang/issues/14077",
        "sglang 0.5.4.post1: python/sglang/srt/environ.py:234; python/sglang/srt/server_args.py:1434-1447",
        "sglang 0.5.5: python/sglang/srt/environ.py:258; python/sglang/srt/server_args.py:1539-1552; python/sglang/srt/speculative/spec_info.py:264-269, 301-305",
        "sglang 0.5.7: python/sglang/srt/server_args.py:2000-2020",
        "sglang 0.5.11: python/sglang/srt/environ.py:459; python/sglang/srt/server_args.py:3460-3480",
        "sglang 0.5.13: python/sglang/srt/arg_groups/speculative_hook.py:288-303",
        "sglang 0.5.14: python/sglang/srt/arg_groups/speculative_hook.py:69-75",
        "catalogue: shared/design/sglang-spec-checks.md P36",
    ),
    log_signatures=(
        # The V2 worker's draft extend with topk > 1 hands the EAGLE3 head mismatched embeddings and
        # hidden states, joined on the last dimension: llama_eagle3.py torch.cat(..., dim=-1)
        # (0.5.5.post2: line 88); a common message, ranked after specific ones.
        r"Sizes of tensors must match except in dimension 1\b",
    ),
)
