"""PL199 dsa-dcp-tree-draft."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.examples import GLM52_FACTS, GLM52_FP8_TP8
from specguard.rules.parallel._parallel import dcp_size
from specguard.sglang_facts.architectures import DSA_ARCHITECTURES

GLM5_DCP_EAGLE = (
    *GLM52_FP8_TP8,
    "--dcp-size",
    "8",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "3",
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    dcp = dcp_size(ctx)
    if (
        dcp is None
        or dcp[0] <= 1
        or ctx.target is None
        or ctx.target.architecture not in DSA_ARCHITECTURES
    ):
        return
    # The DeepSeek-family model override runs before the speculative hook, so it sees the topk as written:
    # unset passes (SGLang then resolves it itself), any explicit value but 1 is refused.
    topk = ctx.spec.get("speculative_eagle_topk")
    if topk is None or topk == 1:
        return
    size, flag = dcp
    steps = ctx.spec.get("speculative_num_steps") or 3
    yield RULE.finding(
        f"{ctx.flag('--speculative-eagle-topk')} {topk} with {ctx.flag(flag)} {size} on a DSA target "
        f"({ctx.target.architecture}) in SGLang {ctx.version}: decode context parallelism on DSA drafts chains only, "
        "so argument handling raises (ValueError 'DSA DCP requires --speculative-eagle-topk 1.'). Set "
        f"{ctx.flag('--speculative-eagle-topk')} 1",
        flags=("--speculative-eagle-topk", flag),
        fix=set_flags(
            f"draft a chain: topk 1, {steps} steps, {steps + 1} draft tokens",
            Applicability.UNSAFE,
            speculative_num_steps=steps,
            speculative_eagle_topk=1,
            speculative_num_draft_tokens=steps + 1,
        ),
    )


RULE = Rule(
    check=check,
    code="PL199",
    category=Category.START,
    name="dsa-dcp-tree-draft",
    summary="--dcp-size above 1 on a DSA target (DeepSeek-V3.2, GLM-5.x) refuses an explicit --speculative-eagle-topk "
    "other than 1 (0.5.22+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--dcp-size` (`--decode-context-parallel-size`) above 1 on a DeepseekV32ForCausalLM or "
        "GlmMoeDsaForCausalLM target with `--speculative-eagle-topk` written other than 1, SGLang 0.5.22 or later.",
        why="0.5.22 added decode context parallelism for DSA models: `_dsa_dcp_overrides`, part of the DeepSeek-family "
        "model override that runs when `is_deepseek_dsa(hf_config)` (model_overrides/deepseek_v2.py:18-34, :99-100), "
        "raises 'DSA DCP requires --speculative-eagle-topk 1.' when topk is not None or 1 (:25-26). The override is "
        "collected in the model-specific adjustments (model_hook.py:233), before the speculative hook resolves topk, "
        "so an unset topk passes. Unchanged in 0.5.23 (deepseek_v2.py:18-34); 0.5.21 has no DSA DCP overrides. "
        "specguard counts DeepseekV32ForCausalLM and GlmMoeDsaForCausalLM, whose configs carry index_topk "
        "(is_deepseek_dsa also needs it, configs/model_config.py:190-211).",
        fix="Draft a chain (`--speculative-eagle-topk 1`, draft tokens = steps + 1), or leave topk unset.",
        fix_safety="Unsafe: a chain drafts fewer candidates per step.",
    ),
    bad=Example(
        argv=(
            *GLM5_DCP_EAGLE,
            "--speculative-eagle-topk",
            "4",
            "--speculative-num-draft-tokens",
            "8",
        ),
        target=GLM52_FACTS,
        sglang_version="0.5.22",
    ),
    good=Example(
        argv=(
            *GLM5_DCP_EAGLE,
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
        ),
        target=GLM52_FACTS,
        sglang_version="0.5.22",
    ),
    sources=(
        "sglang 0.5.21: python/sglang/srt/arg_groups/model_overrides/deepseek_v2.py (no _dsa_dcp_overrides)",
        "sglang 0.5.22: python/sglang/srt/arg_groups/model_overrides/deepseek_v2.py:18-34,99-100",
        "sglang 0.5.22: python/sglang/srt/arg_groups/model_hook.py:233; configs/model_config.py:190-211",
        "sglang 0.5.23: python/sglang/srt/arg_groups/model_overrides/deepseek_v2.py:18-34",
    ),
    sglang_versions=">=0.5.22",
    log_signatures=(r"DSA DCP requires --speculative-eagle-topk 1",),
)
