"""MM002 kv-pool-short-of-context-and-concurrency."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.memory.advice import plan
from specguard.memory.estimate import GIB, estimate_for
from specguard.models import Applicability, Category, Edit, Finding, Fix, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs
from specguard.rules.examples import LLAMA31_8B_EAGLE3

_LLAMA31 = {"architectures": ("LlamaForCausalLM",), "model_type": "llama", "dtype": "bfloat16", "hidden_size": 4096,
            "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
            "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072}
_EAGLE3 = {"architectures": ("LlamaForCausalLMEagle3",), "dtype": "bfloat16", "hidden_size": 4096,
           "intermediate_size": 14336, "num_hidden_layers": 1, "num_attention_heads": 32,
           "num_key_value_heads": 8, "vocab_size": 128256, "draft_vocab_size": 32000, "max_position_embeddings": 2048}


def check(ctx: CheckContext) -> Iterator[Finding]:
    budget = estimate_for(ctx)
    if budget is None or not budget.fits or not budget.kv_short:
        return
    tokens, context = budget.kv_pool_tokens, budget.context_len
    if budget.tokens_needed > context:
        need = f"{budget.max_running_requests} requests x {context:,} tokens"
    else:
        need = f"one request at the full {context:,}-token context"
    message = (
        f"on a {budget.gpu} the KV pool holds {tokens:,} tokens ({budget.kv_pool.bytes / GIB:.1f} GiB at "
        f"{budget.kv_pool_bytes_per_token:,} B/token), fewer than the "
        f"{budget.tokens_needed:,} that {need} take: requests queue, and prompts longer than the pool are rejected"
    )
    # A larger pool is the tuning guide's reason to raise the fraction, within the headroom; no
    # OOM recipe step is involved (its step 1 lowers the fraction).
    found = plan(ctx, lambda b: b.fits and not b.kv_short, steps=(), may_raise=True)
    fix = None
    if found is not None:
        fix = Fix(title=found.title, applicability=Applicability.UNSAFE, edits=found.edits)
    else:
        # The fraction as high as the headroom allows, then the concurrency down to what that pool holds at full context.
        raised = plan(ctx, lambda b: b.fits and b.kv_pool_tokens > tokens, steps=(), may_raise=True)
        best = raised.budget if raised is not None else budget
        fitting = best.kv_pool_tokens // context
        if 1 <= fitting < budget.max_running_requests:
            edits = (*(raised.edits if raised else ()), Edit(name="--max-running-requests", value=fitting))
            steps = (*([raised.title] if raised else []), f"--max-running-requests {fitting}, what the pool holds at full context")
            fix = Fix(title="; ".join(steps), applicability=Applicability.UNSAFE, edits=edits)
    if fix is not None:
        message += f"; {fix.title}"
    else:
        message += f"; cap {ctx.flag('--context-length')} or use a larger GPU"
    yield RULE.finding(message, flags=("--mem-fraction-static", "--max-running-requests", "--context-length"), fix=fix)


RULE = Rule(
    check=check,
    code="MM002",
    category=Category.PERF,
    name="kv-pool-short-of-context-and-concurrency",
    summary="The configuration fits, but its KV pool holds fewer tokens than the context and concurrency need",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="With the memory estimate of MM001 (which see for its assumptions), compares the KV pool's token "
        "count, `(free x mem_fraction_static - weights) / KV bytes per token`, with what the launch asks for: "
        "`--max-running-requests x --context-length` when either is given explicitly, else one request at the "
        "served context (`--context-length` or the target's max_position_embeddings). KV bytes per token follow "
        "SGLang 0.5.23's cell size: `kv_heads/tp x 2 x head_dim x layers x kv dtype` (MHA/GQA), "
        "`(kv_lora_rank + qk_rope_head_dim) x layers x kv dtype` (MLA, not split by tp), plus the draft's "
        "layers sized like the target's (from SGLang 0.5.14; before, the target's layers alone, the draft's pool "
        "being allocated outside the static budget); `--kv-cache-dtype fp8_*` is 1 byte, auto the model dtype.",
        why="SGLang does not refuse a small pool: it starts, queues requests the pool cannot hold, and "
        "rejects prompts longer than the pool. A speculative launch pays for the draft's weights and KV layers "
        "from the same budget, and the recipe's low `--mem-fraction-static` shrinks the pool further.",
        fix="Raise `--mem-fraction-static` as far as the runtime headroom allows (SGLang's tuning guide: "
        "as high as possible while reserving memory for activations and CUDA graph buffers), then lower "
        "`--max-running-requests` to what the pool holds at full context.",
        fix_safety="Unsafe: it changes the memory split or the concurrency.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--mem-fraction-static", "0.78", "--context-length", "2048",
              "--max-running-requests", "48"),
        target=_LLAMA31, draft=_EAGLE3, gpu="L4",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--mem-fraction-static", "0.7", "--context-length", "2048",
              "--max-running-requests", "48"),
        target=_LLAMA31, draft=_EAGLE3, gpu="H100",
    ),
    sources=(
        "https://docs.sglang.io/advanced_features/hyperparameter_tuning.html (Tune --mem-fraction-static to increase KV cache pool capacity)",
        "seed: sglang-speculative-decoding.md (OOM Troubleshooting, Step 4)",
        "sglang 0.5.23: python/sglang/srt/model_executor/pool_configurator.py:340-535 (_compute_cell_size)",
        "sglang 0.5.13: python/sglang/srt/model_executor/pool_configurator.py:107-125 (draft layers in the cell for DFLASH only)",
        "sglang 0.5.14: python/sglang/srt/model_executor/pool_configurator.py:129-145 (EAGLE/STANDALONE draft layers in the cell)",
        "sglang 0.5.23: python/sglang/srt/mem_cache/kv_cache_configurator.py:3412-3423 (calculate_mla_kv_cache_dim)",
        "sglang 0.5.23: python/sglang/srt/mem_cache/kv_cache_configurator.py:2990-3060 (_profile_available_bytes)",
    ),
)
