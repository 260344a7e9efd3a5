"""SP430 speculative-moe-runner-flashinfer-trtllm-refused."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import DEEPSEEK_V3_MLA_FACTS

# SGLang asserts (0.5.7-0.5.9 server_args.py _handle_speculative_decoding):
# "Currently speculative MoE runner backend cannot be flashinfer_trtllm for risk in some draft models."
# and, reworded in 0.5.10rc0-0.5.11:
# "Currently speculative MoE runner backend doesn't support flashinfer_trtllm, please use triton or auto backend for speculative moe runner instead."
RUNNER = "--speculative-moe-runner-backend"
REFUSED = "flashinfer_trtllm"


def check(ctx: CheckContext) -> Iterator[Finding]:
    item = ctx.spec.item(RUNNER)
    if item is None or not item.values or item.values[-1] != REFUSED:
        return
    yield RULE.finding(
        f"{ctx.flag(RUNNER)} {REFUSED} in SGLang {ctx.version}: argument checking asserts that the draft's MoE "
        "runner is not flashinfer_trtllm (AssertionError 'Currently speculative MoE runner backend cannot be "
        "flashinfer_trtllm' / 'doesn't support flashinfer_trtllm'), so the server does not start. Drop "
        f"{ctx.flag(RUNNER)} (an unset draft runner becomes auto when the target runs flashinfer_trtllm) or "
        "set it to triton",
        flags=(RUNNER,),
        fix=fix_of(
            f"drop {RUNNER}", Applicability.UNSAFE, Edit(name=RUNNER, value=None)
        ),
    )


_DEEPSEEK_V3_NEXTN = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3",
    "--tp",
    "8",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)

RULE = Rule(
    check=check,
    code="SP430",
    category=Category.START,
    name="speculative-moe-runner-flashinfer-trtllm-refused",
    summary="--speculative-moe-runner-backend flashinfer_trtllm is refused at argument time (0.5.7-0.5.11)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-moe-runner-backend flashinfer_trtllm`, SGLang 0.5.7 to 0.5.11.",
        why="0.5.7 added an assert to `ServerArgs._handle_speculative_decoding`, which runs for every launch: "
        "an unset draft runner copies `--moe-runner-backend` except flashinfer_trtllm (then 'auto'), and a "
        "given one must not be flashinfer_trtllm (0.5.7 server_args.py:1969-1982, 0.5.9 :2337-2350). "
        "0.5.10rc0 reworded the message and kept the assert (0.5.10rc0 server_args.py:2920-2935, 0.5.11 "
        ":3293-3308). 0.5.6.post2 had no such check: the draft used the given runner (layers/moe/utils.py:"
        "154-158), and 0.5.12 removed it (server_args.py:3558-3559 only fills an unset runner in).",
        fix="Drop the flag, or name another runner (the message suggests triton or auto).",
        fix_safety="Unsafe: the draft's MoE kernels change.",
    ),
    bad=Example(
        argv=(*_DEEPSEEK_V3_NEXTN, RUNNER, REFUSED),
        target=DEEPSEEK_V3_MLA_FACTS,
        sglang_version="0.5.7",
    ),
    good=Example(
        argv=(*_DEEPSEEK_V3_NEXTN, RUNNER, "triton"),
        target=DEEPSEEK_V3_MLA_FACTS,
        sglang_version="0.5.7",
    ),
    sources=(
        "sglang 0.5.6.post2: python/sglang/srt/layers/moe/utils.py:154-158 (the given draft runner is used, no check)",
        "sglang 0.5.7: python/sglang/srt/server_args.py:1969-1982",
        "sglang 0.5.9: python/sglang/srt/server_args.py:2337-2350",
        "sglang 0.5.10rc0: python/sglang/srt/server_args.py:2920-2935 (reworded)",
        "sglang 0.5.11: python/sglang/srt/server_args.py:3293-3308",
        "sglang 0.5.12: python/sglang/srt/server_args.py:3558-3559 (assert removed)",
    ),
    sglang_versions=">=0.5.7,<0.5.12",
    log_signatures=(
        r"Currently speculative MoE runner backend (cannot be|doesn't support) flashinfer_trtllm",
    ),
)
