"""DM346 eagle3-aux-layer-ids-ignored."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.changes import (
    EAGLE3_CAPTURE,
    EAGLE_HOOKS,
    NO_EAGLE3_CAPTURE,
)

DRAFT = {
    "architectures": ("LlamaForCausalLMEagle3",),
    "eagle_aux_hidden_state_layer_ids": (2, 16, 29),
}


def fixed_aux_layer_ids(num_layers: int) -> tuple[int, int, int]:
    """The layers the target captures without the draft's ids, in eagle_config's numbering.

    ``set_eagle3_layers_to_capture`` marks ``[2, n // 2, n - 3]`` and the model appends the state
    entering each marked layer, the output of the layer before: ids ``[1, n // 2 - 1, n - 4]``
    (0.4.9 maps a draft's ids back with ``val + 1``)."""
    return (1, num_layers // 2 - 1, num_layers - 4)


def _target_lacks_capture(arch: str, ctx: CheckContext) -> bool:
    """The fixed layers are LlamaForCausalLM's, the only capture hook in the window; a target without a
    working hook fails to start instead (DM040)."""
    hook = EAGLE3_CAPTURE.get(arch) or EAGLE_HOOKS.get(arch)
    return arch in NO_EAGLE3_CAPTURE or (
        hook is not None and not hook.present_in(ctx.version)
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft, target = ctx.draft, ctx.target
    if ctx.algorithm != "EAGLE3" or draft is None or target is None:
        return
    if _target_lacks_capture(target.architecture or "", ctx):
        return
    ids, layers = draft.eagle_aux_hidden_state_layer_ids, target.num_hidden_layers
    if (
        not ids
        or layers is None
        or tuple(ids) == (fixed := fixed_aux_layer_ids(layers))
    ):
        return
    yield RULE.finding(
        f"The EAGLE3 draft's config.json names eagle_aux_hidden_state_layer_ids {list(ids)}, but SGLang "
        f"{ctx.version} ignores them and feeds the head the target's layers {list(fixed)} (its fixed choice for "
        f"{layers} layers): the head drafts from features it was not trained on, so few drafts are accepted (the "
        "output stays correct). SGLang 0.4.9 and later capture the layers the draft names",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM346",
    category=Category.PERF,
    name="eagle3-aux-layer-ids-ignored",
    summary="EAGLE3 head trained on other target layers than SGLang's fixed three, before 0.4.9",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm EAGLE3` with a draft whose config.json `eagle_config."
        "eagle_aux_hidden_state_layer_ids` differ from `[1, n // 2 - 1, n - 4]` (n: the target's "
        "`num_hidden_layers`), SGLang 0.4.4.post2 (the first release with EAGLE3) to 0.4.8.post1, on a target that "
        "has the capture hook there (a Llama-derived class: `llama.py` is the only model defining it, 0.4.8.post1 "
        ":700; a class without it fails to start, DM040).",
        why="Up to 0.4.8.post1 the model runner calls `set_eagle3_layers_to_capture()` with no ids (0.4.4.post2 "
        "`model_executor/model_runner.py:211-213`), and `LlamaForCausalLM.set_eagle3_layers_to_capture` always marks "
        "`[2, num_layers // 2, num_layers - 3]` (0.4.4.post2 `models/llama.py:627-630`, 0.4.8.post1 :700-706), whose "
        "inputs are the outputs of layers `1, n // 2 - 1, n - 4` (`LlamaModel.forward` appends the state entering "
        "a marked layer, 0.4.8.post1 :331). 0.4.9 reads the draft's `eagle_config.eagle_aux_hidden_state_layer_ids` "
        "(`model_runner.py:320-341`) and marks `[val + 1 for val in layer_ids]` (`llama.py:700-712`). A head "
        "trained on other layers drafts from the wrong features: acceptance falls, the output is unchanged.",
        fix="Use SGLang 0.4.9 or later with this head, or a head trained on the default layers.",
        fix_safety="No automatic fix: the release and the draft checkpoint are the user's choice.",
    ),
    bad=Example(
        argv=LLAMA31_8B_EAGLE3,
        target={"num_hidden_layers": 32},
        draft=DRAFT,
        sglang_version="0.4.8.post1",
    ),
    good=Example(
        argv=LLAMA31_8B_EAGLE3,
        target={"num_hidden_layers": 32},
        draft=DRAFT,
        sglang_version="0.4.9",
    ),
    sources=(
        "sglang 0.4.4.post2: python/sglang/srt/model_executor/model_runner.py:211-213",
        "sglang 0.4.4.post2: python/sglang/srt/models/llama.py:627-630",
        "sglang 0.4.8.post1: python/sglang/srt/models/llama.py:331, 700-706",
        "sglang 0.4.9: python/sglang/srt/model_executor/model_runner.py:320-341",
        "sglang 0.4.9: python/sglang/srt/models/llama.py:700-712",
    ),
    sglang_versions=">=0.4.4.post2,<0.4.9",
)
