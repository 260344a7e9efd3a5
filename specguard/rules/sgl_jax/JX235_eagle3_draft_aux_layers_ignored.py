"""JX235 eagle3-draft-aux-layers-ignored."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Dialect, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.sgl_jax._jax import raw_algorithm, runnable_in
from specguard.sglang_facts.sgl_jax import target_class


def captured_layers(num_layers: int, layer_ids: tuple[int, ...] | None) -> list[int]:
    """The target layers whose input sgl-jax captures: id + 1 for each id it is given, else its
    default [2, n // 2, n - 3] (models/llama.py and qwen3.py set_eagle3_layers_to_capture)."""
    if layer_ids is None:
        return [2, num_layers // 2, num_layers - 3]
    return [i + 1 for i in layer_ids]


def check(ctx: CheckContext) -> Iterator[Finding]:
    built = ctx.env.sgl_jax_built
    if raw_algorithm(ctx) != "EAGLE3" or "EAGLE3" not in runnable_in(built):
        return
    if ctx.target is None or ctx.draft is None or ctx.target.num_hidden_layers is None:
        return
    trained_on = ctx.draft.eagle_aux_hidden_state_layer_ids
    found = target_class(ctx.target.architectures, built)
    # A class without the capture method fails at load instead (JX230).
    if trained_on is None or found is None or not found.layer_capture:
        return
    # sgl-jax reads eagle_config from the target's own config.json, not the draft's.
    captured = captured_layers(ctx.target.num_hidden_layers, ctx.target.eagle_aux_hidden_state_layer_ids)
    wanted = captured_layers(ctx.target.num_hidden_layers, trained_on)
    if captured == wanted:
        return
    yield RULE.finding(
        f"the EAGLE3 draft's eagle_config.eagle_aux_hidden_state_layer_ids is {list(trained_on)}, but sgl-jax "
        "never reads the draft's list: it takes eagle_config from the target's config.json"
        + (" (which has none)" if ctx.target.eagle_aux_hidden_state_layer_ids is None else "")
        + f" and captures the inputs of target layers {captured}, not {wanted}. The draft then sees hidden "
        "states it was not trained on and accepts far fewer tokens. Use a draft trained on sgl-jax's "
        "default layers, or serve this one with SGLang",
        flags=("--speculative-draft-model-path",),
    )


def _example(draft_ids: list[int]) -> Example:
    return Example(
        argv=("--model-path", "Qwen/Qwen3-32B", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "d", "--disable-overlap-schedule"),
        target={"architectures": ["Qwen3ForCausalLM"], "num_hidden_layers": 64},
        draft={"eagle_aux_hidden_state_layer_ids": draft_ids},
        dialect=Dialect.SGL_JAX,
        gpu="TPU-v6e",
    )


RULE = Rule(
    check=check,
    code="JX235",
    category=Category.PERF,
    name="eagle3-draft-aux-layers-ignored",
    summary="sgl-jax: EAGLE3 ignores the draft's aux hidden-state layers and captures its default ones",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="sgl-jax EAGLE3 launches whose draft config.json sets `eagle_config.eagle_aux_hidden_state_layer_ids` "
        "to layers other than those sgl-jax captures on the target.",
        why="`ModelRunner.load_model` reads `eagle_config` from `self.model_config.hf_config` of the target runner "
        "(the target's config.json, despite the comment 'get the aux layer from draft model config') and, "
        "finding none, calls `set_eagle3_layers_to_capture(None)`, which captures the inputs of layers "
        "[2, n // 2, n - 3] (f671c326 model_runner.py:255-264, llama.py:549-559, qwen3.py:554-563; the same at "
        "cddbf6f1 model_runner.py:583-592). SGLang instead reads the draft's list. A draft trained on other "
        "layers (for instance a head trained with SpecForge's other layer choice) loads and runs, but its fc "
        "gets other features and acceptance drops.",
        fix="Use an EAGLE3 draft trained on sgl-jax's default layers, or serve the draft with SGLang.",
        fix_safety="No automatic fix: the draft checkpoint is the user's choice.",
    ),
    bad=_example([1, 29, 57]),
    good=_example([1, 31, 60]),
    sources=(
        "sglang-jax f671c326 (#378): python/sgl_jax/srt/model_executor/model_runner.py:255-264; models/llama.py:549-559; models/qwen3.py:554-563",
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/model_executor/model_runner.py:583-592; models/llama.py:560-570; models/qwen3.py:564-575",
    ),
    dialects=(Dialect.SGL_JAX,),
)
