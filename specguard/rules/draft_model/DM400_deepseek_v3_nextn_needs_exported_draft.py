"""DM400 deepseek-v3-nextn-needs-exported-draft."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, ModelFacts, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)

DEEPSEEK_V3 = "DeepseekV3ForCausalLM"
DEEPSEEK_V3_NEXTN = "DeepseekV3ForCausalLMNextN"
DRAFT_PATH = "--speculative-draft-model-path"
DEEPSEEK_V3_ARGV = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3",
    "--tp",
    "8",
    "--speculative-algorithm",
    "NEXTN",
)
DEEPSEEK_V3_FACTS = {
    "architectures": (DEEPSEEK_V3,),
    "num_nextn_predict_layers": 1,
    "num_hidden_layers": 61,
}


def drafts_with_full_checkpoint(ctx: CheckContext) -> bool:
    """The draft is a whole DeepseekV3ForCausalLM checkpoint: the target's own path, or a draft config that says so."""
    if ctx.draft is not None and ctx.draft.architecture is not None:
        return ctx.draft.architecture == DEEPSEEK_V3
    draft_path = ctx.spec.item(DRAFT_PATH)
    model_path = ctx.spec.item("--model-path")
    return (
        draft_path is not None
        and model_path is not None
        and draft_path.values == model_path.values
    )


def nextn_export_problem(draft: ModelFacts | None) -> str | None:
    """What makes a DeepseekV3ForCausalLMNextN draft config fail the loader's asserts; None when it passes or is unknown."""
    if draft is None or draft.architecture != DEEPSEEK_V3_NEXTN:
        return None
    nextn, layers = draft.num_nextn_predict_layers, draft.num_hidden_layers
    if nextn is not None and nextn != 1:
        return f"num_nextn_predict_layers: {nextn}"
    if nextn == 1 and layers is not None and layers != 1:
        return f"num_hidden_layers: {layers} with num_nextn_predict_layers: 1"
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "EAGLE"
        or ctx.target is None
        or ctx.target.architecture != DEEPSEEK_V3
    ):
        return
    written = ctx.spec.get("speculative_algorithm")
    draft_flag = ctx.flag(DRAFT_PATH)
    if ctx.spec.item(DRAFT_PATH) is None:
        yield RULE.finding(
            f"{written} on {DEEPSEEK_V3} without {draft_flag} in SGLang {ctx.version}: this release does not take "
            "the MTP layer from the target checkpoint (0.4.6.post2 is the first that does), so the draft worker "
            "builds its model config from a draft path of None and start-up fails with a TypeError after the "
            f"target weights are loaded. Export the NextN layer as its own one-layer checkpoint "
            f"(DeepseekV3ForCausalLMNextN) and pass it with {draft_flag}, or upgrade to 0.4.6.post2",
            flags=("--speculative-algorithm", DRAFT_PATH),
        )
        return
    if drafts_with_full_checkpoint(ctx):
        yield RULE.finding(
            f"{written} with the whole {DEEPSEEK_V3} checkpoint as {draft_flag} in SGLang {ctx.version}: this "
            "release does not rewrite it to the NextN draft class, so the draft worker loads the full model a "
            "second time, with a KV pool for all its layers, and runs every draft step through all of them. "
            "DeepSeek-V3/R1 does not fit twice; a smaller checkpoint starts but drafts as slowly as it decodes. "
            f"Pass a one-layer NextN export (DeepseekV3ForCausalLMNextN) as {draft_flag}, or upgrade to 0.4.6.post2",
            flags=(DRAFT_PATH,),
            severity=Severity.WARNING,
        )
        return
    problem = nextn_export_problem(ctx.draft)
    if problem is not None:
        yield RULE.finding(
            f"the DeepseekV3ForCausalLMNextN draft's config.json has {problem}; SGLang {ctx.version}'s NextN loader "
            'asserts exactly one NextN layer that is also its only layer ("Only 1 nextn layer is supportted"), '
            f"so the draft fails to load. Export the NextN layer with num_hidden_layers 1 and "
            "num_nextn_predict_layers 1",
            flags=(DRAFT_PATH,),
        )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own draft class mapping
    check=check,
    code="DM400",
    category=Category.START,
    name="deepseek-v3-nextn-needs-exported-draft",
    summary="DeepSeek-V3 NEXTN/EAGLE needs a separately exported one-layer NextN draft before 0.4.6.post2 "
    "(0.4.3.post2-0.4.6)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="A DeepseekV3ForCausalLM target with `--speculative-algorithm` NEXTN or EAGLE and either no "
        "`--speculative-draft-model-path` (error), the target's own checkpoint as the draft (warning), or a "
        "DeepseekV3ForCausalLMNextN draft whose config.json is not one layer with one NextN layer (error), "
        "SGLang 0.4.3.post2 to 0.4.6.",
        why="0.4.3.post2 adds the NextN draft class `DeepseekV3ForCausalLMNextN` (models/deepseek_nextn.py, "
        "EntryClass :295), chosen only for a draft whose config.json says that architecture; its loader raises "
        "'num_nextn_predict_layers is not in the config' or asserts one NextN layer equal to num_hidden_layers "
        "(:145-151), i.e. an exported one-layer checkpoint. The draft worker builds its config from "
        "`speculative_draft_model_path` as given (managers/tp_worker.py:54-66), which no code fills: with none, "
        "`get_config(None)` fails (0.4.6: tp_worker.py:64, then `is_remote_url(None)` in configs/model_config.py:57, :384 and utils.py:1814-1824). "
        "The target path gives a DeepseekV3ForCausalLM draft, which loads the whole model again. 0.4.6.post2 "
        "fills the draft path with the target's for DeepseekV3ForCausalLM (server_args.py:349-353) and rewrites "
        "that draft to DeepseekV3ForCausalLMNextN (configs/model_config.py:89-93), whose loader reads layer "
        "num_hidden_layers of the full checkpoint.",
        fix="Export the NextN layer as a one-layer checkpoint (architectures DeepseekV3ForCausalLMNextN, "
        "num_hidden_layers 1, num_nextn_predict_layers 1) and pass it as the draft, or upgrade to 0.4.6.post2. "
        "No automatic fix.",
        fix_safety="No fix: the draft checkpoint or the release is the user's choice.",
    ),
    bad=Example(
        argv=DEEPSEEK_V3_ARGV,
        target=DEEPSEEK_V3_FACTS,
        gpu="H200",
        sglang_version="0.4.6",
    ),
    good=Example(
        argv=DEEPSEEK_V3_ARGV,
        target=DEEPSEEK_V3_FACTS,
        gpu="H200",
        sglang_version="0.4.6.post2",
    ),
    sources=(
        "sglang 0.4.3: python/sglang/srt/server_args.py:708 (--speculative-algorithm EAGLE only; no models/deepseek_nextn.py)",
        "sglang 0.4.3.post2: python/sglang/srt/models/deepseek_nextn.py:145-151,295; managers/tp_worker.py:54-66",
        "sglang 0.4.6: python/sglang/srt/managers/tp_worker.py:64; configs/model_config.py:57,384; utils.py:1814-1824",
        "sglang 0.4.6: python/sglang/srt/server_args.py:316-330 (no draft path filled); models/deepseek_nextn.py:179-185,439",
        "sglang 0.4.6.post2: python/sglang/srt/server_args.py:349-353; configs/model_config.py:89-93",
    ),
    sglang_versions=">=0.4.3.post2,<=0.4.6",
    log_signatures=(r"Only 1 nextn layer is supportted",),
)
