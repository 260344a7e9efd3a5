"""FX355 hicache-inkling-mtp-draft-refused."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import Change

INKLING = "InklingForConditionalGeneration"
# A draft of the Inkling checkpoint loads as the MTP class (0.5.18 configs/model_config.py:675-679).
INKLING_DRAFTS = frozenset({INKLING, "InklingForConditionalGenerationMTP"})
HICACHE = "--enable-hierarchical-cache"
LINKER = "--enable-unified-cache-external-linker"
RETRACTION_BACKUP = "--disaggregation-decode-retraction-backup"
DRAFT_PATH = "--speculative-draft-model-path"
# The HiCache draft plan also runs for the external linker from 0.5.20 (base_spec_worker.py:254-257).
LINKER_BUILDS_DRAFT_PLAN = Change(
    "0.5.20",
    "0.5.20 speculative/base_spec_worker.py:256 reads enable_unified_cache_external_linker (0.5.19 does not)",
)


def drafts_with_inkling_mtp(ctx: CheckContext) -> bool:
    if ctx.draft is not None and ctx.draft.architecture is not None:
        return ctx.draft.architecture in INKLING_DRAFTS
    draft_path = ctx.spec.item(DRAFT_PATH)
    model_path = ctx.spec.item("--model-path")
    return (
        draft_path is not None
        and model_path is not None
        and draft_path.values == model_path.values
    )


def host_pool_flags(ctx: CheckContext, version: Version) -> tuple[str, ...]:
    """The given flags that make the draft worker build its HiCache draft plan."""
    given = []
    if ctx.spec.has(HICACHE):
        given.append(HICACHE)
    if ctx.spec.has(LINKER) and LINKER_BUILDS_DRAFT_PLAN.present_in(version):
        given.append(LINKER)
    backup = ctx.spec.item(RETRACTION_BACKUP)
    if backup is not None and backup.values and backup.values[-1] == "host_pool":
        given.append(RETRACTION_BACKUP)
    return tuple(given)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm not in EAGLE_WORKER_ALGORITHMS
        or ctx.target is None
        or ctx.target.architecture != INKLING
        or not drafts_with_inkling_mtp(ctx)
    ):
        return
    flags = host_pool_flags(ctx, ctx.version)
    if not flags:
        return
    yield RULE.finding(
        f"{' and '.join(ctx.flag(f) for f in flags)} with Inkling's MTP draft in SGLang {ctx.version}: when the "
        "draft worker plans its host-cache state it raises NotImplementedError 'HiCache does not support Inkling "
        "MTP draft state yet.' and the server does not start. SGLang 0.5.22 packs the draft state with the "
        "target's; upgrade, or drop the host-pool option while speculating",
        flags=(*flags, "--speculative-algorithm"),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own worker start-up
    check=check,
    code="FX355",
    category=Category.START,
    name="hicache-inkling-mtp-draft-refused",
    summary="HiCache (or the external linker, or host-pool retraction backup) refuses Inkling's MTP draft at "
    "start-up (0.5.18-0.5.21)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="A target whose config.json architectures[0] is InklingForConditionalGeneration speculating with "
        "its own MTP draft (a draft of the Inkling architecture, or the target's path as draft path) under "
        "EAGLE/NEXTN, EAGLE3 or STANDALONE, with `--enable-hierarchical-cache`, "
        "`--disaggregation-decode-retraction-backup host_pool`, or (from 0.5.20) "
        "`--enable-unified-cache-external-linker`, SGLang 0.5.18 through 0.5.21.",
        why="An Inkling draft loads as InklingForConditionalGenerationMTP (0.5.18 configs/model_config.py:675-679). "
        "After the pools are allocated the scheduler builds the draft worker's HiCache plan "
        "(managers/scheduler.py:979), and `_build_hicache_draft_plan` raises NotImplementedError 'HiCache does "
        "not support Inkling MTP draft state yet.' for that class whenever hierarchical cache or host-pool "
        "retraction backup is on (0.5.18 speculative/base_spec_worker.py:234-255); 0.5.20 adds the external "
        "linker to the trigger, and 0.5.21 still raises (:253-275). 0.5.22 removes the refusal and packs the "
        "draft's Mamba state with the target host pool (base_spec_worker.py:260-305). 0.5.17 has no such check.",
        fix="Upgrade to SGLang 0.5.22, or drop the host-pool option while speculating. No automatic fix.",
        fix_safety="No fix: dropping HiCache changes cache capacity.",
    ),
    bad=Example(
        argv=(
            "--model-path",
            "/models/inkling",
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-draft-model-path",
            "/models/inkling",
            HICACHE,
        ),
        target={"architectures": (INKLING,)},
        sglang_version="0.5.18",
    ),
    good=Example(
        argv=(
            "--model-path",
            "/models/inkling",
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-draft-model-path",
            "/models/inkling",
            HICACHE,
        ),
        target={"architectures": (INKLING,)},
        sglang_version="0.5.22",
    ),
    sources=(
        "sglang 0.5.17: python/sglang/srt/speculative/base_spec_worker.py (no _build_hicache_draft_plan)",
        "sglang 0.5.18: python/sglang/srt/speculative/base_spec_worker.py:234-255,270-271; managers/scheduler.py:979; configs/model_config.py:675-679",
        "sglang 0.5.20: python/sglang/srt/speculative/base_spec_worker.py:256,270",
        "sglang 0.5.21: python/sglang/srt/speculative/base_spec_worker.py:253-275",
        "sglang 0.5.22: python/sglang/srt/speculative/base_spec_worker.py:260-305",
    ),
    sglang_versions=">=0.5.18,<=0.5.21",
    log_signatures=(r"HiCache does not support Inkling MTP draft state yet",),
)
