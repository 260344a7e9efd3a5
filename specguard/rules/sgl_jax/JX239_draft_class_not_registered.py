"""JX239 draft-class-not-registered."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

from specguard.models import Category, Dialect, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.draft_model._common import (
    DFLASH_HEADS,
    EAGLE1_HEADS,
    EAGLE3_HEADS,
    GEMMA4_ASSISTANTS,
    UNREGISTERED_EAGLE3_NAMES,
)
from specguard.rules.sgl_jax._jax import raw_algorithm, runnable_in
from specguard.sglang_facts.sgl_jax import DFLASH, SPECULATIVE_DECODING

# The draft classes sgl-jax registers (models/*.py EntryClass), from the build each arrived in:
# llama_eagle3.py (f671c326 #378; cddbf6f1 :367), mimo_mtp.py (a5163819 #675; cddbf6f1 :270),
# mimo_v2_nextn.py (82ea671f #1065; cddbf6f1 :373), dflash.py (4406938a #1467; cddbf6f1 :507).
REGISTERED_DRAFT_CLASSES: dict[str, date] = {
    "LlamaForCausalLMEagle3": SPECULATIVE_DECODING.first,
    "MiMoMTPForCausalLM": date(2026, 1, 17),
    "MiMoV2MTPForCausalLM": date(2026, 5, 14),
    "DFlashDraftModel": DFLASH.first,
}
# A draft loaded from a target checkpoint gets its MTP class by name (ModelConfig with is_draft_model,
# f671c326 configs/model_config.py:81-88, cddbf6f1 :189-202); DeepSeek's never exists in sgl-jax.
DRAFT_REWRITES = {"DeepseekV3ForCausalLM": "DeepseekV3ForCausalLMNextN"}
# SGLang's draft heads (rules/draft_model/_common.py): names sgl-jax registers only as listed above.
SGLANG_DRAFT_HEADS = (
    EAGLE1_HEADS | EAGLE3_HEADS | DFLASH_HEADS | GEMMA4_ASSISTANTS | frozenset(UNREGISTERED_EAGLE3_NAMES)
    | frozenset(DRAFT_REWRITES.values())
)


def _unregistered(name: str, built: date | None) -> bool:
    since = REGISTERED_DRAFT_CLASSES.get(name)
    if since is None:
        return name in SGLANG_DRAFT_HEADS
    return built is not None and built < since


def check(ctx: CheckContext) -> Iterator[Finding]:
    built = ctx.env.sgl_jax_built
    if raw_algorithm(ctx) not in runnable_in(built) or ctx.draft is None or not ctx.draft.architectures:
        return
    names = list(ctx.draft.architectures)
    names[0] = DRAFT_REWRITES.get(names[0], names[0])
    # The registry loads the first name it registers (models/registry.py _normalize_archs): the launch
    # fails only when none is registered, and a name specguard does not know may be.
    if not all(_unregistered(name, built) for name in names):
        return
    at = f"this sgl-jax build ({built.isoformat()})" if built is not None else "sgl-jax"
    registered = ", ".join(n for n, since in REGISTERED_DRAFT_CLASSES.items() if built is None or built >= since)
    yield RULE.finding(
        f"the draft's config.json names {', '.join(names)}, a class {at} does not register (its draft classes: "
        f"{registered}), so loading the draft fails with 'Model architectures [...] are not supported for now' "
        "(or 'Cannot find model module') after the target has loaded. Use a draft of a class this build "
        "registers, or serve it with SGLang",
        flags=("--speculative-draft-model-path",),
    )


def _example(architecture: str, build: str | None = None) -> Example:
    return Example(
        argv=("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE",
              "--speculative-draft-model-path", "d", "--disable-overlap-schedule"),
        target={"architectures": ["LlamaForCausalLM"]},
        draft={"architectures": [architecture]},
        dialect=Dialect.SGL_JAX,
        gpu="TPU-v6e",
        sgl_jax_version=build,
    )


RULE = Rule(
    check=check,
    code="JX239",
    category=Category.START,
    name="draft-class-not-registered",
    summary="sgl-jax: the draft's class is one this build does not register (the draft fails to load)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="sgl-jax speculative launches whose draft config.json names only SGLang draft classes that the "
        "sgl-jax build does not register: an EAGLE-1/2 head (`LlamaForCausalLMEagle`, `Qwen2ForCausalLMEagle`...), "
        "a DFLASH head other than `DFlashDraftModel`, a Gemma 4 assistant, the vLLM/AngelSlim "
        "`Eagle3LlamaForCausalLM`, DeepSeek's MTP layer (`DeepseekV3ForCausalLM`, which the draft config turns "
        "into `DeepseekV3ForCausalLMNextN`), or a registered draft class before the build that added it.",
        why="The draft worker builds its model through the same registry as the target (tp_worker.py, "
        "`is_draft_model=is_draft_worker`; f671c326 :71, cddbf6f1 :107). The registry keeps the architectures "
        "it registers and otherwise falls back to a Transformers class (model_loader/arch.py:14-66), which "
        "raises 'Cannot find model module' for a class Transformers lacks, while `TransformersForCausalLM` "
        "itself is registered by no model module, so `_raise_for_unsupported` ends it: 'Model architectures "
        "[...] are not supported for now' (models/registry.py:20-33, the same at f671c326 and cddbf6f1). The "
        "draft classes sgl-jax registers are `LlamaForCausalLMEagle3` (f671c326, #378), `MiMoMTPForCausalLM` "
        "(a5163819, #675), `MiMoV2MTPForCausalLM` (82ea671f, #1065) and `DFlashDraftModel` (4406938a, #1467); "
        "a LlamaForCausalLM, MiMo or MiMo-V2 draft config is renamed to the first, second or third "
        "(configs/model_config.py:189-202 at cddbf6f1), and a DeepSeek-V3 one to "
        "`DeepseekV3ForCausalLMNextN`, which no build registers. A name specguard does not know is not judged.",
        fix="Use a draft of a class this build registers (an EAGLE3 head `LlamaForCausalLMEagle3`, or the "
        "target family's own MTP class), or serve the draft with SGLang.",
        fix_safety="No automatic fix: the draft checkpoint is the user's choice.",
    ),
    bad=_example("LlamaForCausalLMEagle"),
    good=_example("LlamaForCausalLMEagle3"),
    sources=(
        "sglang-jax f671c326 (#378): python/sgl_jax/srt/models/registry.py:20-63; model_loader/arch.py:14-66",
        "sglang-jax f671c326: python/sgl_jax/srt/configs/model_config.py:81-88; managers/tp_worker.py:71; models/llama_eagle3.py (EntryClass)",
        "sglang-jax a5163819 (#675): python/sgl_jax/srt/models/mimo_mtp.py (EntryClass = MiMoMTPForCausalLM)",
        "sglang-jax 82ea671f (#1065): python/sgl_jax/srt/models/mimo_v2_nextn.py (EntryClass = MiMoV2MTPForCausalLM)",
        "sglang-jax 4406938a (#1467): python/sgl_jax/srt/models/dflash.py (EntryClass = DFlashDraftModel)",
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/models/registry.py:20-63; configs/model_config.py:189-202; managers/tp_worker.py:107",
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/models/llama_eagle3.py:367, mimo_mtp.py:270, mimo_v2_nextn.py:373, dflash.py:507",
    ),
    dialects=(Dialect.SGL_JAX,),
)
