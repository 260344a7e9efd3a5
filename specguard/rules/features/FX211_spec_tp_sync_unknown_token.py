"""FX211 spec-tp-sync-unknown-token."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

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
from specguard.sglang_facts.algorithms import SPEC_TP_SYNC_ALGORITHMS
from specguard.sglang_facts.changes import SPEC_TP_SYNC_DSPARK_DRAFT_SITE

VAR = "SGLANG_SPEC_TP_SYNC"
# The workers that build SpecTpSync, which parses the variable on every rank.
PARSING_ALGORITHMS = SPEC_TP_SYNC_ALGORITHMS
PRESETS = ("all", "off", "none", "init", "rng")
# SpecTpSyncSite as 0.5.19 numbers it (speculative/spec_tp_sync.py:14-36); 0.5.22 keeps every one of these
# handles (2-6 as retired aliases of the merged DSPARK_DRAFT, spec_tp_sync.py:66-82) and adds site 17.
SITES_0519 = (
    "dspark-mem",
    "dspark-draft-greedy",
    "dspark-draft-sample",
    "dspark-draft-multinomial",
    "dspark-graph-sample",
    "dspark-graph-greedy",
    "dspark-plan",
    "dspark-accept-greedy",
    "dspark-accept-sample",
    "dspark-accept-graph",
    "dspark-target",
    "dflash-mem",
    "dflash-selector",
    "dflash-accept-sample",
    "dflash-accept-greedy",
    "dflash-target",
)
DSPARK_DRAFT_SITE = (SPEC_TP_SYNC_DSPARK_DRAFT_SITE, "dspark-draft", 17)


def accepted_tokens(version: Version) -> frozenset[str]:
    """Every handle the release's parser resolves: presets, site slugs and site numbers."""
    sites = {slug: number for number, slug in enumerate(SITES_0519, 1)}
    since, slug, number = DSPARK_DRAFT_SITE
    if since.present_in(version):
        sites[slug] = number
    return (
        frozenset(PRESETS)
        | frozenset(sites)
        | frozenset(str(n) for n in sites.values())
    )


def unknown_tokens(value: str, version: Version) -> tuple[str, ...]:
    """The tokens parse_spec_tp_sync raises on, normalised as it normalises them (0.5.19 spec_tp_sync.py:87-96)."""
    accepted = accepted_tokens(version)
    tokens = (
        t for t in value.replace(" ", "").replace("_", "-").lower().split(",") if t
    )
    return tuple(t for t in tokens if (t.removeprefix("-")) not in accepted)


def check(ctx: CheckContext) -> Iterator[Finding]:
    value = ctx.spec.env_value(VAR)
    if ctx.algorithm not in PARSING_ALGORITHMS or value is None:
        return
    unknown = unknown_tokens(value, ctx.version)
    if not unknown:
        return
    yield RULE.finding(
        f"{VAR}={value!r} with {ctx.algorithm} in SGLang {ctx.version}: {', '.join(repr(t) for t in unknown)} is "
        f"neither a preset ({', '.join(PRESETS)}) nor a site slug or number, so the {ctx.algorithm} worker raises "
        f"ValueError '{VAR}: unknown token' on every rank while the server starts (even on one GPU). Fix the "
        f"token, or unset {VAR} (its default 'all' syncs every site)",
        flags=("--speculative-algorithm",),
        fix=fix_of(
            f"unset {VAR}",
            Applicability.UNSAFE,
            Edit(target="env", name=VAR, value=None),
        ),
    )


RULE = Rule(
    check=check,
    code="FX211",
    category=Category.START,
    name="spec-tp-sync-unknown-token",
    summary="SGLANG_SPEC_TP_SYNC with a token its parser does not know fails DSPARK/DFLASH start-up (0.5.19+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`SGLANG_SPEC_TP_SYNC` holding a comma-separated token (optionally '-'-prefixed) that is not a preset "
        "(all, off, none, init, rng), a SpecTpSyncSite slug (`dflash-target`; '_' reads as '-', case ignored) or a "
        "site number, with `--speculative-algorithm` DSPARK or DFLASH, SGLang 0.5.19 or later. Sites 1-16 from "
        "0.5.19; 0.5.22 merges 2-6 into a new site 17 `dspark-draft` and keeps the old handles as aliases.",
        why="0.5.19 added the variable (environ.py:1228-1232, default 'all') and `SpecTpSync`, whose constructor "
        "parses it on every rank, 'even on a single rank so a typo fails on every deployment' "
        "(speculative/spec_tp_sync.py:99-110); `_resolve` raises ValueError for an unknown token (:74-84). The DSPARK "
        "and DFLASH workers, the only ones for these algorithms, build it at start-up (dspark_worker_v2.py:179, "
        "dflash_worker_v2.py:306). 0.5.18 has no such variable. 0.5.22 retires sites 2-6 into site 17 with a "
        "warning (spec_tp_sync.py:28, :67-104); 0.5.23 is the same file.",
        fix="Correct the token, or unset the variable (the default syncs every site).",
        fix_safety="Unsafe: unsetting syncs every site, not the subset the token list meant.",
    ),
    bad=Example(
        argv=QWEN3_8B_DFLASH, env={VAR: "all,-dflash-selecter"}, sglang_version="0.5.19"
    ),
    good=Example(
        argv=QWEN3_8B_DFLASH, env={VAR: "all,-dflash-selector"}, sglang_version="0.5.19"
    ),
    sources=(
        "sglang 0.5.18: python/sglang/srt/environ.py (no SGLANG_SPEC_TP_SYNC; no speculative/spec_tp_sync.py)",
        "sglang 0.5.19: python/sglang/srt/speculative/spec_tp_sync.py:14-36,74-96,99-110",
        "sglang 0.5.19: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:179; speculative/dflash_worker_v2.py:306",
        "sglang 0.5.19: python/sglang/srt/environ.py:1228-1232",
        "sglang 0.5.22: python/sglang/srt/speculative/spec_tp_sync.py:20-34,67-104 (site 17, retired 2-6)",
        "sglang 0.5.23: python/sglang/srt/speculative/spec_tp_sync.py (same as 0.5.22)",
    ),
    sglang_versions=">=0.5.19",
    log_signatures=(r"SGLANG_SPEC_TP_SYNC: unknown token",),
)
