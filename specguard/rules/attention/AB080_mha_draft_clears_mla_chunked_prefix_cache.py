"""AB080 mha-draft-clears-mla-chunked-prefix-cache."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import (
    Applicability,
    Category,
    Edit,
    Finding,
    RequestFeature,
    Severity,
)
from specguard.rules.attention.backends import attention_backend, is_mla_target
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of
from specguard.sglang_facts.algorithms import EAGLE_HEAD_ALGORITHMS

# The draft's ModelRunner ran the same chunked-prefix gate as the target's, on the ServerArgs they
# share: ``if not self.use_mla_backend or ...: server_args.disable_chunked_prefix_cache = True``
# (sglang 0.5.5 model_executor/model_runner.py:534, 0.5.10.post1 :850, 0.5.14 :1097-1102, 0.5.15
# :1181). A Llama-style EAGLE head is not MLA, so building it flips the flag for the whole process
# after the MLA target was set up to use chunked prefix caching; fa3's MLA prefill then reaches
# ``assert not get_global_server_args().disable_chunked_prefix_cache`` (0.5.5
# layers/attention/flashattention_backend.py:834, 0.5.14 :1119) on an extend that attends a cached
# prefix. 0.5.15 skips the adjustment for the draft runner (model_runner.py:1129-1131, ``if
# self.is_draft_worker: return``); 0.5.16 keeps that gate in its new home
# (model_runner_components/misc_utils.py:16-38: "a draft model's (often non-MLA) config must not flip
# the shared setting"). trtllm_mla and
# flashinfer_mla read the flag with a fallback instead of an assertion, so only fa3 crashes.
ASSERTING_BACKEND = "fa3"
SEPARATE_HEAD_ALGORITHMS = EAGLE_HEAD_ALGORITHMS


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in SEPARATE_HEAD_ALGORITHMS or not is_mla_target(ctx):
        return
    if ctx.drafts_from_target_checkpoint:
        return  # the draft is the target's own MLA NextN layer
    if ctx.draft is not None and ctx.draft.kv_lora_rank is not None:
        return  # an MLA draft (an EAGLE3-MLA head) leaves the flag alone
    if ctx.spec.has("--disable-chunked-prefix-cache"):
        return
    if ctx.spec.get("disaggregation_mode") == "decode":
        return  # a decode server runs no prefill over a cached prefix
    backend, given = attention_backend(ctx)
    prefill = ctx.spec.get("prefill_attention_backend") or backend
    if prefill is not None and prefill != ASSERTING_BACKEND:
        return
    flag = ctx.flag("--disable-chunked-prefix-cache")
    if prefill is None:
        runs = "if the target runs fa3 (SGLang's default for an MLA target on Hopper), "
    elif given or ctx.spec.get("prefill_attention_backend"):
        runs = "the target prefills with fa3, and "
    else:
        runs = f"the target prefills with fa3 (SGLang's default for this MLA target on {ctx.env.gpu.name}), and "  # type: ignore[union-attr]
    yield RULE.finding(
        f"{runs}in SGLang {ctx.env.sglang_version} building the MHA draft head turns chunked prefix caching off for "
        f"the whole process after the MLA target was set up to use it: the first long prefill over a cached "
        f"prefix asserts in flashattention_backend.forward_extend ('assert not "
        f"get_global_server_args().disable_chunked_prefix_cache') and the scheduler dies (Kimi-K2.5 with an "
        f"EAGLE3 head, sgl-project/sglang#22682, #22780). Set {flag} so both sides agree, or use 0.5.15",
        flags=("--disable-chunked-prefix-cache",),
        fix=fix_of(
            "turn chunked prefix caching off for target and draft alike",
            Applicability.SAFE,
            Edit(name="--disable-chunked-prefix-cache", value=True),
        ),
    )


RULE = Rule(
    check=check,
    code="AB080",
    category=Category.CRASH,
    needs=RequestFeature.LONG_PROMPTS,
    name="mha-draft-clears-mla-chunked-prefix-cache",
    summary="An MHA EAGLE head on an MLA target turns chunked prefix caching off mid-setup; fa3 prefill asserts (0.5.5-0.5.14)",
    severity=Severity.WARNING,
    sglang_versions=">=0.5.5,<0.5.15",
    docs=RuleDocs(
        what="EAGLE/EAGLE3 with a separate draft whose config.json has no `kv_lora_rank` (a Llama-style head) on an "
        "MLA target (`kv_lora_rank` set: DeepSeek V3/R1, Kimi K2.x), prefilling with fa3 (typed, or the Hopper "
        "default for MLA; also when the backend cannot be predicted), without `--disable-chunked-prefix-cache`, "
        "in SGLang 0.5.5-0.5.14.",
        why="Target and draft ModelRunners share one ServerArgs, and each ran `model_specific_adjustment`, which sets "
        "`disable_chunked_prefix_cache = True` for a runner that is not MLA (0.5.5 `model_runner.py:534`, 0.5.14 "
        ":1097-1102). The draft head flips it after the MLA target was built to use chunked prefix "
        "caching, and fa3's MLA prefill over a cached prefix then hits `assert not "
        "get_global_server_args().disable_chunked_prefix_cache` (0.5.14 `flashattention_backend.py:1119`): "
        "Kimi-K2.5 + EAGLE3 crashes on long-context requests (sgl-project/sglang#22682) or after 'kv cache full' "
        "warnings (#22780); DeepSeek-V3 with a Llama EAGLE head hit the same assertion (PR #13658). 0.5.15 returns "
        "from the adjustment for the draft runner (`model_runner.py:1129-1131`, before the gate at :1176-1181), and "
        "0.5.16 keeps the gate to the target runner (`model_runner_components/misc_utils.py:16-38`). trtllm_mla and "
        "flashinfer_mla read the flag without asserting.",
        fix="Pass `--disable-chunked-prefix-cache` (target and draft then agree), or upgrade to 0.5.15.",
        fix_safety="Safe: it only turns an optimization off for the MLA prefill.",
    ),
    bad=Example(
        argv=("--model-path", "moonshotai/Kimi-K2.5", "--tp-size", "8", "--trust-remote-code",
              "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "lightseekorg/kimi-k2.5-eagle3",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"),
        target={"architectures": ("KimiK25ForConditionalGeneration",), "kv_lora_rank": 512},
        draft={"architectures": ("LlamaForCausalLMEagle3",)},
        sglang_version="0.5.10.post1",
        gpu="H200",
    ),
    good=Example(
        argv=("--model-path", "moonshotai/Kimi-K2.5", "--tp-size", "8", "--trust-remote-code",
              "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "lightseekorg/kimi-k2.5-eagle3",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
              "--disable-chunked-prefix-cache"),
        target={"architectures": ("KimiK25ForConditionalGeneration",), "kv_lora_rank": 512},
        draft={"architectures": ("LlamaForCausalLMEagle3",)},
        sglang_version="0.5.10.post1",
        gpu="H200",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/22682 (Kimi-K2.5 + EAGLE3: long-context requests crash with an AssertionError)",
        "https://github.com/sgl-project/sglang/issues/22780 (Kimi-K2.5 + EAGLE3: flashattention_backend.py forward_extend assertion after 'kv cache full')",
        "https://github.com/sgl-project/sglang/pull/13658 (DeepSeek-V3 target + Llama EAGLE draft: the same assertion)",
        "sglang 0.5.5: python/sglang/srt/model_executor/model_runner.py:534; layers/attention/flashattention_backend.py:834",
        "sglang 0.5.14: python/sglang/srt/model_executor/model_runner.py:1097-1102; layers/attention/flashattention_backend.py:1119",
        "sglang 0.5.15: python/sglang/srt/model_executor/model_runner.py:1129-1131 (the draft runner returns before the gate)",
        "sglang 0.5.16: python/sglang/srt/model_executor/model_runner_components/misc_utils.py:16-38 (target runner only)",
    ),
)
