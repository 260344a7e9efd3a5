"""JX230 target-lacks-draft-hooks."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Dialect, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.sgl_jax._jax import raw_algorithm, runnable_in
from specguard.sglang_facts.sgl_jax import target_class


def check(ctx: CheckContext) -> Iterator[Finding]:
    algorithm = raw_algorithm(ctx)
    built = ctx.env.sgl_jax_built
    if algorithm not in runnable_in(built) or ctx.target is None:
        return
    found = target_class(ctx.target.architectures, built)
    if found is None:
        return
    at = f"this sgl-jax build ({built.isoformat()})" if built is not None else "sgl-jax"
    # ModelRunner.load_model asks the target to capture aux hidden states for EAGLE3, and for DFLASH
    # falls back to the same method when the class has no DFLASH one.
    if (algorithm == "EAGLE3" or algorithm == "DFLASH") and not found.layer_capture:
        yield RULE.finding(
            f"{algorithm} on {at}: loading the target calls set_eagle3_layers_to_capture() on "
            f"{found.name}, which sgl-jax does not define for it (only the Llama, Phi3, InternLM3 and Qwen3 "
            "dense classes have it), so the server fails with AttributeError at model load. Serve a "
            "target of those classes, or another algorithm",
            flags=("--model-path", "--speculative-algorithm"),
        )
        return
    if found.embed_and_head is None or (built is not None and built < found.embed_and_head):
        since = (
            f" (it arrives for {found.name} on {found.embed_and_head.isoformat()}: use a newer build)"
            if found.embed_and_head is not None
            else ""
        )
        yield RULE.finding(
            f"{algorithm} on {at}: the draft worker shares the target's embedding and LM head through "
            f"get_embed_and_head(), which {found.name} does not have in this build{since}, so the server cannot "
            "start with this target: the draft worker raises AttributeError right after loading the draft (if "
            "loading the draft does not fail first)",
            flags=("--model-path", "--speculative-algorithm"),
        )


def _example(model: str, architecture: str) -> Example:
    return Example(
        argv=("--model-path", model, "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d",
              "--disable-overlap-schedule"),
        target={"architectures": [architecture]},
        dialect=Dialect.SGL_JAX,
        gpu="TPU-v6e",
    )


RULE = Rule(
    check=check,
    code="JX230",
    category=Category.START,
    name="target-lacks-draft-hooks",
    summary="sgl-jax: the target class lacks a method the speculative path calls on it (AttributeError at start)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="sgl-jax speculative launches (EAGLE, EAGLE3, NEXTN, DFLASH) whose target class, the first "
        "`architectures` entry of its config.json that the build registers, lacks `set_eagle3_layers_to_capture` "
        "(EAGLE3, DFLASH) or `get_embed_and_head` (every algorithm) in that build.",
        why="For EAGLE3, `ModelRunner.load_model` calls `self.model.set_eagle3_layers_to_capture(...)` on the "
        "target (f671c326 model_runner.py:264; cddbf6f1 :583-592), and for DFLASH it calls "
        "`set_dflash_layers_to_capture`, or the EAGLE3 method when the class has none (cddbf6f1 :593-609). "
        "Only LlamaForCausalLM (with its Phi3 and InternLM3 subclasses) and Qwen3ForCausalLM define it, at "
        "every build from f671c326 to cddbf6f1; Qwen3-MoE, Qwen2, MiMo, DeepSeek... fail with AttributeError. "
        "Every draft worker then shares the target's embedding and head with "
        "`target_worker.model_runner.model.get_embed_and_head()` (f671c326 eagle_worker.py:74; cddbf6f1 "
        "eagle_draft_worker.py:80, multi_layer_draft_worker.py:133, dflash_worker.py:118), which Llama, QWen, "
        "Qwen3 and Qwen3-MoE have from f671c326, Qwen2 (and MiMo, its subclass) only from a5163819 "
        "(2026-01-17), MiMo-V2-Flash and MiMo-V2 only from 10fe9e8b (2026-05-28), and Qwen2-MoE, Gemma2, Grok, "
        "Bailing, DeepSeek and GLM-4-MoE at no build up to cddbf6f1. A class specguard has not read is not judged.",
        fix="Serve a target class that has the method in this build (or a newer build), or another algorithm.",
        fix_safety="No automatic fix: the target is the model being served.",
    ),
    bad=_example("Qwen/Qwen3-30B-A3B", "Qwen3MoeForCausalLM"),
    good=_example("Qwen/Qwen3-32B", "Qwen3ForCausalLM"),
    sources=(
        "sglang-jax f671c326 (#378): python/sgl_jax/srt/model_executor/model_runner.py:255-264 (set_eagle3_layers_to_capture on the target)",
        "sglang-jax f671c326: python/sgl_jax/srt/speculative/eagle_worker.py:74 (get_embed_and_head on the target)",
        "sglang-jax f671c326: models/llama.py:549,561; qwen.py:426; qwen3.py:531,554; qwen3_moe.py:544 (the only hooks)",
        "sglang-jax a5163819: python/sgl_jax/srt/models/qwen2.py:459 (Qwen2ForCausalLM.get_embed_and_head arrives)",
        "sglang-jax 10fe9e8b: python/sgl_jax/srt/models/mimo_v2_flash.py:832 (MiMoV2FlashForCausalLM.get_embed_and_head arrives)",
        "sglang-jax 4406938a (#1467): python/sgl_jax/srt/model_executor/model_runner.py:499-516 (DFLASH falls back to set_eagle3_layers_to_capture)",
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/model_executor/model_runner.py:583-609; speculative/eagle_draft_worker.py:80, multi_layer_draft_worker.py:133, dflash_worker.py:118",
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/models/registry.py:40-63 (the first registered architecture is loaded)",
    ),
    dialects=(Dialect.SGL_JAX,),
    log_signatures=(
        r"object has no attribute 'set_eagle3_layers_to_capture'",
        r"object has no attribute 'get_embed_and_head'",
    ),
)
