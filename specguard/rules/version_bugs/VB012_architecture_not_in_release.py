"""VB012 architecture-not-in-release."""

from __future__ import annotations

import re
from collections.abc import Iterator

from specguard.models import Category, Finding, ModelFacts, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs
from specguard.rules.examples import QWEN3_8B_DFLASH

# Draft classes by their naming pattern in SGLang's registry (LlamaForCausalLMEagle3,
# LlamaForCausalLMEagle, Eagle3DeepseekV2ForCausalLM, Qwen3NextForCausalLMMTP, MiMoMTP,
# DeepseekV3ForCausalLMNextN, DFlashDraftModel): a draft config naming one is loaded as that
# class, never rewritten (model_config.py rewrites only target classes used as drafts).
DRAFT_CLASS = re.compile(r"(Eagle3?|MTP|NextN)$|^(Eagle3|DFlash)")
# Target classes fall back to the Transformers backend (``TransformersForCausalLM``) from the
# release whose registry first has that class; before it an unknown class cannot load.
TRANSFORMERS_FALLBACK = "TransformersForCausalLM"


def _unloadable(history, facts: ModelFacts | None, index: int, draft: bool) -> tuple[str, str] | None:
    """(architecture, where it can load) when release ``index`` cannot load ``facts``."""
    architecture = facts.architecture if facts is not None else None
    if not architecture:
        return None
    if draft and not DRAFT_CLASS.search(architecture):
        return None  # a target class used as a draft: SGLang may rewrite it (MTP/NextN)
    if not draft and index >= min(history.architecture_releases(TRANSFORMERS_FALLBACK), default=len(history.releases)):
        return None  # an unknown target class may load through the Transformers backend
    releases = history.architecture_releases(architecture)
    if index in releases:
        return None
    later = [i for i in releases if i > index]
    if later:
        return architecture, f"it arrives in {history.releases[min(later)]}"
    if releases:
        return architecture, f"releases {history.describe(releases)} have it"
    return architecture, f"no release up to {history.newest} has it"


def check(ctx: CheckContext) -> Iterator[Finding]:
    from specguard.versions import history  # the release history loads only here

    data = history()
    index = data.index_of(ctx.version)
    if index is None:
        return
    for role, facts, flag in (("target", ctx.target, "--model-path"), ("draft", ctx.draft, "--speculative-draft-model-path")):
        found = _unloadable(data, facts, index, draft=role == "draft")
        if found is None:
            continue
        architecture, where = found
        yield RULE.finding(
            f"SGLang {ctx.env.sglang_version}'s model registry has no {architecture} (the {role}'s config.json "
            f"architectures): the {role} cannot load, and the server exits while loading it; {where}",
            flags=(flag,) if ctx.spec.has(flag) else (),
        )


RULE = Rule(
    check=check,
    code="VB012",
    category=Category.START,
    name="architecture-not-in-release",
    summary="A target or draft architecture the SGLang release cannot load",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="The target's and the draft's `architectures[0]` against the model classes the release "
        "registers (the `EntryClass` names under `sglang/srt/models/` of each release from 0.4.0 to "
        "0.5.23, in `specguard/data/sglang-history.json`). Drafts are judged when their class is a "
        "draft class by name (`...Eagle`, `...Eagle3`, `Eagle3...`, `...MTP`, `...NextN`, `DFlash...`); "
        "a target class used as a draft is rewritten by SGLang (`model_config.py`) and left alone. "
        "Targets are judged only before the Transformers fallback (`TransformersForCausalLM`, first "
        "registered in 0.4.7), after which an unknown class may still load through transformers.",
        why="SGLang picks the model class from `architectures` in its registry, built from every "
        "`EntryClass` under `sglang/srt/models/`; a class the release does not register fails while "
        "the model loads, after the launch was accepted.",
        fix="Use a release that registers the class (the message names the first), or a checkpoint "
        "whose class this release has.",
        fix_safety="No automatic fix: the release or the checkpoint has to change.",
    ),
    bad=Example(
        argv=QWEN3_8B_DFLASH,
        draft={"architectures": ["DFlashDraftModel"]},
        sglang_version="0.5.10",
    ),
    good=Example(
        argv=QWEN3_8B_DFLASH,
        draft={"architectures": ["DFlashDraftModel"]},
        sglang_version="0.5.11",
    ),
    sources=(
        "specguard/data/sglang-history.json (EntryClass names per release, scripts/extract_sglang_flags.py)",
        "sglang 0.5.23: python/sglang/srt/model_loader/utils.py:95-198 (registry lookup, Transformers fallback)",
        "sglang 0.5.23: python/sglang/srt/configs/model_config.py:1011-1134 (target classes rewritten for drafts)",
    ),
    dialects=SGLANG_DIALECTS,
)
