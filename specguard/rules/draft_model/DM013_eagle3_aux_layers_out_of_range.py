"""DM013 eagle3-aux-layers-out-of-range."""

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
from specguard.sglang_facts.changes import Change

# GPT-OSS captures hidden-state boundaries 0..num_layers (the output after the last block included) and keeps an id
# list whose max is num_hidden_layers as given (0.5.17 models/gpt_oss.py:723-743, 1338-1343; 0.5.23 :708-742,
# 1337-1351); 0.5.16 captured inside the layer loop only, after the +1 shift (:689-693, 1296).
GPT_OSS = "GptOssForCausalLM"
GPT_OSS_FINAL_BOUNDARY = Change(
    "0.5.17",
    "0.5.17 models/gpt_oss.py:723-743 boundary i + 1 after block i; :1338-1343 keeps ids ending at num_hidden_layers",
)


def _uncaptured(ctx: CheckContext, layer_ids: tuple[int, ...], layers: int) -> list[int]:
    """The ids the target never captures (negative ids count as bad: no head is trained on them)."""
    target = ctx.target
    if target is not None and target.architecture == GPT_OSS and GPT_OSS_FINAL_BOUNDARY.present_in(ctx.version):
        shift = 0 if layer_ids and max(layer_ids) == layers else 1
        return [i for i in layer_ids if i < 0 or i + shift > layers]
    # SGLang captures the input of layer id+1 (llama.py:939-941), inside the loop over range(layers).
    return [i for i in layer_ids if i < 0 or i + 1 >= layers]


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "EAGLE3" or ctx.target is None or ctx.draft is None:
        return
    layer_ids = ctx.draft.eagle_aux_hidden_state_layer_ids
    layers = ctx.target.num_hidden_layers
    if layer_ids is None or layers is None:
        return
    bad = _uncaptured(ctx, layer_ids, layers)
    if not bad:
        return
    yield RULE.finding(
        f"the EAGLE3 head's eagle_config.eagle_aux_hidden_state_layer_ids {list(layer_ids)} name layer(s) "
        f"{bad}, but the target has {layers} layers: those states are never "
        "captured, so the head's fc gets fewer features than it was built for and the first draft forward "
        "fails after loading. The head was trained for a deeper target; use one trained for this target",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    check=check,
    code="DM013",
    # sgl-jax never reads the draft's layer ids (it captures the target's own list: JX235).
    dialects=SGLANG_DIALECTS,
    category=Category.START,
    name="eagle3-aux-layers-out-of-range",
    summary="An EAGLE3 head captures target layers the target does not have",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="Checks the draft's `eagle_config.eagle_aux_hidden_state_layer_ids` against the target's "
        "`num_hidden_layers`.",
        why="SGLang reads the capture layers from the draft's config.json "
        "(`model_runner_components/spec_aux_hidden_state.py:184-196`) and the target captures the input of "
        "layer `id + 1` while looping over its layers (`models/llama.py:929-941`, `qwen2.py:781-794`, "
        "`qwen3.py:778-791`). An id of `num_hidden_layers - 1` or more is never reached, so fewer than "
        "three aux states reach the head's `fc` (`Linear(3 * hidden, hidden)`) and the first draft forward "
        "fails with a shape error, after both models have loaded. SGLang checks nothing at argument time. "
        "Typical cause: a Qwen3-235B head ([1, 46, 90], 94 layers) paired with a 64-layer Qwen3-32B. From 0.5.17 "
        "GPT-OSS also captures the output after its last block (`models/gpt_oss.py:723-743`) and takes an id list "
        "whose largest id is `num_hidden_layers` as given (:1338-1343), so there ids up to `num_hidden_layers - 1` "
        "(or up to `num_hidden_layers` in such a list) are captured.",
        fix="Use a head trained for this target. No automatic fix.",
        fix_safety="No fix: the draft checkpoint is the user's choice.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen3-32B", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "lmsys/Qwen3-235B-A22B-EAGLE3"),
        target={"num_hidden_layers": 64},
        draft={"eagle_aux_hidden_state_layer_ids": (1, 46, 90)},
    ),
    good=Example(
        argv=("--model-path", "Qwen/Qwen3-235B-A22B", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "lmsys/Qwen3-235B-A22B-EAGLE3"),
        target={"num_hidden_layers": 94},
        draft={"eagle_aux_hidden_state_layer_ids": (1, 46, 90)},
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/model_executor/model_runner_components/spec_aux_hidden_state.py:184-196",
        "sglang 0.5.23: python/sglang/srt/models/llama.py:484-494, 929-941",
        "sglang 0.5.23: python/sglang/srt/models/llama_eagle3.py:155-167",
        "sglang 0.5.16: python/sglang/srt/models/gpt_oss.py:689-693,1296",
        "sglang 0.5.17: python/sglang/srt/models/gpt_oss.py:723-743,1338-1343",
        "sglang 0.5.23: python/sglang/srt/models/gpt_oss.py:708-742,1337-1351",
        "fixture: shared/fixtures/draft-templates/sgl-project-SpecForge/qwen3-235B-A22B-eagle3.json",
        "seed: slime-speculative-decoding.en.md (Support Status: Qwen3-235B-A22B-EAGLE3)",
    ),
)
