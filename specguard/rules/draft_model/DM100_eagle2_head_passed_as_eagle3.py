"""DM100 eagle2-head-passed-as-eagle3."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.draft_model._common import EAGLE2_FC_FACTOR, eagle3_fc_layout
from specguard.rules.examples import LLAMA2_7B_EAGLE


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.draft
    if ctx.algorithm != "EAGLE3" or draft is None or draft.weights is None or draft.weights.fc_shape is None:
        return
    layout = eagle3_fc_layout(draft, ctx.version)
    if layout is None or len(draft.weights.fc_shape) != 2 or draft.hidden_size is None:
        return
    width, count = layout
    fc_in = draft.weights.fc_shape[1]
    if fc_in != EAGLE2_FC_FACTOR * draft.hidden_size or fc_in == width * count:
        return
    yield RULE.finding(
        f"the draft's weights are an EAGLE-1/EAGLE-2 head: its fc.weight is {list(draft.weights.fc_shape)}, "
        f"the Linear({EAGLE2_FC_FACTOR} x hidden_size {draft.hidden_size}, ...) that concatenates a token embedding "
        f"with one hidden state, while EAGLE3 builds fc as Linear({width} x {count} aux hidden states = "
        f"{width * count}, ...). Loading fails with 'Attempted to load weight ... into parameter ...' after the "
        f"target has loaded. Use {ctx.flag('--speculative-algorithm')} EAGLE with this head, or an EAGLE3 head",
        flags=("--speculative-algorithm", "--speculative-draft-model-path"),
    )


RULE = Rule(
    check=check,
    code="DM100",
    category=Category.START,
    name="eagle2-head-passed-as-eagle3",
    summary="An EAGLE-1/EAGLE-2 head (fc width 2 x hidden) is launched as EAGLE3",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="Reads the draft's `fc.weight` shape from its safetensors headers and compares its input width "
        "with the one SGLang builds for an EAGLE3 head.",
        why="An EAGLE-1/EAGLE-2 head's `fc` is `Linear(2 * hidden_size, hidden_size)`: it concatenates the "
        "token embedding with the target's last hidden state (`models/llama_eagle.py:91`). An EAGLE3 head's "
        "`fc` is `Linear(target_hidden_size * num_aux_hidden_states, hidden_size)`, three aux states by "
        "default (`models/llama_eagle3.py:151-167`). The config.json alone cannot tell them apart when "
        "someone relabels `architectures` to `LlamaForCausalLMEagle3`; the weights can. SGLang's weight "
        "loader asserts equal shapes (`model_loader/weight_utils.py:1582`), so the launch fails after both "
        "models are loaded.",
        fix="Launch the head with `--speculative-algorithm EAGLE`, or use an EAGLE3 head trained for the target. "
        "No automatic fix: which head to use is the user's choice.",
        fix_safety="No fix.",
    ),
    bad=Example(
        argv=("--model-path", "meta-llama/Llama-2-7b-chat-hf", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "lmsys/sglang-EAGLE-llama2-chat-7B"),
        target={"hidden_size": 4096},
        draft={"architectures": ("LlamaForCausalLMEagle3",), "hidden_size": 4096,
               "weights": {"source": "example", "tensor_count": 10, "fc_shape": (4096, 8192)}},
    ),
    good=Example(
        argv=LLAMA2_7B_EAGLE,
        target={"hidden_size": 4096},
        draft={"architectures": ("LlamaForCausalLMEagle",), "hidden_size": 4096,
               "weights": {"source": "example", "tensor_count": 10, "fc_shape": (4096, 8192)}},
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/models/llama_eagle.py:91",
        "sglang 0.5.23: python/sglang/srt/models/llama_eagle3.py:151-167",
        "sglang 0.5.23: python/sglang/srt/model_loader/weight_utils.py:1582-1585",
        "fixture: shared/fixtures/hf-configs/yuhuili/EAGLE-llama2-chat-7B/config.json (an EAGLE-2 head: hidden 4096)",
    ),
)
