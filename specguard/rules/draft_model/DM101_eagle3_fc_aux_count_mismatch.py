"""DM101 eagle3-fc-aux-count-mismatch."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.draft_model._common import EAGLE2_FC_FACTOR, eagle3_fc_layout
from specguard.sglang_facts.changes import EAGLE3_AUX_COUNT_FROM_CONFIG


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.draft
    if ctx.algorithm != "EAGLE3" or draft is None or draft.weights is None or draft.weights.fc_shape is None:
        return
    layout = eagle3_fc_layout(draft, ctx.version)
    if layout is None or len(draft.weights.fc_shape) != 2:
        return
    width, count = layout
    fc_in = draft.weights.fc_shape[1]
    if fc_in == width * count:
        return
    if draft.hidden_size is not None and fc_in == EAGLE2_FC_FACTOR * draft.hidden_size:
        return  # an EAGLE-2 head: DM100 says so
    trained = f"{fc_in // width} aux hidden states of width {width}" if fc_in % width == 0 else f"an input width of {fc_in}"
    if not EAGLE3_AUX_COUNT_FROM_CONFIG.present_in(ctx.version):
        yield RULE.finding(
            f"the EAGLE3 head's fc.weight is {list(draft.weights.fc_shape)}: it was trained on {trained}, but SGLang "
            f"{ctx.env.sglang_version} builds fc for 3 aux states whatever the config says ({width * count} inputs), so "
            "the weights do not load (shape assertion). SGLang 0.5.12 and later size fc from the draft's "
            "num_aux_hidden_states or eagle_aux_hidden_state_layer_ids; upgrade, or use a 3-aux head",
            flags=("--speculative-draft-model-path",),
        )
        return
    ids = draft.eagle_aux_hidden_state_layer_ids
    said = (
        f"num_aux_hidden_states {draft.num_aux_hidden_states}" if draft.num_aux_hidden_states
        else f"eagle_aux_hidden_state_layer_ids {list(ids)}" if ids
        else "no aux layer ids (SGLang's default: 3 layers)"
    )
    yield RULE.finding(
        f"the EAGLE3 head's fc.weight is {list(draft.weights.fc_shape)}: it was trained on {trained}, but its "
        f"config.json gives {said}, so SGLang captures {count} target layer(s) and builds fc for {width * count} "
        "inputs. The weights do not load (shape assertion) or, if the config is fixed by hand, the head reads the "
        "wrong layers. Fix the draft's eagle_config.eagle_aux_hidden_state_layer_ids to the layers it was trained on",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    check=check,
    code="DM101",
    category=Category.START,
    name="eagle3-fc-aux-count-mismatch",
    summary="An EAGLE3 head's fc width disagrees with the aux layers its config names",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="Compares the input width of the draft's `fc.weight` (safetensors header) with the width SGLang "
        "builds: `target_hidden_size` (else `hidden_size`) times the number of aux hidden states.",
        why="SGLang sizes an EAGLE3 head's `fc` from the draft's config.json: `num_aux_hidden_states`, else the "
        "length of `eagle_config.eagle_aux_hidden_state_layer_ids`, else 3 (`models/llama_eagle3.py:151-167`), "
        "and the target captures exactly those layers (`models/llama.py:929-941`). A head trained on a different "
        "number of aux states (SpecForge and vLLM speculators both allow k != 3) whose config lost or changed "
        "the layer list fails the weight loader's shape assertion (`model_loader/weight_utils.py:1582`). "
        "SGLang 0.5.11 and earlier build `fc` for 3 aux states whatever the config says (0.5.11 "
        "`models/llama_eagle3.py:139`), so there a head trained on k != 3 never loads.",
        fix="Restore the layer ids the head was trained with in its config.json. No automatic fix.",
        fix_safety="No fix: the draft checkpoint is the user's.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen3-235B-A22B", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "lmsys/Qwen3-235B-A22B-EAGLE3"),
        target={"hidden_size": 4096, "num_hidden_layers": 94},
        draft={"hidden_size": 4096, "eagle_aux_hidden_state_layer_ids": (1, 46, 90),
               "weights": {"source": "example", "tensor_count": 12, "fc_shape": (4096, 16384)}},
    ),
    good=Example(
        argv=("--model-path", "Qwen/Qwen3-235B-A22B", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "lmsys/Qwen3-235B-A22B-EAGLE3"),
        target={"hidden_size": 4096, "num_hidden_layers": 94},
        draft={"hidden_size": 4096, "eagle_aux_hidden_state_layer_ids": (1, 46, 90),
               "weights": {"source": "example", "tensor_count": 12, "fc_shape": (4096, 12288)}},
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/models/llama_eagle3.py:151-167",
        "sglang 0.5.23: python/sglang/srt/models/llama.py:929-941",
        "sglang 0.5.23: python/sglang/srt/model_loader/weight_utils.py:1582-1585",
        "sglang 0.5.11: python/sglang/srt/models/llama_eagle3.py:139 (fc = Linear(hidden_size_in * 3, ...)); 0.5.12: llama_eagle3.py:161",
        "fixture: shared/fixtures/draft-templates/sgl-project-SpecForge/qwen3-235B-A22B-eagle3.json (aux ids [1, 46, 90])",
    ),
)
