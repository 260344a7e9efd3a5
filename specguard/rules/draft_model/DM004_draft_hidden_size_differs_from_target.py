"""DM004 draft-hidden-size-differs-from-target."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.sglang_facts.algorithms import EAGLE_HEAD_ALGORITHMS

# EAGLE3 heads whose config may declare ``target_hidden_size`` and then keep their own embedding.
_OWN_TARGET_HIDDEN = frozenset({"Eagle3DeepseekV2ForCausalLM"})


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_HEAD_ALGORITHMS or ctx.target is None or ctx.draft is None:
        return
    if ctx.spec.get("speculative_draft_model_path") is None:
        return
    target_hidden, draft_hidden = ctx.target.hidden_size, ctx.draft.hidden_size
    if target_hidden is None or draft_hidden is None or target_hidden == draft_hidden:
        return
    if ctx.draft.architecture in _OWN_TARGET_HIDDEN:
        return
    if ctx.algorithm == "EAGLE3":
        yield RULE.finding(
            f"the EAGLE3 head's hidden_size is {draft_hidden} but the target's is {target_hidden}: its fc layer "
            f"expects 3 x {draft_hidden} features and the target sends 3 x {target_hidden}, so the first draft "
            "forward (CUDA graph capture) fails with a shape error after both models have loaded. The head was "
            f"trained for another target (a head with its own width must say target_hidden_size: {target_hidden} "
            "in its config.json)",
            flags=("--speculative-draft-model-path",),
        )
        return
    yield RULE.finding(
        f"the EAGLE head's hidden_size is {draft_hidden} but the target's is {target_hidden}: the head takes "
        f"the target's {target_hidden}-wide hidden states and the target's embedding, so the first draft "
        "forward fails with a shape error after both models have loaded. Use a head trained for this target",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    check=check,
    code="DM004",
    category=Category.START,
    name="draft-hidden-size-differs-from-target",
    summary="An EAGLE/EAGLE3 head's hidden_size differs from the target's",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="Compares `hidden_size` of an EAGLE or EAGLE3 draft head with the target's.",
        why="An EAGLE head consumes the target's hidden states and shares its embedding. EAGLE-1 "
        "(`models/llama_eagle.py:91`) builds `fc = Linear(2 * hidden, hidden)` over the concatenation of "
        "the token embedding and the target hidden state. EAGLE3 (`models/llama_eagle3.py:151-167`) builds "
        "`fc = Linear(hidden_size_in * 3, hidden)` with `hidden_size_in = target_hidden_size` if the draft's "
        "config declares it, else the draft's own `hidden_size`; `set_embed` (`models/llama.py:910-918`) "
        "replaces the draft's embedding with the target's unless `target_hidden_size` differs from "
        "`hidden_size`. So without `target_hidden_size` the head only works at the target's width. SGLang "
        "checks none of this at argument time (P10) and the mismatch surfaces as a shape error in the "
        "first draft forward, after the weights have loaded. Kimi's MLA EAGLE3 head "
        "(`Eagle3DeepseekV2ForCausalLM`) is exempt: it declares `target_hidden_size`.",
        fix="Use a head trained for this target (SpecForge copies the target's hidden_size into the "
        "draft config). No automatic fix.",
        fix_safety="No fix: the draft checkpoint is the user's choice.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen3-32B", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B"),
        target={"hidden_size": 5120, "architectures": ("Qwen3ForCausalLM",)},
        draft={"hidden_size": 4096, "architectures": ("LlamaForCausalLMEagle3",)},
    ),
    good=Example(
        argv=("--model-path", "Qwen/Qwen3-32B", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "AngelSlim/Qwen3-32B_eagle3"),
        target={"hidden_size": 5120, "architectures": ("Qwen3ForCausalLM",)},
        draft={"hidden_size": 5120, "architectures": ("LlamaForCausalLMEagle3",)},
    ),
    sources=(
        "design: sglang-spec-checks.md P10 (draft/algorithm pairing accepted at argument time)",
        "design: dialects.md §4 (SpecForge copies hidden_size from the target)",
        "sglang 0.5.23: python/sglang/srt/models/llama_eagle3.py:151-167, 238-247",
        "sglang 0.5.23: python/sglang/srt/models/llama.py:910-918 (set_embed)",
        "sglang 0.5.23: python/sglang/srt/models/llama_eagle.py:91",
        "sglang 0.5.23: python/sglang/srt/models/kimi_k25_eagle3.py:208-213, 405-410",
    ),
)
