"""FX562 ple-offload-embedding-unsupported-target."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE3

OFFLOAD = "--ple-offload-embedding"
# argparse.BooleanOptionalAction (0.5.20 arg_groups/fields/exec_.py:871-880): the last of the pair wins.
NO_OFFLOAD = "--no-ple-offload-embedding"
# The one target whose loader reads the flag (0.5.20 load_model_utils.py:269-277).
PLE_TARGET = "Qwen4ExpForConditionalGeneration"


def _offload_written(ctx: CheckContext) -> bool:
    """--ple-offload-embedding is the last of the BooleanOptionalAction pair written."""
    written = [
        item.flag for item in ctx.spec.items if item.flag in (OFFLOAD, NO_OFFLOAD)
    ]
    return bool(written) and written[-1] == OFFLOAD


def check(ctx: CheckContext) -> Iterator[Finding]:
    target = ctx.target
    if not _offload_written(ctx) or target is None or target.architectures is None:
        return
    # The loader tests membership in hf_config.architectures, not only the first entry.
    if PLE_TARGET in target.architectures:
        return
    architecture = target.architecture or "a target with no architectures"
    yield RULE.finding(
        f"{ctx.flag(OFFLOAD)} on {architecture} in SGLang {ctx.version}: the flag offloads the PLE embedding of "
        f'{PLE_TARGET} only, so loading the target model raises "ValueError: --ple-offload-embedding only supports '
        f'{PLE_TARGET}" and the server does not start. Drop {ctx.flag(OFFLOAD)}',
        flags=(OFFLOAD,),
        fix=fix_of(
            f"drop {OFFLOAD}", Applicability.SAFE, Edit(name=OFFLOAD, value=None)
        ),
    )


LLAMA_FACTS = {"architectures": ("LlamaForCausalLM",)}

RULE = Rule(
    check=check,
    code="FX562",
    category=Category.START,
    name="ple-offload-embedding-unsupported-target",
    summary="--ple-offload-embedding on a target other than Qwen4ExpForConditionalGeneration fails at model load "
    "(0.5.20+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--ple-offload-embedding` (not overridden by a later `--no-ple-offload-embedding`) on a target whose "
        "config.json `architectures` does not list Qwen4ExpForConditionalGeneration, SGLang 0.5.20 or later. An "
        "unknown architecture stays quiet.",
        why="0.5.20 added the flag (arg_groups/fields/exec_.py:871-880, a BooleanOptionalAction, unset by default and "
        "filled in only for Qwen4-Exp by model_overrides/qwen4_exp.py:45-48). When the target worker loads its "
        "model, `load_model_with_memory_saver` raises ValueError '--ple-offload-embedding only supports "
        "Qwen4ExpForConditionalGeneration' unless that name is in hf_config.architectures "
        "(model_runner_components/load_model_utils.py:269-275); the draft worker skips the test. Unchanged in "
        "0.5.23 (:276-282). 0.5.19 has no such flag.",
        fix="Drop the flag: no other model has a PLE embedding to offload.",
        fix_safety="Safe: on any other target the flag has nothing to offload.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, OFFLOAD), target=LLAMA_FACTS, sglang_version="0.5.20"
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, NO_OFFLOAD),
        target=LLAMA_FACTS,
        sglang_version="0.5.20",
    ),
    sources=(
        "sglang 0.5.19: python/sglang/srt (no ple_offload_embedding)",
        "sglang 0.5.20: python/sglang/srt/model_executor/model_runner_components/load_model_utils.py:256-277",
        "sglang 0.5.20: python/sglang/srt/arg_groups/fields/exec_.py:871-880; arg_groups/model_overrides/qwen4_exp.py:45-48",
        "sglang 0.5.23: python/sglang/srt/model_executor/model_runner_components/load_model_utils.py:276-284",
    ),
    sglang_versions=">=0.5.20",
    log_signatures=(
        r"--ple-offload-embedding only supports Qwen4ExpForConditionalGeneration",
    ),
)
