"""HY314 mamba2-target-verify-token-count."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)

# The targets `ModelRunner.mamba2_config` accepts, so their mixers run on Mamba2AttnBackend
# (0.5.3.post1 model_runner.py:1322-1326: FalconH1Config, NemotronHConfig; 0.5.6 :1507-1513 adds
# NemotronH_Nano_VL_V2's llm_config).
MAMBA2_ARCHITECTURES = frozenset(
    {"NemotronHForCausalLM", "FalconH1ForCausalLM", "NemotronH_Nano_VL_V2"}
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    architectures = (ctx.target.architectures if ctx.target is not None else None) or ()
    architecture = next((a for a in architectures if a in MAMBA2_ARCHITECTURES), None)
    if ctx.algorithm is None or architecture is None:
        return
    yield RULE.finding(
        f"{architecture} with {ctx.algorithm} on SGLang {ctx.version}: its Mamba2 mixers take a target-verify batch "
        'for one token per request, so the verify pass fails "assert num_actual_tokens == '
        'projected_states.shape[0]" (a batch of requests times draft tokens arrives): when the verify CUDA graphs '
        "are captured at start, or at the first request without them. Serve this model without "
        f"{ctx.flag('--speculative-algorithm')}, or use SGLang 0.5.6.post1 or later",
        flags=("--model-path", "--speculative-algorithm"),
    )


NEMOTRON_H_EAGLE = (
    "--model-path",
    "nvidia/Nemotron-H-56B-Base-8K",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-draft-model-path",
    "/ckpt/nemotron-h-eagle",
)
NEMOTRON_H_FACTS = {"architectures": ("NemotronHForCausalLM",)}

RULE = Rule(
    check=check,
    code="HY314",
    category=Category.START,
    name="mamba2-target-verify-token-count",
    summary="A Mamba2 hybrid target (Nemotron-H, Falcon-H1) with any speculative algorithm fails its first verify (0.5.3.post1 to 0.5.6)",
    severity=Severity.ERROR,
    sglang_versions=">=0.5.3.post1,<=0.5.6",
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="A target whose config.json `architectures` is `NemotronHForCausalLM`, `FalconH1ForCausalLM` or "
        "`NemotronH_Nano_VL_V2` (0.5.6), with any `--speculative-algorithm`, SGLang 0.5.3.post1 to 0.5.6.",
        why="These targets run their Mamba2 layers on `Mamba2AttnBackend` (0.5.3.post1 attention_registry.py:204-205; "
        "model_runner.py:1322-1326). For a target-verify batch the forward batch has no extend token count, so "
        "`Mamba2Metadata.prepare_mixed` falls back to `prepare_decode`, which counts one token per request "
        "(`num_decodes=len(seq_lens)`; 0.5.3.post1 mamba2_metadata.py:139-162, 0.5.6 :143-166), and the same at "
        "CUDA-graph capture (hybrid_linear_attn_backend.py:478, 496; 0.5.6 :765, 783). `MambaMixer2.forward` then "
        "fails `assert num_actual_tokens == projected_states.shape[0]` against requests x draft tokens "
        "(0.5.3.post1 layers/attention/mamba/mamba.py:399; 0.5.6 :408). 0.5.6.post1 gives the metadata "
        "`is_target_verify` and `draft_token_num`, counts `num_decodes * draft_token_num` tokens and runs a "
        "tree-aware conv/SSM update (mamba.py:403-411, 527-572). 0.5.3 has no `mamba2_config`.",
        fix="Serve the model without speculative decoding, or upgrade to SGLang 0.5.6.post1 or later.",
        fix_safety="No fix: dropping speculation or changing the release is the user's choice.",
    ),
    bad=Example(
        argv=NEMOTRON_H_EAGLE,
        target=NEMOTRON_H_FACTS,
        gpu="H100",
        sglang_version="0.5.6",
    ),
    good=Example(
        argv=NEMOTRON_H_EAGLE,
        target=NEMOTRON_H_FACTS,
        gpu="H100",
        sglang_version="0.5.6.post1",
    ),
    sources=(
        "sglang 0.5.3: python/sglang/srt/model_executor/model_runner.py (no mamba2_config)",
        (
            "sglang 0.5.3.post1: python/sglang/srt/model_executor/model_runner.py:1322-1326; "
            "layers/attention/attention_registry.py:204-205; layers/attention/mamba/mamba2_metadata.py:139-162; "
            "layers/attention/mamba/mamba.py:399; layers/attention/hybrid_linear_attn_backend.py:460,478,496"
        ),
        (
            "sglang 0.5.6: python/sglang/srt/model_executor/model_runner.py:1507-1513; "
            "layers/attention/mamba/mamba2_metadata.py:143-166; layers/attention/mamba/mamba.py:408"
        ),
        (
            "sglang 0.5.6.post1: python/sglang/srt/layers/attention/mamba/mamba.py:403-411,527-572; "
            "layers/attention/mamba/mamba2_metadata.py (is_target_verify, draft_token_num)"
        ),
    ),
    log_signatures=(r"assert num_actual_tokens == projected_states\.shape\[0\]",),
)
