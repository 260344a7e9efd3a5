"""DM042 draft-architecture-not-in-release."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.sglang_facts.algorithms import DRAFT_CHECKPOINT_ALGORITHMS
from specguard.sglang_facts.changes import DRAFT_HEAD_CLASS


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in DRAFT_CHECKPOINT_ALGORITHMS or ctx.draft is None:
        return
    if ctx.spec.get("speculative_draft_model_path") is None:
        return
    arch = ctx.draft.architecture
    registered = DRAFT_HEAD_CLASS.get(arch or "")
    if registered is None or registered.present_in(ctx.version):
        return
    yield RULE.finding(
        f"the draft's architectures say {arch}, which SGLang {ctx.env.sglang_version} does not register "
        f"(it arrives in {registered.first_release}): the draft fails to load after the target's weights are in memory. "
        f"Upgrade to SGLang {registered.first_release} or later, or use a draft whose class this release has",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own code path; sgl-jax has its own
    check=check,
    code="DM042",
    category=Category.START,
    name="draft-architecture-not-in-release",
    summary="The draft's model class is not registered in this SGLang release",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="Checks the draft's `architectures[0]` against the release that first registers that draft "
        "class: the MLA EAGLE3 head `Eagle3DeepseekV2ForCausalLM` (Kimi K2.5/K2.6 `*-eagle3-mla` drafts) "
        "from 0.5.12, `MistralForCausalLMEagle` from 0.5.11, the DFLASH draft alias `MuseGlimmerAssistantModel` from 0.5.18.",
        why="SGLang looks the draft up by its `architectures` when the draft worker starts, after the target "
        "has loaded; an unregistered class fails there, with no argument-time check (sgl-project/sglang#25673: "
        "kimi-k2.6-eagle3-mla on 0.5.11 crashes at startup; `models/kimi_k25_eagle3.py` first ships in 0.5.12). "
        "Names that no release registers (the vLLM-style `Eagle3LlamaForCausalLM`) are DM008's.",
        fix="Upgrade SGLang, or pick a draft of a class the release has. No automatic fix.",
        fix_safety="No fix: the release and the draft are the user's choice.",
    ),
    bad=Example(
        argv=("--model-path", "moonshotai/Kimi-K2.6", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "lightseekorg/kimi-k2.6-eagle3-mla"),
        draft={"architectures": ("Eagle3DeepseekV2ForCausalLM",)},
        sglang_version="0.5.11",
    ),
    good=Example(
        argv=("--model-path", "moonshotai/Kimi-K2.6", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "lightseekorg/kimi-k2.6-eagle3-mla"),
        draft={"architectures": ("Eagle3DeepseekV2ForCausalLM",)},
        sglang_version="0.5.12",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/25673",
        "sglang 0.5.11 / 0.5.12: python/sglang/srt/models/kimi_k25_eagle3.py (absent / :266, :472 EntryClass)",
        "sglang 0.5.12: python/sglang/srt/configs/model_config.py:616 (Eagle3DeepseekV2ForCausalLM in the draft's architectures)",
        "sglang 0.5.10 / 0.5.11: python/sglang/srt/models/mistral_eagle.py (absent / :208 EntryClass)",
        "sglang 0.5.17 / 0.5.18: python/sglang/srt/models/dflash.py (EntryClass :589 without / :628-632 with MuseGlimmerAssistantModel)",
    ),
)
