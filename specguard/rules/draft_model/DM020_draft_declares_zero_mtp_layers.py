"""DM020 draft-declares-zero-mtp-layers."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.sglang_facts.algorithms import EAGLE_HEAD_ALGORITHMS


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_HEAD_ALGORITHMS or ctx.draft is None:
        return
    if ctx.spec.get("speculative_draft_model_path") is None or ctx.draft.num_nextn_predict_layers != 0:
        return
    draft = ctx.flag("--speculative-draft-model-path")
    yield RULE.finding(
        f"the draft's config.json declares num_nextn_predict_layers: 0. SGLang {ctx.version} treats any value of "
        "that key as an MTP checkpoint and sizes the draft's KV pool by it, so the pool has 0 layers and the first "
        "draft forward fails with 'IndexError: list index out of range' (set_mla_kv_buffer), after both models "
        f"load. Remove the key from the draft's config.json, or run SGLang 0.5.13 or later ({draft})",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    check=check,
    code="DM020",
    category=Category.CRASH,
    name="draft-declares-zero-mtp-layers",
    summary="A separate draft whose config.json says num_nextn_predict_layers: 0 gets a zero-layer KV pool (before 0.5.13)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="EAGLE or EAGLE3 with `--speculative-draft-model-path`, whose draft config.json (or text_config) carries "
        "`num_nextn_predict_layers: 0`, in SGLang before 0.5.13.",
        why="ModelRunner takes a draft with `num_nextn_predict_layers` set to be an MTP module and uses that number "
        "as its layer count (0.5.5 `model_runner.py:418-425`, 0.5.12 `model_runner.py:682-690`): `is not None` is "
        "the only test, so 0 sizes the draft KV pool to zero layers. EAGLE3 heads that copy the full DeepSeek-V3 "
        "config schema (nvidia/Kimi-K2.5-Thinking-Eagle3) set the key to 0 and crash on the first draft forward. "
        "PR 26726 (first in 0.5.13, `model_runner.py:709-722`) treats 0 as absent.",
        fix="Delete `num_nextn_predict_layers` from the draft's config.json, or upgrade to 0.5.13+.",
        fix_safety="No fix: it is the draft checkpoint's config.",
    ),
    bad=Example(
        argv=("--model-path", "nvidia/Kimi-K2.5-NVFP4", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "nvidia/Kimi-K2.5-Thinking-Eagle3"),
        draft={"num_nextn_predict_layers": 0},
        sglang_version="0.5.12",
    ),
    good=Example(
        argv=("--model-path", "nvidia/Kimi-K2.5-NVFP4", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "nvidia/Kimi-K2.5-Thinking-Eagle3"),
        draft={"num_nextn_predict_layers": 0},
        sglang_version="0.5.13",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/pull/26726",
        "sglang 0.5.5: python/sglang/srt/model_executor/model_runner.py:416-425",
        "sglang 0.5.12: python/sglang/srt/model_executor/model_runner.py:679-690",
        "sglang 0.5.13: python/sglang/srt/model_executor/model_runner.py:709-722",
    ),
    sglang_versions="<0.5.13",
)
