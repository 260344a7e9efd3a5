"""AB395 trtllm-mha-xqa-verify-without-mask."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS, effective_topk
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3_CHAIN
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import Change

# Before 0.5.19 ServerArgs refuses a trtllm_mha prefill backend off SM100 (0.5.18 server_args.py:6014-6019),
# so on SM90/SM120 only a decode-mode verify reaches the XQA kernel there.
PREFILL_ON_XQA_GPUS = Change(
    "0.5.19",
    "0.5.19 arg_groups/attention_hook.py:131-138 accepts a trtllm_mha prefill on SM90, SM100, SM120",
)
XQA_MAJORS = (9, 12)  # is_xqa_impl: SM90 or SM120 (0.5.10rc0 trtllm_mha_backend.py:150)
FALLBACK = "flashinfer"


def _verify_flag(ctx: CheckContext) -> str | None:
    """The flag that puts target verify on trtllm_mha: the phase backend speculative_attention_mode names,
    else --attention-backend (0.5.10rc0 layers/attention/hybrid_attn_backend.py)."""
    decode_mode = ctx.spec.last_value("--speculative-attention-mode") == "decode"
    phase = (
        "--decode-attention-backend" if decode_mode else "--prefill-attention-backend"
    )
    for flag in (phase, "--attention-backend"):
        value = ctx.spec.last_value(flag)
        if value is not None:
            return flag if value == "trtllm_mha" else None
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    gpu = ctx.env.gpu
    if (
        ctx.algorithm not in EAGLE_WORKER_ALGORITHMS
        or gpu is None
        or gpu.platform != "cuda"
    ):
        return
    if gpu.compute_capability is None or gpu.compute_capability[0] not in XQA_MAJORS:
        return
    if (effective_topk(ctx) or 1) > 1:
        return  # trtllm_mha refuses topk > 1 at argument time (AB003)
    flag = _verify_flag(ctx)
    if flag is None:
        return
    decode_mode = ctx.spec.last_value("--speculative-attention-mode") == "decode"
    if not decode_mode and not PREFILL_ON_XQA_GPUS.present_in(ctx.version):
        return  # the trtllm_mha prefill backend is refused off SM100 first
    yield RULE.finding(
        f"{ctx.flag(flag)} trtllm_mha runs {ctx.algorithm}'s target verify on {gpu.name} (SM{gpu.sm}), where SGLang "
        f"{ctx.env.sglang_version} uses FlashInfer's XQA kernel and passes it several query tokens per request but no "
        'speculative-decoding mask: FlashInfer fails "AssertionError: Mask is required for speculative decoding" '
        f"when the verify CUDA graphs are captured (or at the first verify). Use {FALLBACK} for that phase, or "
        "SGLang 0.5.21 or later",
        flags=(flag, "--speculative-algorithm"),
        fix=fix_of(
            f"verify on {FALLBACK}",
            Applicability.UNSAFE,
            Edit(name=flag, value=FALLBACK),
        ),
    )


RULE = Rule(
    check=check,
    code="AB395",
    category=Category.START,
    name="trtllm-mha-xqa-verify-without-mask",
    summary="EAGLE target verify on trtllm_mha on an SM90 or SM120 GPU before 0.5.21, which calls FlashInfer's "
    "XQA kernel without the speculative mask it requires",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN) or STANDALONE (topk 1: trtllm_mha refuses trees, AB003) on a known SM90 or SM120 "
        "GPU whose target verify runs on trtllm_mha: `--decode-attention-backend` (or `--attention-backend`) "
        "trtllm_mha with `--speculative-attention-mode decode` from 0.5.10rc0, or the prefill backend "
        "(`--prefill-attention-backend`, else `--attention-backend`) trtllm_mha from 0.5.19, up to 0.5.20.",
        why="0.5.10rc0 let trtllm_mha decode on SM90 and SM120 (server_args.py:2336-2343) through FlashInfer's XQA "
        "kernel (`is_xqa_impl`, layers/attention/trtllm_mha_backend.py:150). Target verify calls "
        "`flashinfer.decode.trtllm_batch_decode_with_kv_cache` with `q_len_per_req` = the draft token count and no "
        "mask (0.5.10rc0 trtllm_mha_backend.py:846-860; 0.5.20 :1395-1398 and `_run_fixed_q_len_decode` "
        ":1149-1185, 1470-1480). On a non-SM100 GPU that call's automatic backend is XQA, and FlashInfer's "
        "`xqa` asserts `mask is not None, 'Mask is required for speculative decoding'` whenever the query length "
        "is above 1 (flashinfer 0.6.6 decode.py:2265, xqa.py:306, pinned by 0.5.10rc0; 0.6.8.post1 xqa.py:331 "
        "for 0.5.11; 0.6.11.post1 :332 for 0.5.12; 0.6.18 decode.py:3333-3335, xqa.py:418 for 0.5.19-0.5.21). "
        "Which backend runs verify follows `speculative_attention_mode` (hybrid_attn_backend.py); a trtllm_mha "
        "prefill backend is refused off SM100 until 0.5.18 (server_args.py:6014-6019) and accepted on SM90/SM120 "
        "from 0.5.19 (arg_groups/attention_hook.py:131-138). 0.5.21 builds `_xqa_spec_dec_mask` "
        "(trtllm_mha_backend.py:399-410) and passes it for target verify (:1706-1716). The installed FlashInfer "
        "decides: the rule speaks of the release's pinned one.",
        fix=f"Run that phase on {FALLBACK} (or fa3 on Hopper), or upgrade to 0.5.21.",
        fix_safety="Unsafe: another attention kernel runs.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3_CHAIN, "--attention-backend", "trtllm_mha"),
        gpu="H100",
        sglang_version="0.5.20",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3_CHAIN, "--attention-backend", "trtllm_mha"),
        gpu="H100",
        sglang_version="0.5.21",
    ),
    sources=(
        "sglang 0.5.9: python/sglang/srt/server_args.py:1898-1902 (trtllm_mha on SM100 only)",
        "sglang 0.5.10rc0: python/sglang/srt/server_args.py:2336-2343; python/sglang/srt/layers/attention/trtllm_mha_backend.py:150, 846-860",
        "sglang 0.5.18: python/sglang/srt/server_args.py:6014-6019 (trtllm_mha prefill on SM100 only)",
        "sglang 0.5.19: python/sglang/srt/arg_groups/attention_hook.py:131-138",
        "sglang 0.5.20: python/sglang/srt/layers/attention/trtllm_mha_backend.py:233, 1149-1185, 1395-1398, 1470-1480",
        "sglang 0.5.21: python/sglang/srt/layers/attention/trtllm_mha_backend.py:399-410, 1706-1716",
        "flashinfer 0.6.6: flashinfer/decode.py:2265; flashinfer/xqa.py:306",
        "flashinfer 0.6.18: flashinfer/decode.py:3333-3335, 3384-3402; flashinfer/xqa.py:418",
    ),
    sglang_versions=">=0.5.10rc0,<0.5.21",
    log_signatures=(r"Mask is required for speculative decoding",),
)
