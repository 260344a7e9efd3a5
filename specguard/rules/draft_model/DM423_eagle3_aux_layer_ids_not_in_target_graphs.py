"""DM423 eagle3-aux-layer-ids-not-in-target-graphs."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.draft_model.DM346_eagle3_aux_layer_ids_ignored import (
    fixed_aux_layer_ids,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.changes import EAGLE3_CAPTURE

# Targets whose capture hook marks [2, n // 2, n - 3] without ids and [val + 1 for val in ids] with them in every
# release of the window (llama.py, qwen2.py, qwen3.py), and whose model loop tests `i in self.layers_to_capture`
# while the CUDA graph is captured. LlamaForCausalLM has the hook in every EAGLE3 release; the Qwen ones from
# their EAGLE3_CAPTURE release.
DEFAULT_LAYOUT_TARGETS = frozenset(
    {"LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM"}
)


def _has_hook(arch: str, ctx: CheckContext) -> bool:
    change = EAGLE3_CAPTURE.get(arch)
    return change is None or change.present_in(ctx.version)


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft, target = ctx.draft, ctx.target
    if (
        ctx.algorithm != "EAGLE3"
        or draft is None
        or target is None
        or ctx.spec.get("disable_cuda_graph")
    ):
        return
    arch = target.architecture
    if (
        arch not in DEFAULT_LAYOUT_TARGETS
        or not _has_hook(arch, ctx)
        or draft.eagle_use_aux_hidden_state is False
    ):
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
        f"{ctx.version} captures the target's CUDA graphs before it applies them, with its fixed layers "
        f"{list(fixed)} for {layers} layers: every graphed verify feeds the head features from the wrong layers "
        "(only eager prefill uses the named ones), so few drafts are accepted while the output stays correct. "
        f"Use SGLang 0.5.11 or later, or {ctx.flag('--disable-cuda-graph')}",
        flags=("--speculative-draft-model-path",),
        fix=set_flags(
            "turn CUDA graphs off", Applicability.UNSAFE, disable_cuda_graph=True
        ),
    )


DRAFT = {
    "architectures": ("LlamaForCausalLMEagle3",),
    "eagle_aux_hidden_state_layer_ids": (2, 16, 29),
}

RULE = Rule(
    check=check,
    code="DM423",
    category=Category.PERF,
    name="eagle3-aux-layer-ids-not-in-target-graphs",
    summary="EAGLE3 head's own aux layer ids miss the target's CUDA graphs (0.4.9-0.5.10.post1)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm EAGLE3` with a draft whose `eagle_config.eagle_aux_hidden_state_layer_ids` "
        "differ from `[1, n // 2 - 1, n - 4]` (n: the target's `num_hidden_layers`), CUDA graphs on, on a "
        "LlamaForCausalLM, Qwen2ForCausalLM (0.5.2rc0 on) or Qwen3ForCausalLM target, SGLang 0.4.9 to 0.5.10.post1.",
        why="From 0.4.9 to 0.5.10.post1 `ModelRunner.initialize` captures the target's CUDA graphs "
        "(0.4.9 model_executor/model_runner.py:314; 0.5.10.post1 :655) before it applies the draft's ids with "
        "`set_eagle3_layers_to_capture(eagle_aux_hidden_state_layer_ids)` (0.4.9 :341; 0.5.10.post1 :668-670), and "
        "`CudaGraphRunner.__init__` first calls `set_eagle3_layers_to_capture()` without ids (0.4.9 "
        "cuda_graph_runner.py:298; 0.5.10.post1 :644-648), which marks `[2, n // 2, n - 3]` (0.4.9 models/llama.py:"
        "700-712, qwen3.py:461-474; 0.5.10.post1 llama.py:783-795, qwen2.py:638-651). The model loop tests "
        "`i in self.layers_to_capture` in Python (0.5.10.post1 llama.py:387, qwen2.py:358), so the captured verify "
        "graphs keep the default layers while eager prefill uses the draft's. Every release in the window keeps "
        "that order (read in each wheel). 0.5.11 sets the ids once before capture (model_runner.py:764, "
        "814-823; cuda_graph_runner.py no longer calls the hook). Before 0.4.9 the ids are ignored everywhere (DM346).",
        fix="Upgrade to SGLang 0.5.11 or later, or turn CUDA graphs off (`--disable-cuda-graph`).",
        fix_safety="Unsafe: without CUDA graphs decoding is slower.",
    ),
    bad=Example(
        argv=LLAMA31_8B_EAGLE3,
        target={"architectures": ("LlamaForCausalLM",), "num_hidden_layers": 32},
        draft=DRAFT,
        sglang_version="0.5.10.post1",
    ),
    good=Example(
        argv=LLAMA31_8B_EAGLE3,
        target={"architectures": ("LlamaForCausalLM",), "num_hidden_layers": 32},
        draft=DRAFT,
        sglang_version="0.5.11",
    ),
    sources=(
        "sglang 0.4.8.post1: python/sglang/srt/model_executor/model_runner.py (no draft ids: DM346)",
        "sglang 0.4.9: python/sglang/srt/model_executor/model_runner.py:314,341",
        "sglang 0.4.9: python/sglang/srt/model_executor/cuda_graph_runner.py:298",
        "sglang 0.4.9: python/sglang/srt/models/llama.py:331,700-712",
        "sglang 0.5.10.post1: python/sglang/srt/model_executor/model_runner.py:651-655,667-670",
        "sglang 0.5.10.post1: python/sglang/srt/model_executor/cuda_graph_runner.py:644-648",
        "sglang 0.5.10.post1: python/sglang/srt/models/llama.py:387,783-795",
        "sglang 0.5.10.post1: python/sglang/srt/models/qwen2.py:358,638-651",
        "sglang 0.5.11: python/sglang/srt/model_executor/model_runner.py:764,814-823",
    ),
    sglang_versions=">=0.4.9,<=0.5.10.post1",
    dialects=SGLANG_DIALECTS,
)
