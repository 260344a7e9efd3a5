"""HY371 gdn-flashinfer-verify-sm100."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.hybrid.HY110_gdn_flashinfer_verify_tree_draft import LINEAR_FLAGS
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.architectures import GDN_ARCHITECTURES

BASE, DECODE, PREFILL = LINEAR_FLAGS
SSM_DTYPE = "--mamba-ssm-dtype"


def _typed(ctx: CheckContext, flag: str) -> str | None:
    item = ctx.spec.item(flag)
    return item.values[0] if item is not None and item.values else None


def _flashinfer_flags(ctx: CheckContext) -> tuple[str, ...]:
    """The typed flags that put FlashInfer on the GDN verify path, or () when none does here.

    SGLang verifies on FlashInfer when the decode or the prefill backend is flashinfer (each its own
    flag, else --linear-attn-backend; 0.5.11 layers/attention/linear/utils.py:38-43). A flashinfer
    decode on SM100 without a typed --mamba-ssm-dtype bfloat16 is refused at argument time first
    (0.5.11 server_args.py:2876-2888), which is not this rule; under speculation 0.5.11 does not
    default the decode backend to flashinfer (:2864-2870).
    """
    base = _typed(ctx, BASE) or "triton"
    decode = _typed(ctx, DECODE) or base
    prefill = _typed(ctx, PREFILL) or base
    if decode == "flashinfer" and _typed(ctx, SSM_DTYPE) != "bfloat16":
        return ()
    if "flashinfer" not in (decode, prefill):
        return ()
    return tuple(flag for flag in LINEAR_FLAGS if _typed(ctx, flag) == "flashinfer")


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.target is None:
        return
    gpu = ctx.env.gpu
    if (
        ctx.target.architecture not in GDN_ARCHITECTURES
        or gpu is None
        or gpu.platform != "cuda"
    ):
        return
    # SM100 (B200, GB200, B300): the FlashInfer GDN kernels exist there but keep their state in a pool,
    # for which verify is not written (gdn_flashinfer.py:99-100). Other majors are left out.
    if gpu.compute_capability is None or gpu.compute_capability[0] != 10:
        return
    flags = _flashinfer_flags(ctx)
    if not flags:
        return
    yield RULE.finding(
        f"{', '.join(ctx.flag(flag) for flag in flags)} flashinfer on {gpu.name}: SGLang {ctx.version} verifies the "
        f"GDN layers of {ctx.target.architecture} on the FlashInfer GDN kernel, which raises NotImplementedError "
        "'FlashInfer GDN MTP verify is not yet supported on SM100+.' whatever the topk: at the target-verify "
        f"CUDA-graph capture during startup, or the first verify with CUDA graphs off. Use the triton "
        "linear-attention backend, or SGLang 0.5.12 or later (which verifies on Triton there)",
        flags=(*flags, "--speculative-algorithm"),
        fix=fix_of(
            "run the linear attention on triton",
            Applicability.UNSAFE,
            *(Edit(name=flag, value="triton") for flag in flags),
        ),
    )


QWEN35_MTP = (
    "--model-path",
    "Qwen/Qwen3.5-397B-A17B",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
    SSM_DTYPE,
    "bfloat16",
)
QWEN35 = {"architectures": ("Qwen3_5MoeForConditionalGeneration",)}

RULE = Rule(
    check=check,
    code="HY371",
    category=Category.START,
    name="gdn-flashinfer-verify-sm100",
    summary="A GDN (Qwen3-Next, Qwen3.5) target verifying on the FlashInfer GDN kernel on SM100 raises (0.5.10rc0 to 0.5.11)",
    severity=Severity.ERROR,
    sglang_versions=">=0.5.10rc0,<0.5.12",
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN, MTP) or STANDALONE, any topk, on a gated-delta-net target (Qwen3-Next, "
        "Qwen3.5, InternS2-Preview, Jet-Nemotron) on an SM100 GPU (B200, GB200, B300) whose linear-attention "
        "decode backend (with `--mamba-ssm-dtype bfloat16`, which SM100 needs for it) or prefill backend is "
        "flashinfer (`--linear-attn-backend`, `--linear-attn-decode-backend`, `--linear-attn-prefill-backend`), "
        "SGLang 0.5.10rc0 to 0.5.11.",
        why="`GDNKernelDispatcher` sends target verify to the FlashInfer GDN kernel whenever the decode or prefill "
        "backend is flashinfer (0.5.11 layers/attention/linear/gdn_backend.py:108-112; 0.5.10rc0 :109-112). On "
        "any GPU but SM90 that kernel keeps its state in a pool (`use_state_pool = sm_major != 9`, "
        'kernels/gdn_flashinfer.py:99-100) and its `target_verify` raises `NotImplementedError("FlashInfer GDN MTP '
        'verify is not yet supported on SM100+.")` (0.5.11 :270-273, 0.5.10rc0 :271-273), reached at the '
        "target-verify CUDA-graph capture. 0.5.12 adds `supports_target_verify = sm_major == 9` "
        "(gdn_flashinfer.py:101) and verifies on Triton elsewhere (gdn_backend.py:111-116). A flashinfer decode "
        "backend on SM100 without `--mamba-ssm-dtype bfloat16` is refused at argument time in these releases "
        "(0.5.11 server_args.py:2876-2888), whatever the speculation: not this rule.",
        fix="Run the linear attention on triton (the flag that named flashinfer), or upgrade to SGLang 0.5.12.",
        fix_safety="Unsafe: another linear-attention kernel runs.",
    ),
    bad=Example(
        argv=(*QWEN35_MTP, DECODE, "flashinfer"),
        target=QWEN35,
        gpu="B200",
        sglang_version="0.5.11",
    ),
    good=Example(
        argv=(*QWEN35_MTP, DECODE, "flashinfer"),
        target=QWEN35,
        gpu="B200",
        sglang_version="0.5.12",
    ),
    sources=(
        "sglang 0.5.9: no python/sglang/srt/layers/attention/linear/kernels/gdn_flashinfer.py (no FlashInfer GDN backend)",
        "sglang 0.5.10rc0: python/sglang/srt/layers/attention/linear/gdn_backend.py:109-112; kernels/gdn_flashinfer.py:99-100, 271-273",
        (
            "sglang 0.5.11: python/sglang/srt/layers/attention/linear/gdn_backend.py:108-112; "
            "kernels/gdn_flashinfer.py:99-100, 270-273; layers/attention/linear/utils.py:38-43; server_args.py:2864-2888"
        ),
        (
            "sglang 0.5.12: python/sglang/srt/layers/attention/linear/kernels/gdn_flashinfer.py:101; "
            "gdn_backend.py:111-116 (verify on Triton where FlashInfer does not support it)"
        ),
    ),
    log_signatures=(r"FlashInfer GDN MTP verify is not yet supported on SM100\+",),
)
