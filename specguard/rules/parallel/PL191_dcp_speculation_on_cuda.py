"""PL191 dcp-speculation-on-cuda."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.parallel._parallel import dcp_size

DEEPSEEK_V3_DCP = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3",
    "--tp",
    "8",
    "--dcp-size",
    "8",
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    dcp = dcp_size(ctx)
    gpu = ctx.env.gpu
    # SGLang tests the machine (is_cuda(): torch built for CUDA with a device), not --device; an unknown
    # GPU stays quiet, and ROCm runs DCP with speculation.
    if (
        ctx.algorithm is None
        or dcp is None
        or dcp[0] <= 1
        or gpu is None
        or gpu.platform != "cuda"
    ):
        return
    size, flag = dcp
    yield RULE.finding(
        f"{ctx.flag(flag)} {size} with {ctx.algorithm} on {gpu.name} (CUDA) in SGLang {ctx.version}: decode context "
        "parallelism on CUDA refuses every speculative algorithm at argument time (ValueError 'Decode context "
        "parallel (--dcp-size / --decode-context-parallel-size > 1) on CUDA platform does not support any "
        f"speculative algorithm'). Set {ctx.flag(flag)} 1, or upgrade to 0.5.17, which accepts it",
        flags=(flag, "--speculative-algorithm"),
    )


RULE = Rule(
    check=check,
    code="PL191",
    category=Category.START,
    name="dcp-speculation-on-cuda",
    summary="--dcp-size above 1 with a speculative algorithm on a CUDA GPU is refused at argument time (0.5.15-0.5.16)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--dcp-size` (`--decode-context-parallel-size`) above 1 with any `--speculative-algorithm` on a CUDA "
        "GPU, SGLang 0.5.15 to 0.5.16. An unknown GPU keeps it quiet.",
        why="0.5.15 added decode context parallelism, validated on ROCm only: `_handle_dcp_validation` returns on "
        "HIP, raises on CUDA when a speculative algorithm is set ('... on CUDA platform does not support any "
        "speculative algorithm'), and refuses DCP on any other platform (0.5.15 server_args.py:2835-2864, "
        "0.5.16 :3149-3178). 0.5.17 keeps only the size and comm-backend checks (server_args.py:3817-3847) and "
        "serves DCP with speculation on CUDA through cutedsl_mla/tokenspeed_mla (trtllm_mla stays refused: "
        "AB192). 0.5.14 has no --dcp-size.",
        fix="Serve without decode context parallelism (`--dcp-size 1`) or upgrade to SGLang 0.5.17 or later.",
        fix_safety="No automatic fix: dropping DCP changes KV capacity per GPU.",
    ),
    bad=Example(
        argv=(*DEEPSEEK_V3_DCP, "--speculative-algorithm", "EAGLE"),
        gpu="H100",
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=(*DEEPSEEK_V3_DCP, "--speculative-algorithm", "EAGLE"),
        gpu="H100",
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.14: python/sglang/srt/server_args.py (no dcp_size)",
        "sglang 0.5.15: python/sglang/srt/server_args.py:823-829,2835-2864",
        "sglang 0.5.16: python/sglang/srt/server_args.py:3149-3178",
        "sglang 0.5.17: python/sglang/srt/server_args.py:3817-3847 (the CUDA refusal gone)",
    ),
    sglang_versions=">=0.5.15,<=0.5.16",
    log_signatures=(r"on CUDA platform does not support any speculative algorithm",),
)
