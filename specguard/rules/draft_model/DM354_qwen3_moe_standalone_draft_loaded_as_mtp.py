"""DM354 qwen3-moe-standalone-draft-loaded-as-mtp."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)

QWEN3_MOE = "Qwen3MoeForCausalLM"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "STANDALONE"
        or ctx.draft is None
        or ctx.draft.architecture != QWEN3_MOE
    ):
        return
    yield RULE.finding(
        f"STANDALONE with a {QWEN3_MOE} draft in SGLang {ctx.version}: every draft worker rewrites that architecture "
        "to Qwen3MoeForCausalLMMTP, a one-layer MTP head whose weight loader keeps only mtp.* tensors, so none of "
        "the draft checkpoint's own layers, embedding or head are loaded. The draft does not run as the small "
        "model you gave: it drafts from unloaded weights, and almost nothing is accepted. Use a draft of another "
        "architecture (a dense Qwen3), or SGLang 0.5.12.post1",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own draft class mapping
    check=check,
    code="DM354",
    category=Category.PERF,
    name="qwen3-moe-standalone-draft-loaded-as-mtp",
    summary="a Qwen3-MoE checkpoint given as a STANDALONE draft is built as a one-layer MTP head and loads none of "
    "its layers (0.5.13+)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm STANDALONE` with a `--speculative-draft-model-path` whose config.json "
        "architectures[0] is Qwen3MoeForCausalLM (e.g. Qwen3-30B-A3B drafting for Qwen3-235B-A22B), SGLang 0.5.13 "
        "or later.",
        why="0.5.13 rewrites a draft model's Qwen3MoeForCausalLM to Qwen3MoeForCausalLMMTP with "
        "num_nextn_predict_layers = 1 (configs/model_config.py:477-479), and every draft worker builds its model "
        "config with is_draft_model set (managers/tp_worker.py:341), STANDALONE's included. The new class "
        "(models/qwen3_moe_mtp.py:39-48) keeps one decoder layer plus an fc over the concatenated embedding and "
        "target hidden state, and its load_weights passes is_mtp=True, under which Qwen3MoeForCausalLM.load_weights "
        "skips every tensor whose name lacks 'mtp' (models/qwen3_moe.py:1133-1135): a plain Qwen3-MoE checkpoint "
        "loads nothing. 0.5.12.post1 has neither the rewrite nor the class and loads the draft as the full model; "
        "0.5.23 is unchanged (model_config.py:1155-1156, qwen3_moe.py:1180-1182, qwen3_moe_mtp.py:38-47). EAGLE "
        "or NEXTN with such a draft path is the MTP use the rewrite was made for and is not judged.",
        fix="Draft with a model of another architecture, or stay on SGLang 0.5.12.post1. No automatic fix.",
        fix_safety="No fix: the draft model and the release are the user's choice.",
    ),
    bad=Example(
        argv=(
            "--model-path",
            "Qwen/Qwen3-235B-A22B-Instruct-2507",
            "--tp",
            "8",
            "--speculative-algorithm",
            "STANDALONE",
            "--speculative-draft-model-path",
            "Qwen/Qwen3-30B-A3B-Instruct-2507",
        ),
        target={"architectures": (QWEN3_MOE,)},
        draft={"architectures": (QWEN3_MOE,)},
        sglang_version="0.5.13",
    ),
    good=Example(
        argv=(
            "--model-path",
            "Qwen/Qwen3-235B-A22B-Instruct-2507",
            "--tp",
            "8",
            "--speculative-algorithm",
            "STANDALONE",
            "--speculative-draft-model-path",
            "Qwen/Qwen3-30B-A3B-Instruct-2507",
        ),
        target={"architectures": (QWEN3_MOE,)},
        draft={"architectures": (QWEN3_MOE,)},
        sglang_version="0.5.12.post1",
    ),
    sources=(
        "sglang 0.5.12.post1: python/sglang/srt/configs/model_config.py (no Qwen3MoeForCausalLMMTP; no qwen3_moe_mtp.py)",
        "sglang 0.5.13: python/sglang/srt/configs/model_config.py:477-479; managers/tp_worker.py:341",
        "sglang 0.5.13: python/sglang/srt/models/qwen3_moe_mtp.py:39-48,125-131; models/qwen3_moe.py:1110,1133-1135",
        "sglang 0.5.23: python/sglang/srt/configs/model_config.py:1155-1156; models/qwen3_moe.py:1157,1180-1182; models/qwen3_moe_mtp.py:38-47,123-129",
    ),
    sglang_versions=">=0.5.13",
)
