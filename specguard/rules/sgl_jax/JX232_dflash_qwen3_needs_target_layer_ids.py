"""JX232 dflash-qwen3-needs-target-layer-ids."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Dialect, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import QWEN3_8B_DFLASH
from specguard.rules.sgl_jax._jax import raw_algorithm, runnable_in
from specguard.sglang_facts.sgl_jax import target_class

# The one target class with set_dflash_layers_to_capture, which refuses None (sglang-jax 4406938a ..
# cddbf6f1 models/qwen3.py:577-579); the others fall back to the EAGLE3 method and its default layers.
DFLASH_CAPTURE_CLASS = "Qwen3ForCausalLM"


def check(ctx: CheckContext) -> Iterator[Finding]:
    built = ctx.env.sgl_jax_built
    if raw_algorithm(ctx) != "DFLASH" or "DFLASH" not in runnable_in(built):
        return
    if ctx.target is None or ctx.draft is None or ctx.draft.dflash_target_layer_ids is not None:
        return
    found = target_class(ctx.target.architectures, built)
    if found is None or found.name != DFLASH_CAPTURE_CLASS:
        return
    yield RULE.finding(
        f"DFLASH on sgl-jax with a {found.name} target: the draft's config.json gives no target_layer_ids "
        "(neither in dflash_config nor at the top level), so loading the target raises 'DFLASH requires explicit "
        "target layer ids.' (sgl-jax only warns when it parses the draft config, then "
        "set_dflash_layers_to_capture refuses None). Use a DFlash draft whose config lists the target layers "
        "it was trained on",
        flags=("--speculative-draft-model-path",),
    )


def _example(draft: dict[str, object]) -> Example:
    return Example(
        argv=(*QWEN3_8B_DFLASH, "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
              "--grammar-backend", "none"),
        target={"architectures": [DFLASH_CAPTURE_CLASS], "num_hidden_layers": 36},
        draft=draft,
        dialect=Dialect.SGL_JAX,
        gpu="TPU-v6e",
    )


RULE = Rule(
    check=check,
    code="JX232",
    category=Category.START,
    name="dflash-qwen3-needs-target-layer-ids",
    summary="sgl-jax: DFLASH on a Qwen3 target with a draft config that lists no target_layer_ids",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="sgl-jax DFLASH launches whose target loads as Qwen3ForCausalLM and whose draft config.json has no "
        "`target_layer_ids` (in `dflash_config` or at the top level).",
        why="From DFLASH's arrival (sglang-jax #1467, 4406938a, 2026-07-28) `ModelRunner.load_model` passes "
        "`parse_dflash_draft_config(...).target_layer_ids` to the target (4406938a model_runner.py:499-516; "
        "cddbf6f1 :593-609); the parser only warns 'draft config has no target_layer_ids' and returns None "
        "(dflash_util.py:70-80), and `Qwen3ForCausalLM.set_dflash_layers_to_capture` raises "
        "`ValueError('DFLASH requires explicit target layer ids.')` on None (qwen3.py:577-579, the same at "
        "cddbf6f1). Other targets have no DFLASH method and fall back to the EAGLE3 default layers.",
        fix="Use a DFlash draft whose config.json lists `target_layer_ids` (or add the list it was trained on).",
        fix_safety="No automatic fix: the layers come from how the draft was trained.",
    ),
    bad=_example({"block_size": 16}),
    good=_example({"block_size": 16, "dflash_target_layer_ids": [1, 9, 17, 25, 33]}),
    sources=(
        "sglang-jax b859cf17 (4406938a^): python/sgl_jax/srt/server_args.py:1433 (no DFLASH among the choices)",
        "sglang-jax 4406938a (#1467): python/sgl_jax/srt/model_executor/model_runner.py:499-516; speculative/dflash_util.py:70-80; models/qwen3.py:577-579",
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/model_executor/model_runner.py:593-609; speculative/dflash_util.py:70-80; models/qwen3.py:577-579",
    ),
    dialects=(Dialect.SGL_JAX,),
    log_signatures=(r"DFLASH requires explicit target layer ids\.",),
)
