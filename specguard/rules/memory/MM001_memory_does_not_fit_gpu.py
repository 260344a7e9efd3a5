"""MM001 memory-does-not-fit-gpu."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.memory.advice import plan
from specguard.memory.estimate import GIB, estimate_for
from specguard.models import Applicability, Category, Finding, Fix, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.changes import DRAFT_IN_STATIC_BUDGET


def _gib(value: int) -> str:
    return f"{value / GIB:.1f} GiB"


def check(ctx: CheckContext) -> Iterator[Finding]:
    budget = estimate_for(ctx)
    if budget is None or budget.fits:
        return
    fraction_flag = ctx.flag("--mem-fraction-static")
    outside = budget.draft_outside_static.bytes  # before 0.5.14: the draft loads after the pool is sized
    weights = budget.target_weights.bytes + (0 if outside else budget.draft_weights.bytes)
    if not budget.weights_fit:
        message = (
            f"on a {budget.gpu} (tp {budget.tp_size}) the weights take {_gib(weights)} per GPU (target "
            f"{_gib(budget.target_weights.bytes)}, draft {_gib(0 if outside else budget.draft_weights.bytes)}) but "
            f"{fraction_flag} {budget.mem_fraction_static} gives weights + KV only {_gib(budget.static_budget.bytes)}: "
            + (
                "SGLang raises 'Loaded weights leave no GPU memory for the KV cache' after loading them"
                if DRAFT_IN_STATIC_BUDGET.present_in(ctx.version)  # the same 0.5.14 change added this check
                else "SGLang raises 'Not enough memory. Please try to increase --mem-fraction-static' when it sizes the KV pool"
            )
        )
    else:
        need = budget.tree.bytes + budget.graphs.bytes + budget.activations.bytes + outside
        draft = f", the draft's weights and KV pool, loaded after the pool is sized ({_gib(outside)})," if outside else ""
        message = (
            f"on a {budget.gpu} {fraction_flag} {budget.mem_fraction_static} leaves {_gib(budget.headroom.bytes)} "
            f"outside the KV pool but the draft tree ({_gib(budget.tree.bytes)}){draft} CUDA graphs and their kv_indices "
            f"buffers ({_gib(budget.graphs.bytes)}) and activations ({_gib(budget.activations.bytes)}) need about "
            f"{_gib(need)}: expect an out-of-memory {'while loading the draft, ' if outside else ''}during CUDA graph "
            "capture or the first full batch"
        )
    # Only weights beyond the static budget call for a higher fraction (SGLang's own message asks
    # for it); short headroom is the OOM recipe's case, whose first step lowers the fraction.
    found = plan(ctx, lambda b: b.fits, may_raise=not budget.weights_fit)
    fix = None
    if found is not None:
        fix = Fix(title=found.title, applicability=Applicability.UNSAFE, edits=found.edits)
        message += f"; it fits after: {found.title}"
    else:
        message += "; even the recipe's four steps do not make it fit: use a larger GPU or more --tp-size"
    yield RULE.finding(message, flags=("--mem-fraction-static",), fix=fix)


RULE = Rule(
    check=check,
    code="MM001",
    category=Category.START,
    name="memory-does-not-fit-gpu",
    summary="The weights, KV pool, draft tree and CUDA graphs do not fit the GPU's memory",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="Estimates one GPU's memory (`specguard check --explain-memory` prints it): target and draft "
        "weights from config.json (parameters x dtype, fp8/int4 linear weights with their scales, MoE experts, "
        "MLA), split over `--tp-size`; the static budget `free memory x --mem-fraction-static` (SGLang 0.5.23's "
        "own default when unset); and the headroom left for the speculative tensors at the largest captured "
        "batch (float32 verify logits `draft tokens x vocab`, draft logits `topk x draft vocab`), the CUDA "
        "graphs' int32 `kv_indices` buffers (target verify `max_bs x draft tokens x context`, draft decode "
        "`steps x max_bs x topk x context`) with 2 MiB per graph batch size for the target and the draft, and "
        "one prefill chunk's activations; before SGLang 0.5.14 the EAGLE/STANDALONE draft's weights and KV pool also "
        "come out of that headroom, and the default fraction keeps back the draft reserve of its release. Fires when the weights exceed the static budget, or the headroom "
        "is smaller than that need. Quiet when the GPU's memory or the target's shape is unknown.",
        why="SGLang measures the free memory before loading, loads target and draft, and sizes the KV pool "
        "from what is left of `free x mem_fraction_static` (`kv_cache_configurator.py` "
        "`_profile_available_bytes`): weights above that raise after the (slow) load. The rest, "
        "`free x (1 - mem_fraction_static)`, must hold the CUDA graphs and buffers that speculative decoding "
        "adds (the draft tree, verify over `bs x draft tokens` tokens, draft kv_indices with the topk factor, "
        "PR 27338): when it does not, capture or the first large batch runs out of memory. Assumptions: the "
        "GPU table's size x 0.99 is visible, 0.6 GiB goes to the CUDA context (0.5 GiB more per process "
        "under tp), the draft's KV layers are sized like the target's (as SGLang does), an EAGLE/EAGLE3 draft whose shape "
        "no config.json states is sized as one decoder layer of the target's shape, FlashInfer-sized "
        "buffers; the activation term is a lower bound.",
        fix="When the headroom is short, SGLang's OOM recipe in its order, stopping at the first step that "
        "fits: 1 lower `--mem-fraction-static` to the largest value that leaves the headroom (never above the "
        "launch's own), 2 lower the CUDA-graph max batch size to 4 then 2 (`--cuda-graph-max-bs-decode` since "
        "SGLang 0.5.14, `--cuda-graph-max-bs` before), 3 shrink the tree to 3 steps / topk 1 / 4 draft tokens, "
        "4 `--max-running-requests 4`. When the weights do not fit the static budget, raise "
        "`--mem-fraction-static` instead, as SGLang's own error asks, as far as the headroom allows (steps 2-4 "
        "then free headroom so it can rise further).",
        fix_safety="Unsafe: every step changes what runs (KV capacity, graph coverage, tree, concurrency).",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--mem-fraction-static", "0.5", "--context-length", "2048"),
        target={"architectures": ("LlamaForCausalLM",), "model_type": "llama", "dtype": "bfloat16", "hidden_size": 4096,
                "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
                "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072},
        draft={"architectures": ("LlamaForCausalLMEagle3",), "dtype": "bfloat16", "hidden_size": 4096,
               "intermediate_size": 14336, "num_hidden_layers": 1, "num_attention_heads": 32,
               "num_key_value_heads": 8, "vocab_size": 128256, "draft_vocab_size": 32000,
               "max_position_embeddings": 2048},
        gpu="L4",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--mem-fraction-static", "0.5", "--context-length", "2048"),
        target={"architectures": ("LlamaForCausalLM",), "model_type": "llama", "dtype": "bfloat16", "hidden_size": 4096,
                "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
                "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072},
        draft={"architectures": ("LlamaForCausalLMEagle3",), "dtype": "bfloat16", "hidden_size": 4096,
               "intermediate_size": 14336, "num_hidden_layers": 1, "num_attention_heads": 32,
               "num_key_value_heads": 8, "vocab_size": 128256, "draft_vocab_size": 32000,
               "max_position_embeddings": 2048},
        gpu="H100",
    ),
    sources=(
        "seed: sglang-speculative-decoding.md (OOM Troubleshooting: Step 1 'Lower static memory fraction'; Quick OOM recovery recipe)",
        "https://docs.sglang.io/advanced_features/hyperparameter_tuning.html (out of memory: reduce --mem-fraction-static)",
        "sglang 0.5.23: python/sglang/srt/mem_cache/kv_cache_configurator.py:3050-3057 ('Raise --mem-fraction-static above')",
        "sglang 0.5.13: python/sglang/srt/model_executor/pool_configurator.py:51-56 ('Not enough memory'), 107-125 (cell: DFLASH draft only)",
        "sglang 0.5.13: python/sglang/srt/model_executor/model_runner.py:784 (the pool sized before the draft loads)",
        "sglang 0.5.13: python/sglang/srt/server_args.py:1628-1634 (default fraction: 4 GiB draft reserve, STANDALONE 6 GiB)",
        "sglang 0.5.14: python/sglang/srt/managers/scheduler.py:858-868; model_executor/pool_configurator.py:129-145 (draft in the static budget)",
        "sglang 0.5.23: python/sglang/srt/mem_cache/kv_cache_configurator.py:2990-3060 (_profile_available_bytes)",
        "sglang 0.5.23: python/sglang/srt/model_executor/pool_configurator.py:218-410 (cell size, draft layers)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/memory_hook.py:60-330 (graph max_bs and mem_fraction_static defaults)",
        "sglang 0.5.23: python/sglang/srt/layers/attention/flashinfer_backend.py:1100-1117, 2630-2646 (kv_indices buffers)",
        "sglang 0.5.23: python/sglang/srt/speculative/spec_utils.py:296-309 (draft kv_indices width, PR 27338)",
        "https://github.com/sgl-project/sglang/pull/27338",
    ),
    log_signatures=(r"Loaded weights leave no GPU memory for the KV cache",),
)
