"""DM179 dflash-draft-activation-unsupported."""

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
from specguard.rules.examples import QWEN3_8B_DFLASH
from specguard.sglang_facts.changes import Change, as_of

# The activations DFlashMLP builds, newest first (0.5.11-0.5.22: silu only, models/dflash.py DFlashMLP).
ACTIVATIONS: tuple[tuple[Change, tuple[str, ...]], ...] = (
    (Change("0.5.23", "0.5.23 models/dflash.py:493-510"), ("silu", "swigluoai")),
)


def supported_activations(version: Version) -> tuple[str, ...]:
    return as_of(ACTIVATIONS, version, before=("silu",))


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DFLASH" or ctx.draft is None or ctx.draft.hidden_act is None:
        return
    supported = supported_activations(ctx.version)
    if ctx.draft.hidden_act in supported:
        return
    yield RULE.finding(
        f"The DFLASH draft's config.json sets hidden_act {ctx.draft.hidden_act!r}, and SGLang {ctx.version}'s DFlash "
        f"draft supports only {', '.join(supported)}: building the draft raises 'Unsupported DFlash activation' after "
        "the target's weights have loaded"
        + (
            ". SGLang 0.5.23 adds swigluoai"
            if ctx.draft.hidden_act == "swigluoai"
            else ""
        ),
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM179",
    category=Category.START,
    name="dflash-draft-activation-unsupported",
    summary="DFLASH draft whose hidden_act the release's DFlash MLP does not build (silu only before 0.5.23)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with a draft whose config.json `hidden_act` is not `silu` (SGLang "
        "0.5.11-0.5.22), or neither `silu` nor `swigluoai` (0.5.23).",
        why="Every DFlash draft layer builds a `DFlashMLP`, which raises a ValueError for any activation but silu "
        "(0.5.11 models/dflash.py:196-200; 0.5.22 :454-458) when the draft model is constructed, after the target "
        "has loaded. 0.5.23 adds `swigluoai` (with `swiglu_alpha`/`swiglu_limit`, models/dflash.py:493-510). A "
        "config without `hidden_act` builds silu.",
        fix="Use a draft with a supported activation, or SGLang 0.5.23 for a swigluoai draft.",
        fix_safety="No automatic fix: the draft checkpoint and the release are the user's choice.",
    ),
    bad=Example(
        argv=QWEN3_8B_DFLASH,
        draft={"architectures": ("DFlashDraftModel",), "hidden_act": "swigluoai"},
        sglang_version="0.5.22",
    ),
    good=Example(
        argv=QWEN3_8B_DFLASH,
        draft={"architectures": ("DFlashDraftModel",), "hidden_act": "swigluoai"},
        sglang_version="0.5.23",
    ),
    sources=(
        "sglang 0.5.11: python/sglang/srt/models/dflash.py:196-200 (silu only)",
        "sglang 0.5.22: python/sglang/srt/models/dflash.py:454-458 (silu only)",
        "sglang 0.5.23: python/sglang/srt/models/dflash.py:493-510 (silu, swigluoai)",
    ),
    sglang_versions=">=0.5.11",
    log_signatures=(r"Unsupported DFlash activation: ",),
)
