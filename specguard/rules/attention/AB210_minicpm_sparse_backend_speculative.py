"""AB210 minicpm-sparse-backend-speculative."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3

# Each MiniCPM sparse backend and the dense backend SGLANG_MINICPM_FORCE_DENSE swaps in for it
# (0.5.19 arg_groups/model_overrides/minicpm.py:32-35; fa4 instead of fa3 on Blackwell).
DENSE_OF = {"minicpm_flashattn": "fa3", "minicpm_flashinfer": "flashinfer"}
MINICPM_ARCHITECTURES = frozenset({"MiniCPMForCausalLM", "MiniCPMSALAForCausalLM"})
FORCE_DENSE = "SGLANG_MINICPM_FORCE_DENSE"


def _verify_backend_flag(ctx: CheckContext) -> tuple[str, str] | None:
    """The flag that names the backend target verify runs on, and that backend, when written.

    The hybrid backend sends TARGET_VERIFY to the decode backend under --speculative-attention-mode
    decode and to the prefill backend otherwise (0.5.19 layers/attention/hybrid_attn_backend.py:40-41,
    :75); each falls back to --attention-backend.
    """
    side = (
        "--decode-attention-backend"
        if ctx.spec.last_value("--speculative-attention-mode") == "decode"
        else "--prefill-attention-backend"
    )
    for flag in (side, "--attention-backend"):
        if (backend := ctx.spec.last_value(flag)) is not None:
            return flag, backend
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or (written := _verify_backend_flag(ctx)) is None:
        return
    flag, backend = written
    if backend not in DENSE_OF:
        return
    # On a MiniCPM target the override swaps the sparse backend for its dense one when this is set.
    arch = ctx.target.architecture if ctx.target is not None else None
    if ctx.spec.env_flag(FORCE_DENSE) and (
        arch is None or arch in MINICPM_ARCHITECTURES
    ):
        return
    blackwell = (
        ctx.env.gpu is not None
        and ctx.env.gpu.compute_capability is not None
        and ctx.env.gpu.compute_capability[0] >= 10
    )
    dense = "fa4" if blackwell and backend == "minicpm_flashattn" else DENSE_OF[backend]
    yield RULE.finding(
        f"{ctx.flag(flag)} {backend} with {ctx.algorithm} in SGLang {ctx.version}: the MiniCPM sparse attention "
        "backend serves decode only, so target verify raises NotImplementedError ('MiniCPM backend does not support "
        "speculative decoding (target verify)'), when its CUDA graph is captured at start or at the first "
        f"speculative step. Use the dense {dense} backend (what {FORCE_DENSE}=1 picks), or drop "
        f"{ctx.flag('--speculative-algorithm')}",
        flags=(flag, "--speculative-algorithm"),
        fix=fix_of(
            f"verify on the dense {dense} backend",
            Applicability.UNSAFE,
            Edit(name=flag, value=dense),
        ),
    )


RULE = Rule(
    check=check,
    code="AB210",
    category=Category.CRASH,
    name="minicpm-sparse-backend-speculative",
    summary="Target verify on the minicpm_flashattn / minicpm_flashinfer attention backend raises (0.5.19+)",
    severity=Severity.ERROR,
    sglang_versions=">=0.5.19",
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="Any `--speculative-algorithm` whose target verify runs on `minicpm_flashattn` or `minicpm_flashinfer`: "
        "written as `--attention-backend`, or as `--prefill-attention-backend` (`--decode-attention-backend` under "
        "`--speculative-attention-mode decode`), SGLang 0.5.19 or later. Quiet when SGLANG_MINICPM_FORCE_DENSE is on "
        "and the target is (or may be) a MiniCPM model, whose override then swaps in the dense backend.",
        why="0.5.19 added the MiniCPM sparse backends (choices server_args.py:192-193, attention_registry.py:330-341; "
        "absent from 0.5.18). `MiniCPMSparseBackend.init_forward_metadata` raises NotImplementedError for "
        "TARGET_VERIFY and DRAFT_EXTEND_V2 (minicpm/backend.py:378-386), and its CUDA-graph metadata accepts decode "
        "and idle batches only (:940-950), so every speculative algorithm fails at its first verify (or its "
        "verify graph capture). The refusal is unchanged in 0.5.23 (minicpm/backend.py:380-387). With "
        "SGLANG_MINICPM_FORCE_DENSE the MiniCPM override rewrites each minicpm_* backend to fa3 (fa4 on Blackwell) "
        "or flashinfer (model_overrides/minicpm.py:31-44). A MiniCPM sparse target whose backend SGLang picks "
        "itself (config.json has_minicpm_sparse_attention, no backend written, :47-64) is not judged: specguard "
        "does not read that config.json field.",
        fix="Name the dense backend (fa3 or flashinfer) for that flag, or set SGLANG_MINICPM_FORCE_DENSE=1.",
        fix_safety="Unsafe: attention runs dense instead of sparse (more memory traffic, other numerics).",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--attention-backend", "minicpm_flashattn"),
        sglang_version="0.5.19",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--attention-backend", "fa3"), sglang_version="0.5.19"
    ),
    sources=(
        "sglang 0.5.18: python/sglang/srt/server_args.py (no minicpm_* attention backend)",
        "sglang 0.5.19: python/sglang/srt/server_args.py:192-193; layers/attention/attention_registry.py:330-341",
        "sglang 0.5.19: python/sglang/srt/layers/attention/minicpm/backend.py:378-386,940-950",
        "sglang 0.5.19: python/sglang/srt/layers/attention/hybrid_attn_backend.py:40-41,75",
        "sglang 0.5.19: python/sglang/srt/arg_groups/model_overrides/minicpm.py:31-64",
        "sglang 0.5.23: python/sglang/srt/layers/attention/minicpm/backend.py:380-387",
    ),
    log_signatures=(
        r"MiniCPM backend does not support speculative decoding",
        r"MiniCPM backend CUDA graph only supports decode/idle mode",
    ),
)
