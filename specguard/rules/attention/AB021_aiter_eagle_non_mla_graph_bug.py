"""AB021 aiter-eagle-non-mla-graph-bug."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Edit, Finding, Severity
from specguard.rules.attention.backends import EAGLE_TREE_ALGORITHMS, SGLANG_DIALECTS, attention_backend
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_TREE_ALGORITHMS or ctx.spec.get("disable_cuda_graph"):
        return
    target = ctx.target
    # Only a target known to be MHA/GQA: an MLA config carries kv_lora_rank.
    if target is None or target.architectures is None or target.kv_lora_rank is not None:
        return
    backend, given = attention_backend(ctx)
    if backend != "aiter":
        return
    how = f"{ctx.flag('--attention-backend')} aiter" if given else "aiter (SGLang's default on ROCm)"
    yield RULE.finding(
        f"{how} with {ctx.spec.get('speculative_algorithm')} on a non-MLA target ({target.architecture}): in "
        f"SGLang {ctx.version} the aiter backend's speculative CUDA-graph paths run MLA-only code for every "
        "model, so capturing the draft-extend graphs fails with \"AttributeError: 'AiterAttnBackend' object has "
        "no attribute 'max_split_per_batch'\", and target-verify replays stale indices (garbled output). Use "
        f"{ctx.flag('--attention-backend')} triton, or SGLang 0.5.10 or later",
        flags=("--attention-backend",),
        fix=fix_of("use triton", Applicability.UNSAFE, Edit(name="--attention-backend", value="triton")),
    )


RULE = Rule(
    check=check,
    code="AB021",
    name="aiter-eagle-non-mla-graph-bug",
    summary="EAGLE on a non-MLA target with the aiter backend crashes or garbles output (0.5.6-0.5.9)",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 or STANDALONE with CUDA graphs on, the aiter attention backend (typed, or the ROCm "
        "default), and a target whose config.json has no `kv_lora_rank` (GQA/MHA: Llama, Qwen, GLM-4.x), in "
        "SGLang 0.5.6-0.5.9.",
        why="The draft-extend CUDA-graph capture in `aiter_backend.py` tests `_use_mla_ps_kernel` without "
        "`self.use_mla` (0.5.6.post2 :857, 0.5.7 :866, 0.5.8 :868, 0.5.9 :1018) and reads "
        "`self.max_split_per_batch`, which only MLA models set (:187-192), so start-up fails with "
        "AttributeError (sglang#16027, GLM-4.7 on ROCm). The non-MLA target-verify capture/replay also used "
        "different tensors, so outputs were garbled even with SGLANG_AITER_MLA_PERSIST=0. PR 19362 fixed both "
        "and first shipped in 0.5.10rc0 (0.5.10 :1465 guards with `self.use_mla`); 0.5.5 has no such path.",
        fix="Use `--attention-backend triton` on these releases, or upgrade to 0.5.10+.",
        fix_safety="Unsafe: another attention kernel runs.",
    ),
    bad=Example(
        argv=("--model", "zai-org/GLM-4.7", "--tp-size", "8", "--attention-backend", "aiter",
              "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "4"),
        target={"architectures": ("Glm4MoeForCausalLM",)},
        sglang_version="0.5.8",
    ),
    good=Example(
        argv=("--model", "zai-org/GLM-4.7", "--tp-size", "8", "--attention-backend", "aiter",
              "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "4"),
        target={"architectures": ("Glm4MoeForCausalLM",)},
        sglang_version="0.5.10",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/16027",
        "https://github.com/sgl-project/sglang/pull/19362",
        "sglang 0.5.6.post2: python/sglang/srt/layers/attention/aiter_backend.py:187-192, 832-857",
        "sglang 0.5.8: python/sglang/srt/layers/attention/aiter_backend.py:868",
        "sglang 0.5.9: python/sglang/srt/layers/attention/aiter_backend.py:1018",
        "sglang 0.5.10: python/sglang/srt/layers/attention/aiter_backend.py:1465",
    ),
    sglang_versions=">=0.5.6,<0.5.10rc0",
    dialects=SGLANG_DIALECTS,
)
