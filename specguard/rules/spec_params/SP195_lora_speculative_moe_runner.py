"""SP195 lora-speculative-moe-runner."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE3

# SGLang says (0.5.23 arg_groups/lora_hook.py:192-196):
# "--speculative-moe-runner-backend lora_triton is not supported: the LoRA MoE runner serves adapter traffic on the target model".
RUNNER = "--speculative-moe-runner-backend"


def check(ctx: CheckContext) -> Iterator[Finding]:
    item = ctx.spec.item(RUNNER)
    if (
        ctx.algorithm is None
        or item is None
        or not item.values
        or not item.values[-1].startswith("lora")
    ):
        return
    backend = item.values[-1]
    yield RULE.finding(
        f"{ctx.flag(RUNNER)} {backend} with {ctx.algorithm} in SGLang {ctx.version}: the LoRA MoE runners serve "
        "adapter traffic on the target and a draft has no adapters, so the server refuses at start (ValueError "
        f"'--speculative-moe-runner-backend {backend} is not supported: the LoRA MoE runner serves adapter traffic "
        f"on the target model'). Drop {ctx.flag(RUNNER)}: with a lora_* target runner the draft defaults to auto",
        flags=(RUNNER,),
        fix=fix_of(
            f"drop {RUNNER}", Applicability.UNSAFE, Edit(name=RUNNER, value=None)
        ),
    )


RULE = Rule(
    check=check,
    code="SP195",
    category=Category.START,
    name="lora-speculative-moe-runner",
    summary="a lora_* --speculative-moe-runner-backend is refused: drafts have no LoRA adapters (0.5.23+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-moe-runner-backend` lora_cutedsl, lora_triton or lora_marlin (any value starting with "
        "'lora') with a speculative algorithm, SGLang 0.5.23 or later; the check reads only the flags, whatever the "
        "target.",
        why="0.5.23 added the LoRA MoE runners (arg_groups/choices.py:153-155; absent from 0.5.22's choices). "
        "`check_lora_moe_runner_args`, run from check_lora_server_args for every launch, raises for a lora* draft "
        "runner since 'Draft models have no LoRA adapters' (arg_groups/lora_hook.py:180-196); with a lora_* "
        "target runner the draft's default is auto instead of inherited (overrides.py "
        "`_speculative_moe_runner_default`).",
        fix="Drop `--speculative-moe-runner-backend` (the draft then runs auto) or name a non-LoRA runner.",
        fix_safety="Unsafe: the draft's MoE kernels change.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, RUNNER, "lora_triton"), sglang_version="0.5.23"
    ),
    good=Example(argv=(*LLAMA31_8B_EAGLE3, RUNNER, "triton"), sglang_version="0.5.23"),
    sources=(
        "sglang 0.5.22: python/sglang/srt/arg_groups/choices.py (no lora_* MoE runner)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/choices.py:136-159",
        "sglang 0.5.23: python/sglang/srt/arg_groups/lora_hook.py:33,180-196",
        "sglang 0.5.23: python/sglang/srt/arg_groups/validation_hook.py:222",
    ),
    sglang_versions=">=0.5.23",
    log_signatures=(
        r"--speculative-moe-runner-backend lora\w* is not supported: the LoRA MoE runner serves adapter traffic",
    ),
)
