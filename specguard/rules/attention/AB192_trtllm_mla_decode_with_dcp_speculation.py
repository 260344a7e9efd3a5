"""AB192 trtllm-mla-decode-with-dcp-speculation."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.parallel._parallel import dcp_size

BACKEND = "trtllm_mla"
DEEPSEEK_V3_DCP_EAGLE = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3",
    "--tp",
    "8",
    "--dcp-size",
    "8",
    "--speculative-algorithm",
    "EAGLE",
)


def _decode_backend_flag(ctx: CheckContext) -> str | None:
    """The flag that makes trtllm_mla the target's decode backend as typed (the split flag wins), or None.

    SGLang reads (prefill, decode) from get_attention_backends(): the decode flag, else --attention-backend.
    A default SGLang picks itself is not read here: the rule stays quiet on it.
    """
    decode = ctx.spec.get("decode_attention_backend")
    if decode is not None:
        return "--decode-attention-backend" if decode == BACKEND else None
    return (
        "--attention-backend" if ctx.spec.get("attention_backend") == BACKEND else None
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    dcp = dcp_size(ctx)
    if ctx.algorithm is None or dcp is None or dcp[0] <= 1:
        return
    backend_flag = _decode_backend_flag(ctx)
    if backend_flag is None:
        return
    size, flag = dcp
    yield RULE.finding(
        f"{ctx.flag(backend_flag)} {BACKEND} with {ctx.flag(flag)} {size} and {ctx.algorithm} in SGLang "
        f"{ctx.version}: {BACKEND} does not forward the cyclic DCP metadata to its decode kernel, so building the "
        "attention backend raises when the server starts (ValueError 'trtllm_mla cannot serve decode context "
        f"parallelism with speculative decoding'). Use cutedsl_mla as the decode backend, or set {ctx.flag(flag)} 1",
        flags=(backend_flag, flag, "--speculative-algorithm"),
    )


RULE = Rule(
    check=check,
    code="AB192",
    category=Category.START,
    name="trtllm-mla-decode-with-dcp-speculation",
    summary="trtllm_mla as decode attention backend with --dcp-size above 1 and speculation fails at backend "
    "creation (0.5.17+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--attention-backend trtllm_mla` (or `--decode-attention-backend trtllm_mla`) as the target's decode "
        "backend, `--dcp-size` above 1 and any `--speculative-algorithm`, SGLang 0.5.17 or later. A decode "
        "backend SGLang picks itself is not judged.",
        why="0.5.17 stopped refusing decode context parallelism with speculation on CUDA (PL191) and taught "
        "cutedsl_mla and tokenspeed_mla to serve it; trtllm_mla cannot ('it does not forward the cyclic DCP "
        "metadata to its decode kernel and returns no rank-local LSE for the cross-rank merge'), so "
        "`create_trtllm_mla_backend` raises when the decode backend is trtllm_mla (0.5.17 "
        "layers/attention/attention_registry.py:69-86, `dcp_size > 1`; 0.5.18 :70-84 with "
        "`get_parallel().dcp_enabled`). Held to 0.5.23 (attention_registry.py:95-106), whose message names "
        "cutedsl_mla only (tokenspeed_mla became its alias).",
        fix="Select `cutedsl_mla` as the decode attention backend, or serve without decode context parallelism.",
        fix_safety="No automatic fix: cutedsl_mla has its own GPU and KV-dtype requirements to check.",
    ),
    bad=Example(
        argv=(*DEEPSEEK_V3_DCP_EAGLE, "--attention-backend", BACKEND),
        gpu="B200",
        sglang_version="0.5.17",
    ),
    good=Example(
        argv=(*DEEPSEEK_V3_DCP_EAGLE, "--attention-backend", "cutedsl_mla"),
        gpu="B200",
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.16: python/sglang/srt/server_args.py:3149-3178 (DCP with speculation refused on CUDA: PL191)",
        "sglang 0.5.17: python/sglang/srt/layers/attention/attention_registry.py:69-86",
        "sglang 0.5.18: python/sglang/srt/layers/attention/attention_registry.py:70-84",
        "sglang 0.5.23: python/sglang/srt/layers/attention/attention_registry.py:95-106",
    ),
    sglang_versions=">=0.5.17",
    log_signatures=(
        r"trtllm_mla cannot serve decode context parallelism with speculative decoding",
    ),
)
