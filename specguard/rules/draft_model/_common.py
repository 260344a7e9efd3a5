"""Facts about SGLang's draft handling that several DM (and SL) rules share.

Every list here is read from the SGLang 0.5.23 wheel (``pip download --no-deps sglang==0.5.23``);
the file and line are given with each one. Pure data and pure functions: no I/O.
"""

from __future__ import annotations

from packaging.version import Version

from specguard.models import ModelFacts
from specguard.refs import looks_like_repo_id
from specguard.resolution import MTP_TARGET_ARCHITECTURES
from specguard.rules.base import CheckContext
from specguard.sglang_facts.changes import EAGLE3_AUX_COUNT_FROM_CONFIG

# P25, ``arg_groups/speculative_hook.py:1121-1156`` (``_handle_eagle_family``): for these target
# architectures SGLang fills ``--speculative-draft-model-path`` with ``--model-path`` when it is
# unset, and warns "DeepSeek MTP does not require setting speculative_draft_model_path" when it
# is set (except for the two Mistral/Pixtral ones, whose MTP draft is a separate EAGLE head).
# One table, kept in specguard.resolution.speculative, which predicts the same fill-in.
MTP_AUTOFILL_ARCHITECTURES = MTP_TARGET_ARCHITECTURES
MTP_AUTOFILL_NO_WARNING = frozenset({"MistralLarge3ForCausalLM", "PixtralForConditionalGeneration"})

# ``configs/model_config.py:1010-1211`` (``ModelConfig._config_draft_model``): a draft-mode
# ModelConfig of these architectures is rewritten to the model's own MTP/NextN module. With no
# draft path the draft worker loads ``--model-path`` (``ModelConfig.from_server_args``:
# ``model_path=model_path or cfg.model_path``, model_config.py:956), so EAGLE/NEXTN without a
# draft path works for exactly these targets (and the P25 ones). MiMo is here: slime's
# ``run-mimo-7B-rl-eagle.sh`` gives no draft path and SGLang loads ``MiMoMTP`` from the target.
# The table is the rewrites that force ``num_nextn_predict_layers = 1`` (a config without the key
# is normal there) plus the rest.
MTP_REWRITE_FORCES_ONE_LAYER = frozenset(
    {
        "DeepseekV4ForCausalLM",
        "Glm5NextForConditionalGeneration",
        "MiMoV2ForCausalLM",
        "MiMoV2FlashForCausalLM",
        "Qwen3NextForCausalLM",
        "Qwen4ExpForConditionalGeneration",
        "Qwen3MoeForCausalLM",
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForConditionalGeneration",
        "Qwen3_5ForCausalLM",
        "Qwen3_5MoeForCausalLM",
        "InternS2PreviewForConditionalGeneration",
        "InternS2MobiusForConditionalGeneration",
        "ExaoneMoEForCausalLM",
        "ExaoneMoeForCausalLM",
        "NemotronH_Omni_Reasoning_V3",
        "NemotronHForCausalLM",
        "NemotronHPuzzleForCausalLM",
        "HYV3ForCausalLM",
        "HYV4ForCausalLM",
    }
)
MTP_DRAFT_REWRITE_ARCHITECTURES = MTP_REWRITE_FORCES_ONE_LAYER | frozenset(
    {
        "DeepseekV3ForCausalLM",
        "DeepseekV32ForCausalLM",
        "GlmMoeDsaForCausalLM",
        "Glm4MoeForCausalLM",
        "Glm4MoeLiteForCausalLM",
        "GlmOcrForConditionalGeneration",
        "LongcatFlashForCausalLM",
        "MiMoForCausalLM",
        "Step3p5ForCausalLM",
        "Step3p7ForConditionalGeneration",
        "InklingForConditionalGeneration",
        "GigaChat35ForCausalLM",
        "BailingMoeV2ForCausalLM",
        "BailingMoeForCausalLM",
        "BailingMoeV2_5ForCausalLM",
        "BailingMoeV3ForCausalLM",
        "Ernie4_5_MoeForCausalLM",
    }
)


def is_mtp_capable(target: ModelFacts) -> bool | None:
    """Whether EAGLE/NEXTN without a draft path can use the target's own MTP layers."""
    arch = target.architecture
    if target.has_mtp_layers:
        return True
    if arch in MTP_AUTOFILL_ARCHITECTURES or arch in MTP_DRAFT_REWRITE_ARCHITECTURES:
        return True
    if arch is None:
        return None
    return False


# Draft heads registered in 0.5.23 (``EntryClass`` in ``models/*.py``).
EAGLE3_HEADS = frozenset({"LlamaForCausalLMEagle3", "Eagle3DeepseekV2ForCausalLM"})  # llama_eagle3.py:387, kimi_k25_eagle3.py:523
EAGLE1_HEADS = frozenset(
    {"LlamaForCausalLMEagle", "Qwen2ForCausalLMEagle", "MistralForCausalLMEagle", "MistralLarge3ForCausalLMEagle"}
)  # llama_eagle.py:153, qwen2_eagle.py:151, mistral_eagle.py:210, mistral_large_3_eagle.py:83
DFLASH_HEADS = frozenset(
    {
        "DFlashDraftModel",
        "DFlashLagunaForCausalLM",
        "MuseGlimmerAssistantModel",
        "DFlash2DraftModel",
        "DFlash2BeamDraftModel",
        "MiniMaxDFlash2DraftModel",
    }
)  # dflash.py:1317
GEMMA4_ASSISTANTS = frozenset({"Gemma4AssistantForCausalLM", "Gemma4UnifiedAssistantForCausalLM"})  # gemma4_mtp.py:404
# Names other stacks use for an EAGLE3 head that SGLang 0.5.23 does not register.
UNREGISTERED_EAGLE3_NAMES = {"Eagle3LlamaForCausalLM": "LlamaForCausalLMEagle3"}  # AngelSlim / vLLM style


def is_mtp_module(arch: str | None) -> bool:
    """An MTP/NextN draft class (or a target SGLang rewrites to one in draft mode)."""
    if arch is None:
        return False
    return arch in MTP_DRAFT_REWRITE_ARCHITECTURES or arch.endswith(("NextN", "MTP")) or arch in ("MiMoMTP", "IQuestQ1MTP")


def derived_context_length(facts: ModelFacts | None) -> int | None:
    """SGLang's ``get_context_length`` (``utils/hf_transformers/common.py:677-694``).

    ``max_position_embeddings`` times the rope-scaling ``factor``, except that the factor is 1
    when ``rope_scaling`` has ``original_max_position_embeddings`` or is ``rope_type: llama3``.
    (SGLang reads ``max_sequence_length``, ``seq_length``, ``max_seq_len`` and
    ``model_max_length`` before ``max_position_embeddings``; ModelFacts does not carry those.)
    """
    if facts is None or facts.max_position_embeddings is None:
        return None
    factor: float = 1
    scaling = facts.rope_scaling
    if scaling:
        raw = scaling.get("factor", 1)
        factor = raw if isinstance(raw, (int, float)) else 1
        if "original_max_position_embeddings" in scaling or scaling.get("rope_type") == "llama3":
            factor = 1
    return int(factor * facts.max_position_embeddings)


def is_hub_reference(path: str | None, facts: ModelFacts | None) -> bool:
    """Whether SGLang will fetch ``path`` from the hub (a repo id that is not a local directory).

    A hub download always resolves to a snapshot commit (``facts.revision``); a local directory
    read without ``--revision`` has none, which tells ``org/name`` directories apart.
    """
    if not looks_like_repo_id(path):
        return False
    if facts is None:
        return True
    return facts.revision is not None or "@" in facts.source


def eagle3_fc_layout(draft: ModelFacts, version: Version) -> tuple[int, int] | None:
    """(input width per aux state, number of aux states) SGLang builds an EAGLE3 head's ``fc`` with:
    ``target_hidden_size`` else ``hidden_size``, times ``num_aux_hidden_states`` else the number
    of ``eagle_config.eagle_aux_hidden_state_layer_ids`` else 3 (0.5.23 ``models/llama_eagle3.py:151-167``)."""
    width = draft.target_hidden_size or draft.hidden_size
    if width is None:
        return None
    if not EAGLE3_AUX_COUNT_FROM_CONFIG.present_in(version):  # 0.5.11 and before: always 3
        return width, 3
    ids = draft.eagle_aux_hidden_state_layer_ids
    count = draft.num_aux_hidden_states or (len(ids) if ids else 3)
    return width, count


# The ``fc`` of an EAGLE-1/EAGLE-2 head is ``Linear(hidden_size * 2, hidden_size)``: the token's
# embedding concatenated with one hidden state (``models/llama_eagle.py:91``).
EAGLE2_FC_FACTOR = 2


def draft_config(ctx: CheckContext) -> ModelFacts | None:
    """The config.json SGLang loads as the draft: the target's when no separate draft path is given."""
    return ctx.target if ctx.drafts_from_target_checkpoint else ctx.draft
