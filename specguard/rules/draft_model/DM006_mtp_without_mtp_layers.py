"""DM006 mtp-without-mtp-layers."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.draft_model._common import (
    MTP_AUTOFILL_ARCHITECTURES,
    MTP_DRAFT_REWRITE_ARCHITECTURES,
    MTP_REWRITE_FORCES_ONE_LAYER,
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "EAGLE" or ctx.target is None:
        return
    if ctx.spec.get("speculative_draft_model_path") is not None:
        return
    target = ctx.target
    arch = target.architecture
    layers = target.num_nextn_predict_layers
    draft_flag = ctx.flag("--speculative-draft-model-path")
    if layers is not None and layers > 0:
        return
    known_mtp = arch in MTP_AUTOFILL_ARCHITECTURES or arch in MTP_DRAFT_REWRITE_ARCHITECTURES
    if known_mtp:
        if layers == 0 and arch not in MTP_REWRITE_FORCES_ONE_LAYER:
            yield RULE.finding(
                f"the target ({arch}) declares num_nextn_predict_layers: 0, so this checkpoint has no MTP "
                "layers to draft with; SGLang still loads it as the MTP draft and the draft weights are missing. "
                f"Use a checkpoint with MTP weights, or an EAGLE head via {draft_flag}",
                severity=Severity.WARNING,
            )
        return
    if arch is None and layers is None:
        return
    detail = f"{arch}" + (", num_nextn_predict_layers: 0" if layers == 0 else ", no num_nextn_predict_layers")
    yield RULE.finding(
        f"{ctx.spec.get('speculative_algorithm')} without {draft_flag} means the target's own MTP layers, but the "
        f"target ({detail}) has none and is not one of SGLang's MTP architectures. SGLang accepts it at "
        "argument time and then loads the whole target as the draft, which fails (or drafts nonsense) after "
        f"the weights are loaded. Add {draft_flag} with an EAGLE head, or use NGRAM",
        flags=("--speculative-algorithm", "--speculative-draft-model-path"),
    )


RULE = Rule(
    check=check,
    code="DM006",
    category=Category.START,
    name="mtp-without-mtp-layers",
    summary="EAGLE/NEXTN without a draft path on a target that has no MTP layers",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="EAGLE or NEXTN without `--speculative-draft-model-path` asks for the target's own MTP layers. "
        "Fires when the target's config has no `num_nextn_predict_layers` (or 0) and its architecture is "
        "not one SGLang turns into an MTP draft.",
        why="SGLang accepts a missing draft path at argument time (P26). For DeepSeek-V3/R1, GLM-4.5+, "
        "Bailing, Hunyuan and a few more it fills the draft path with the target's (P25, "
        "`speculative_hook.py:1121-1156`); for every target the draft worker loads `model_path or "
        "cfg.model_path` (`configs/model_config.py:956`) and `_config_draft_model` "
        "(`model_config.py:1010-1211`) rewrites known MTP architectures to their MTP module: "
        "`MiMoForCausalLM` -> `MiMoMTP` (so slime's MiMo-7B-RL script needs no draft path), "
        "`Qwen3NextForCausalLM` -> `Qwen3NextForCausalLMMTP`, Qwen3.5, NemotronH, Ernie 4.5 MoE, "
        "Step3.5, LongCat-Flash, ... Any other architecture is loaded whole as the 'draft' and fails "
        "after the target weights are loaded. A known MTP architecture whose config says "
        "`num_nextn_predict_layers: 0` (and which SGLang does not force to 1) has no MTP weights: warning.",
        fix="Give an EAGLE head with `--speculative-draft-model-path`, or use NGRAM. No automatic fix.",
        fix_safety="No fix: choosing a draft is the user's decision.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen3-32B", "--speculative-algorithm", "NEXTN"),
        target={"architectures": ("Qwen3ForCausalLM",)},
    ),
    good=Example(
        argv=("--model-path", "deepseek-ai/DeepSeek-V3", "--speculative-algorithm", "NEXTN"),
        target={"architectures": ("DeepseekV3ForCausalLM",), "num_nextn_predict_layers": 1},
    ),
    sources=(
        "design: sglang-spec-checks.md P25, P26",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1121-1156",
        "sglang 0.5.23: python/sglang/srt/configs/model_config.py:956, 1010-1211 (_config_draft_model)",
        "seed: sglang-speculative-decoding.md (Multi Token Prediction: MiMo-7B-RL without a draft path)",
        "seed: slime-speculative-decoding.en.md (MTP: run-mimo-7B-rl-eagle.sh)",
    ),
)
