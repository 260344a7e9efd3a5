"""QT305 minimax-m3-nvfp4-speculation."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, GpuSpec, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.spec_params._ragged_verify import RAGGED
from specguard.sglang_facts.algorithms import MINIMAX_M3_NVFP4_ALGORITHMS

NVFP4 = "minimax_m3_nvfp4"
# The classes _minimax_m3_overrides is registered for; only the VL wrapper exposes the draft's hidden-state capture.
MINIMAX_M3_ARCHITECTURES = frozenset(
    {"MiniMaxM3SparseForCausalLM", "MiniMaxM3SparseForConditionalGeneration"}
)
VL_ARCHITECTURE = "MiniMaxM3SparseForConditionalGeneration"
# get_platform().is_blackwell: CUDA compute capability 10.x, 11.x or 12.x (0.5.23 utils/common.py:297-303).
BLACKWELL_MAJORS = (10, 11, 12)


def _resolved_quantization(ctx: CheckContext) -> str | None:
    """--quantization as given, else what _resolve_quant_method reads from the checkpoint."""
    given = ctx.spec.item("--quantization")
    if given is not None and given.values:
        return given.values[-1]
    target = ctx.target
    if target is None or target.quantization is None:
        return None
    if target.quantization == "mxfp8" and target.moe_nvfp4_packed:
        return NVFP4
    return target.quantization


def _blackwell(gpu: GpuSpec | None) -> bool | None:
    if gpu is None:
        return None
    if gpu.platform != "cuda":
        return False
    return (
        None
        if gpu.compute_capability is None
        else gpu.compute_capability[0] in BLACKWELL_MAJORS
    )


def _refusal(ctx: CheckContext, algorithm: str) -> tuple[str, tuple[str, ...]] | None:
    """The first ValueError _minimax_m3_overrides raises for this launch, and the flags behind it."""
    if algorithm not in MINIMAX_M3_NVFP4_ALGORITHMS:
        return "M3.1 NVFP4 only supports DSPARK or DFLASH speculation", (
            "--speculative-algorithm",
        )
    arch = ctx.target.architecture if ctx.target is not None else None
    if arch != VL_ARCHITECTURE:
        return f"M3.1 NVFP4 {algorithm} requires {VL_ARCHITECTURE}, got {arch}", (
            "--model-path",
        )
    if _blackwell(ctx.env.gpu) is False:
        return f"M3.1 NVFP4 {algorithm} requires Blackwell", ()
    mode = ctx.spec.env_value(RAGGED)
    if mode is not None and mode != "static":
        return f"M3.1 NVFP4 {algorithm} requires {RAGGED}=static", ()
    pp = ctx.spec.get("pp_size")
    if pp is not None and pp != 1:
        return f"M3.1 NVFP4 {algorithm} requires PP=1", ("--pp-size",)
    pd = ctx.spec.item("--disaggregation-mode")
    if (
        algorithm == "DFLASH"
        and pd is not None
        and pd.values
        and pd.values[-1] != "null"
    ):
        return "M3.1 NVFP4 DFLASH currently requires colocated serving", (
            "--disaggregation-mode",
        )
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm is None
        or ctx.target is None
        or ctx.target.architecture not in MINIMAX_M3_ARCHITECTURES
    ):
        return
    if _resolved_quantization(ctx) != NVFP4:
        return
    refusal = _refusal(ctx, ctx.algorithm)
    if refusal is None:
        return
    message, flags = refusal
    yield RULE.finding(
        f"{ctx.algorithm} on a MiniMax-M3.1 NVFP4 target ({NVFP4}) in SGLang {ctx.version}: the model overrides "
        f"raise '{message}' at argument time. NVFP4 M3.1 speculates only with DSPARK or DFLASH, on the "
        f"{VL_ARCHITECTURE} checkpoint, on Blackwell, with static verify and no pipeline parallelism",
        flags=flags,
    )


M3_NVFP4 = {
    "architectures": (VL_ARCHITECTURE,),
    "quantization": "mxfp8",
    "moe_nvfp4_packed": True,
}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="QT305",
    category=Category.START,
    name="minimax-m3-nvfp4-speculation",
    summary="MiniMax-M3.1 NVFP4 speculates only with DSPARK/DFLASH on the VL checkpoint, on Blackwell, with static "
    "verify and PP 1 (0.5.23+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="A MiniMax-M3 sparse target (config.json architectures[0] MiniMaxM3SparseForCausalLM or "
        "MiniMaxM3SparseForConditionalGeneration) whose quantization resolves to minimax_m3_nvfp4 (`--quantization "
        "minimax_m3_nvfp4`, or a quantization_config declaring mxfp8 with moe_quant_algo NVFP4 and moe_quant_format "
        "nvfp4-pack-quantized) with `--speculative-algorithm` other than DSPARK/DFLASH; or DSPARK/DFLASH on the "
        "CausalLM class, on a GPU that is not Blackwell, with `SGLANG_RAGGED_VERIFY_MODE` other than static, "
        "`--pp-size` above 1, or (DFLASH) `--disaggregation-mode`. SGLang 0.5.23 or later; an unknown GPU skips "
        "the Blackwell test.",
        why="0.5.23 added the minimax_m3_nvfp4 quantization (layers/quantization/__init__.py:66) and, in "
        "`_minimax_m3_overrides` (arg_groups/model_overrides/minimax_m3.py:37-78), resolves it from the checkpoint "
        '(`_resolve_quant_method`, :18-34) and raises at argument time: "M3.1 NVFP4 only supports DSPARK or DFLASH '
        'speculation" (:56-58), then for DSPARK/DFLASH "M3.1 NVFP4 DSPARK requires '
        'MiniMaxM3SparseForConditionalGeneration, got MiniMaxM3SparseForCausalLM" (:61-66), "M3.1 NVFP4 DSPARK '
        'requires Blackwell" (:67-68), "M3.1 NVFP4 DSPARK requires SGLANG_RAGGED_VERIFY_MODE=static" (:69-72), '
        '"M3.1 NVFP4 DSPARK requires PP=1" (:73-74) and "M3.1 NVFP4 DFLASH currently requires colocated '
        'serving" (:75-78). Blackwell is compute capability 10-12 (utils/common.py:297-303). 0.5.22 has no '
        "minimax_m3_nvfp4 anywhere in srt.",
        fix="Speculate with DSPARK or DFLASH on the MiniMaxM3SparseForConditionalGeneration checkpoint, on a "
        "Blackwell GPU, with static verify and `--pp-size 1` (DFLASH colocated), or serve without speculation.",
        fix_safety="No automatic fix: the algorithm needs its own draft checkpoint.",
    ),
    bad=Example(
        argv=(
            "--model-path",
            "MiniMaxAI/MiniMax-M3.1-NVFP4",
            "--speculative-algorithm",
            "EAGLE3",
            "--speculative-draft-model-path",
            "/ckpt/eagle3",
        ),
        target=M3_NVFP4,
        gpu="B200",
        sglang_version="0.5.23",
    ),
    good=Example(
        argv=(
            "--model-path",
            "MiniMaxAI/MiniMax-M3.1-NVFP4",
            "--speculative-algorithm",
            "DSPARK",
            "--speculative-draft-model-path",
            "/ckpt/dspark-draft",
        ),
        target=M3_NVFP4,
        gpu="B200",
        sglang_version="0.5.23",
    ),
    sources=(
        "sglang 0.5.22: python/sglang/srt/arg_groups/model_overrides/minimax_m3.py (no minimax_m3_nvfp4 anywhere in srt)",
        (
            "sglang 0.5.23: python/sglang/srt/arg_groups/model_overrides/minimax_m3.py:18-34,37-78; "
            "layers/quantization/__init__.py:66; utils/common.py:297-303"
        ),
    ),
    sglang_versions=">=0.5.23",
    log_signatures=(
        r"M3\.1 NVFP4 only supports DSPARK or DFLASH speculation",
        (
            r"M3\.1 NVFP4 (DSPARK|DFLASH) requires (MiniMaxM3SparseForConditionalGeneration|Blackwell|"
            r"SGLANG_RAGGED_VERIFY_MODE=static|PP=1)"
        ),
        r"M3\.1 NVFP4 DFLASH currently requires colocated serving",
    ),
)
