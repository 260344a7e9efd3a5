"""SP488 inkling-banded-mtp-without-multi-layer-eagle."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import (
    Applicability,
    Category,
    Edit,
    Finding,
    ModelFacts,
    Severity,
)
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.spec_params.SP322_inkling_multi_step_draft_without_multi_layer_eagle import (
    INKLING_ARCHITECTURES,
)
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

MULTI_LAYER = "--enable-multi-layer-eagle"


def _draft_config(ctx: CheckContext) -> ModelFacts | None:
    """The config.json the draft model is built from: the target's own (its MTP layers) when no other draft
    checkpoint is given, else the draft's."""
    draft_path = ctx.spec.get("speculative_draft_model_path")
    if draft_path is None or draft_path == ctx.spec.get("model_path"):
        return ctx.target
    return ctx.draft


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.spec.has(MULTI_LAYER):
        return
    config = _draft_config(ctx)
    if (
        config is None
        or config.architecture not in INKLING_ARCHITECTURES
        or not config.mtp_local_layer_ids
    ):
        return
    depths = ", ".join(str(depth) for depth in config.mtp_local_layer_ids)
    yield RULE.finding(
        f"an Inkling MTP draft with banded (sliding-window) depths [{depths}] and no {ctx.flag(MULTI_LAYER)} in "
        f"SGLang {ctx.version}: the banded per-depth pool routing exists only on the multi-layer draft path, so "
        'building the draft model raises "NotImplementedError: a banded MTP head (mtp_local_layer_ids set) '
        f'requires --enable-multi-layer-eagle" while the server starts. Add {ctx.flag(MULTI_LAYER)}',
        flags=(MULTI_LAYER,),
        fix=fix_of(
            f"add {MULTI_LAYER}",
            Applicability.UNSAFE,
            Edit(name=MULTI_LAYER, value=True),
        ),
    )


INKLING_EAGLE = ("--model-path", "./Inkling", "--speculative-algorithm", "EAGLE")
BANDED_INKLING = {
    "architectures": ("InklingForConditionalGeneration",),
    "mtp_local_layer_ids": (1,),
}

RULE = Rule(
    check=check,
    code="SP488",
    category=Category.START,
    name="inkling-banded-mtp-without-multi-layer-eagle",
    summary="An Inkling checkpoint with a banded MTP head (mtp_local_layer_ids) drafts only with "
    "--enable-multi-layer-eagle (0.5.16+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE/NEXTN (or another EAGLE-worker algorithm) drafting from an Inkling checkpoint (the "
        "`InklingForConditionalGeneration` target's own MTP layers, or a draft of that architecture) whose "
        "config.json names banded MTP depths (`mtp_config.local_layer_ids`, else "
        "`text_config.mtp_local_layer_ids`, non-empty), without `--enable-multi-layer-eagle`, SGLang 0.5.16 or "
        "later. Any number of draft steps: SP322 covers the multi-step decode backend from 0.5.17.",
        why="0.5.16 added Inkling: a draft model config rewrites the architecture to "
        "InklingForConditionalGenerationMTP (configs/model_config.py:612-616), whose constructor raises "
        "NotImplementedError 'a banded MTP head (mtp_local_layer_ids set) requires --enable-multi-layer-eagle' "
        "when the config has banded depths and no draft_model_idx, which only the multi-layer draft path passes "
        "(models/inkling.py:1786-1792). InklingMMConfig copies a non-empty mtp_config.local_layer_ids over "
        "text_config.mtp_local_layer_ids (configs/inkling.py:329-334). The Inkling override does not turn "
        "multi-layer EAGLE on (arg_groups/overrides.py:826-860). Unchanged in 0.5.23 (models/inkling.py:1792-1798; configs/inkling.py:337-342). 0.5.15.post1 "
        "has no Inkling model.",
        fix="Add `--enable-multi-layer-eagle`.",
        fix_safety="Unsafe: it changes the draft worker SGLang runs.",
    ),
    bad=Example(argv=INKLING_EAGLE, target=BANDED_INKLING, sglang_version="0.5.16"),
    good=Example(
        argv=(*INKLING_EAGLE, MULTI_LAYER),
        target=BANDED_INKLING,
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/models/ (no inkling.py)",
        "sglang 0.5.16: python/sglang/srt/models/inkling.py:1786-1792; configs/inkling.py:329-334",
        "sglang 0.5.16: python/sglang/srt/configs/model_config.py:612-616",
        "sglang 0.5.23: python/sglang/srt/models/inkling.py:1792-1798; configs/inkling.py:337-342",
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(
        r"a banded MTP head \(mtp_local_layer_ids set\) requires --enable-multi-layer-eagle",
    ),
)
