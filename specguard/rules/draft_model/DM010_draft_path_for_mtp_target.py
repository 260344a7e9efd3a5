"""DM010 draft-path-for-mtp-target."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.draft_model._common import (
    MTP_AUTOFILL_ARCHITECTURES,
    MTP_AUTOFILL_NO_WARNING,
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "EAGLE" or ctx.target is None:
        return
    arch = ctx.target.architecture
    if arch not in MTP_AUTOFILL_ARCHITECTURES or arch in MTP_AUTOFILL_NO_WARNING:
        return
    draft_path = ctx.spec.get("speculative_draft_model_path")
    if draft_path is None:
        return
    draft_flag = ctx.flag("--speculative-draft-model-path")
    if draft_path == ctx.spec.get("model_path"):
        yield RULE.finding(
            f"{draft_flag} repeats the target path: for {arch} SGLang uses the target's own MTP layers when "
            "no draft path is given, and warns 'DeepSeek MTP does not require setting "
            f"speculative_draft_model_path'. Drop {draft_flag}",
            flags=("--speculative-draft-model-path",),
            fix=set_flags("remove the draft path (SGLang fills in the same one)", Applicability.SAFE,
                          speculative_draft_model_path=None),
        )
        return
    yield RULE.finding(
        f"{arch} has its own MTP layers, which SGLang uses when {draft_flag} is left out; with {draft_path} it "
        "loads that checkpoint instead and warns 'DeepSeek MTP does not require setting "
        "speculative_draft_model_path'. Fine for an extracted NextN checkpoint (lmsys/DeepSeek-V3-NextN); "
        "otherwise drop the flag",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own code path; sgl-jax has its own
    check=check,
    code="DM010",
    category=Category.HYGIENE,
    name="draft-path-for-mtp-target",
    summary="A draft path given for a target whose MTP layers SGLang uses by itself",
    severity=Severity.INFO,
    docs=RuleDocs(
        what="EAGLE/NEXTN with `--speculative-draft-model-path` on a target SGLang treats as MTP (DeepSeek "
        "V3/V3.2/V4, GLM-4.5+/GLM-4.7-Flash/GLM-5, Bailing, Hunyuan V3/V4, Qwen4-Exp).",
        why="For these architectures SGLang sets the draft path to the target's when none is given and "
        "otherwise logs 'DeepSeek MTP does not require setting speculative_draft_model_path' (P25, "
        "`speculative_hook.py:1121-1156`). Passing the target path again is redundant. Passing a separate "
        "checkpoint is legitimate: SGLang's `bench_speculative.py` docstring runs DeepSeek-V3 with "
        "`--speculative-draft-model-path lmsys/DeepSeek-V3-NextN`, an extracted NextN layer. So this is "
        "information only, with a fix only for the redundant case. MistralLarge3/Pixtral are exempt: their "
        "draft is a separate EAGLE head and SGLang does not warn.",
        fix="When the draft path equals `--model-path`, remove it.",
        fix_safety="Safe: SGLang fills in exactly the path that is removed.",
    ),
    bad=Example(
        argv=("--model-path", "deepseek-ai/DeepSeek-V3", "--speculative-algorithm", "EAGLE",
              "--speculative-draft-model-path", "deepseek-ai/DeepSeek-V3"),
        target={"architectures": ("DeepseekV3ForCausalLM",), "num_nextn_predict_layers": 1},
    ),
    good=Example(
        argv=("--model-path", "deepseek-ai/DeepSeek-V3", "--speculative-algorithm", "EAGLE"),
        target={"architectures": ("DeepseekV3ForCausalLM",), "num_nextn_predict_layers": 1},
    ),
    sources=(
        "design: sglang-spec-checks.md P25 (case core:F02)",
        "design: dialects.md §3 (bench_speculative.py docstring: lmsys/DeepSeek-V3-NextN)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1121-1156",
    ),
)
