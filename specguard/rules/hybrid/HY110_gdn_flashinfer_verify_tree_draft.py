"""HY110 gdn-flashinfer-verify-tree-draft."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    effective_topk,
    topk_origin,
)
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.architectures import GDN_ARCHITECTURES
from specguard.sglang_facts.changes import Change

# `GDNKernelDispatcher` sends target verify to the FlashInfer kernel when the decode or prefill
# backend is flashinfer and, from 0.5.12, only where `FlashInferGDNKernel.supports_target_verify`:
# any GPU in 0.5.10rc0-0.5.11 (but SM100+ raises NotImplementedError before the topk test there),
# SM90 in 0.5.12-0.5.12.post1 (gdn_flashinfer.py:101), SM90 and SM100 from 0.5.13
# (gdn_flashinfer.py:107). So the topk-1 RuntimeError is reached on SM90 from 0.5.10rc0 and on
# SM100 from 0.5.13; 0.5.16 sends tree verify to Triton (gdn_backend.py:300-304).
FLASHINFER_VERIFY_BY_SM_MAJOR = {
    9: Change(
        "0.5.10rc0", "sglang 0.5.10rc0: layers/attention/linear/gdn_backend.py:109-112"
    ),
    10: Change(
        "0.5.13", "sglang 0.5.13: layers/attention/linear/kernels/gdn_flashinfer.py:107"
    ),
}

LINEAR_FLAGS = (
    "--linear-attn-backend",
    "--linear-attn-decode-backend",
    "--linear-attn-prefill-backend",
)


def _typed(ctx: CheckContext, flag: str) -> str | None:
    item = ctx.spec.item(flag)
    return item.values[0] if item is not None and item.values else None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.target is None:
        return
    arch = ctx.target.architecture
    if arch not in GDN_ARCHITECTURES:
        return
    topk = effective_topk(ctx)
    gpu = ctx.env.gpu
    if (
        topk is None
        or topk <= 1
        or gpu is None
        or gpu.platform != "cuda"
        or gpu.compute_capability is None
    ):
        return
    sm_major = gpu.compute_capability[0]
    change = FLASHINFER_VERIFY_BY_SM_MAJOR.get(sm_major)
    if change is None or not change.present_in(ctx.version):
        return
    base = _typed(ctx, "--linear-attn-backend") or "triton"
    decode = _typed(ctx, "--linear-attn-decode-backend")
    prefill = _typed(ctx, "--linear-attn-prefill-backend") or base
    # From 0.5.11 an unset decode backend becomes flashinfer on SM100 with --mamba-ssm-dtype bfloat16
    # (0.5.15.post1 server_args.py:4665-4674); 0.5.12 skipped it under speculation, and SM100 reaches
    # the topk test only from 0.5.13, where the default applies again.
    defaulted = (
        decode is None
        and sm_major == 10
        and _typed(ctx, "--mamba-ssm-dtype") == "bfloat16"
    )
    if defaulted:
        decode = "flashinfer"
    decode = decode or base
    if "flashinfer" not in (decode, prefill):
        return
    flags = [flag for flag in LINEAR_FLAGS if _typed(ctx, flag) == "flashinfer"]
    why = (
        f"{ctx.flag('--mamba-ssm-dtype')} bfloat16 makes SGLang default the linear-attention decode backend "
        f"to flashinfer on {gpu.name}"
        if defaulted
        else f"{', '.join(ctx.flag(flag) for flag in flags)} flashinfer"
    )
    auto = topk_origin(ctx, topk)
    edits = [Edit(name=flag, value="triton") for flag in flags]
    if defaulted:
        edits.append(Edit(name="--linear-attn-decode-backend", value="triton"))
    yield RULE.finding(
        f"{why}, so SGLang {ctx.env.sglang_version} verifies the GDN layers of {arch} on the FlashInfer GDN kernel, "
        f"which raises RuntimeError 'FlashInfer GDN verify kernel only supports topk=1' with topk {topk}{auto}: at "
        "the target-verify CUDA-graph capture during startup, or the first verify with CUDA graphs off. Use the "
        f"triton linear-attention backend, {ctx.flag('--speculative-eagle-topk')} 1, or SGLang 0.5.16 or later "
        "(which verifies tree drafts on Triton).",
        flags=(
            *flags,
            *(("--mamba-ssm-dtype",) if defaulted else ()),
            "--speculative-eagle-topk",
        ),
        fix=fix_of(
            "verify the linear attention on triton", Applicability.UNSAFE, *edits
        ),
    )


QWEN3_NEXT_EAGLE_TREE = (
    "--model-path",
    "Qwen/Qwen3-Next-80B-A3B-Instruct",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "4",
    "--speculative-num-draft-tokens",
    "8",
)

RULE = Rule(
    check=check,
    code="HY110",
    category=Category.START,
    name="gdn-flashinfer-verify-tree-draft",
    summary="A GDN (Qwen3-Next, Qwen3.5) target verifying a topk > 1 draft on the FlashInfer GDN kernel raises (0.5.10rc0 to 0.5.15.post1)",
    severity=Severity.ERROR,
    sglang_versions=">=0.5.10rc0,<0.5.16",
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN, MTP) or STANDALONE with topk above 1 (typed or SGLang's automatic choice) on a "
        "gated-delta-net target (Qwen3-Next, Qwen3.5, InternS2-Preview, Jet-Nemotron) whose linear-attention "
        "decode or prefill backend is flashinfer (`--linear-attn-backend`, `--linear-attn-decode-backend`, "
        "`--linear-attn-prefill-backend`, or on SM100 from 0.5.13 the default that `--mamba-ssm-dtype bfloat16` "
        "brings), on an SM90 GPU from 0.5.10rc0 or an SM100 GPU from 0.5.13, up to 0.5.15.post1.",
        why="`GDNKernelDispatcher` verifies on the FlashInfer GDN kernel whenever the decode or prefill backend is "
        "flashinfer and the kernel supports verify on this GPU (0.5.15.post1 `linear/gdn_backend.py:134-139`; "
        "`supports_target_verify` is SM90 in 0.5.12 and SM90/SM100 from 0.5.13). A tree draft gives the verify a "
        "`retrieve_parent_token` buffer (`hybrid_linear_attn_backend.py:459-470` at CUDA-graph capture, `:600-620` at replay), "
        "and the FlashInfer kernel raises `RuntimeError('FlashInfer GDN verify kernel only supports topk=1')` "
        "for it (`kernels/gdn_flashinfer.py:325-329`). 0.5.16 sends tree verify to the Triton kernel "
        "(`gdn_backend.py:300-304`). On SM100 in 0.5.10rc0-0.5.11 the FlashInfer verify raises "
        "NotImplementedError before this test, whatever the topk; that is not this rule.",
        fix="Run the linear attention on triton (`--linear-attn-backend triton`, or the decode/prefill flag that "
        "named flashinfer), draft a chain (`--speculative-eagle-topk 1`), or upgrade to SGLang 0.5.16.",
        fix_safety="Unsafe: another linear-attention kernel runs.",
    ),
    bad=Example(
        argv=(*QWEN3_NEXT_EAGLE_TREE, "--linear-attn-backend", "flashinfer"),
        target={"architectures": ("Qwen3NextForCausalLM",)},
        gpu="H100",
        sglang_version="0.5.15.post1",
    ),
    good=Example(
        argv=(*QWEN3_NEXT_EAGLE_TREE, "--linear-attn-backend", "flashinfer"),
        target={"architectures": ("Qwen3NextForCausalLM",)},
        gpu="H100",
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.9: no python/sglang/srt/layers/attention/linear/kernels/gdn_flashinfer.py (no FlashInfer GDN backend)",
        "sglang 0.5.10rc0: python/sglang/srt/layers/attention/linear/gdn_backend.py:109-112; kernels/gdn_flashinfer.py:276-280",
        "sglang 0.5.12: python/sglang/srt/layers/attention/linear/kernels/gdn_flashinfer.py:101 (supports_target_verify on SM90)",
        "sglang 0.5.13: python/sglang/srt/layers/attention/linear/kernels/gdn_flashinfer.py:107 (SM90 and SM100)",
        (
            "sglang 0.5.15.post1: python/sglang/srt/layers/attention/linear/gdn_backend.py:134-139; "
            "kernels/gdn_flashinfer.py:325-329; hybrid_linear_attn_backend.py:459-470, 600-620; server_args.py:4665-4674"
        ),
        "sglang 0.5.16: python/sglang/srt/layers/attention/linear/gdn_backend.py:300-304 (tree verify on Triton)",
    ),
    log_signatures=(r"FlashInfer GDN verify kernel only supports topk=1",),
)
