"""AB020 mha-draft-inherits-mla-backend."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    attention_backend,
    effective_topk,
    mla_of,
)
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import TOKENSPEED_MLA_ALIAS

# Backends whose factory refuses a runner without MLA (sglang 0.5.23
# layers/attention/attention_registry.py:94-97 trtllm_mla, :118-121 cutedsl_mla; tokenspeed_mla 0.5.12-0.5.22,
# 0.5.12 :65-68, 0.5.22 :112-115, an alias of cutedsl_mla from 0.5.23).
MLA_ONLY_BACKENDS = frozenset({"trtllm_mla", "cutedsl_mla", "tokenspeed_mla"})


def _refusing_backend(ctx: CheckContext, backend: str) -> str:
    """The backend whose factory raises: 0.5.23 runs tokenspeed_mla as cutedsl_mla (serving_hook.py:303-320)."""
    if backend == "tokenspeed_mla" and TOKENSPEED_MLA_ALIAS.present_in(ctx.version):
        return "cutedsl_mla"
    return backend


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.spec.get("speculative_draft_attention_backend"):
        return
    # A draft path is needed: without it EAGLE drafts with the target's own (MLA) MTP layers.
    if ctx.spec.get("speculative_draft_model_path") is None:
        return
    if mla_of(ctx.target) is not True or mla_of(ctx.draft) is not False:
        return
    backend, given = attention_backend(ctx)
    prefill = ctx.spec.get("prefill_attention_backend") or backend
    if prefill not in MLA_ONLY_BACKENDS:
        return
    gpu = ctx.env.gpu
    sm10x = gpu is not None and gpu.compute_capability is not None and gpu.compute_capability[0] == 10
    topk = effective_topk(ctx) or 1
    replacement = "trtllm_mha" if sm10x and topk <= 1 else "flashinfer"
    origin = f"{ctx.flag('--attention-backend')} {backend}" if given else f"{backend} (SGLang's default for this MLA target on {gpu.name if gpu else 'this GPU'})"
    yield RULE.finding(
        f"the target runs {origin}, and without {ctx.flag('--speculative-draft-attention-backend')} the draft worker "
        f"inherits it; but the draft ({ctx.draft.architecture}) is a plain MHA model, so building its attention "  # type: ignore[union-attr]
        f"backend raises '{_refusing_backend(ctx, prefill)} backend can only be used with MLA models' after the target's "
        "weights load. "
        f"Give the draft its own backend: {ctx.flag('--speculative-draft-attention-backend')} {replacement}",
        flags=("--speculative-draft-attention-backend",),
        fix=fix_of(
            f"run the draft with {replacement}",
            Applicability.UNSAFE,
            Edit(name="--speculative-draft-attention-backend", value=replacement),
        ),
    )


RULE = Rule(
    check=check,
    code="AB020",
    category=Category.START,
    name="mha-draft-inherits-mla-backend",
    summary="An MHA EAGLE draft inherits an MLA-only attention backend from an MLA target",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="An EAGLE/EAGLE3 draft whose config.json has no `kv_lora_rank` (a Llama-style MHA head) on an MLA "
        "target (DeepSeek V3/R1, Kimi K2.x: `kv_lora_rank` set) whose prefill backend is MLA-only (trtllm_mla, "
        "cutedsl_mla, tokenspeed_mla): typed, or SGLang's SM100 default for the DeepSeek family, with no "
        "`--speculative-draft-attention-backend`.",
        why="SGLang's DeepSeek-family override picks trtllm_mla on SM100 when no backend is given (0.5.23 "
        "`arg_groups/model_overrides/deepseek_v2.py:37-50, 178-188`, which covers `KimiK25ForConditionalGeneration`). "
        "A draft runner without its own backend uses the process backends (0.5.23 "
        "`model_runner_components/attention_backend_setup.py:185-204`), and the trtllm_mla factory refuses a "
        "non-MLA runner (`attention_registry.py:94-97`; the draft factory `speculative/draft_utils.py:358-362`). "
        "tokenspeed_mla (0.5.12-0.5.22) is refused the same way: its registry factory tests the runner (0.5.12 "
        "`attention_registry.py:65-68`, 0.5.22 `:112-115`), which the draft runner builds at start-up (0.5.12 "
        "`model_runner.py:766`; 0.5.14 `speculative/eagle_worker_v2.py:253`), and from 0.5.15 the draft factory tests "
        "the draft runner too (0.5.15 `draft_utils.py:215-219, 319-323`; 0.5.14 tested the target's flag); 0.5.23 "
        "rewrites it to cutedsl_mla (`arg_groups/serving_hook.py:303-320`). "
        "Kimi K2.5/K2.6 with their Llama-style EAGLE3 heads hit it on B200/GB300 (sglang#23490, PR 20298).",
        fix="Set `--speculative-draft-attention-backend` (trtllm_mha with topk 1 on Blackwell, as the maintainers "
        "suggest in sglang#23490; flashinfer otherwise).",
        fix_safety="Unsafe: it picks the draft's attention kernel.",
    ),
    bad=Example(
        argv=("--model-path", "moonshotai/Kimi-K2.6", "--tp-size", "4", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "lightseekorg/kimi-k2.6-eagle3", "--speculative-num-steps", "3",
              "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"),
        target={"architectures": ("KimiK25ForConditionalGeneration",), "kv_lora_rank": 512},
        draft={"architectures": ("LlamaForCausalLMEagle3",)},
        gpu="GB300",
    ),
    good=Example(
        argv=("--model-path", "moonshotai/Kimi-K2.6", "--tp-size", "4", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "lightseekorg/kimi-k2.6-eagle3", "--speculative-num-steps", "3",
              "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
              "--speculative-draft-attention-backend", "trtllm_mha"),
        target={"architectures": ("KimiK25ForConditionalGeneration",), "kv_lora_rank": 512},
        draft={"architectures": ("LlamaForCausalLMEagle3",)},
        gpu="GB300",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/23490",
        "https://github.com/sgl-project/sglang/pull/20298",
        "sglang 0.5.23: python/sglang/srt/arg_groups/model_overrides/deepseek_v2.py:37-50, 178-188",
        "sglang 0.5.23: python/sglang/srt/model_executor/model_runner_components/attention_backend_setup.py:185-204",
        "sglang 0.5.23: python/sglang/srt/layers/attention/attention_registry.py:94-97, 118-121",
        "sglang 0.5.23: python/sglang/srt/speculative/draft_utils.py:358-362",
        "sglang 0.5.23: python/sglang/srt/arg_groups/serving_hook.py:303-320 (tokenspeed_mla -> cutedsl_mla)",
        "sglang 0.5.22: python/sglang/srt/layers/attention/attention_registry.py:112-115 (tokenspeed_mla)",
        "sglang 0.5.15: python/sglang/srt/speculative/draft_utils.py:215-219, 319-323 (tokenspeed_mla, the draft runner)",
        "sglang 0.5.12: python/sglang/srt/layers/attention/attention_registry.py:65-68 (tokenspeed_mla, new)",
    ),
    dialects=SGLANG_DIALECTS,
)
