"""DM140 dflash-target-layer-ids-without-target-count."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import QWEN3_8B_DFLASH

DRAFT = {"architectures": ("DFlashDraftModel",), "num_hidden_layers": 5, "dflash_target_layer_ids": (1, 9, 17, 25, 33)}


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.draft
    if ctx.algorithm != "DFLASH" or draft is None or not draft.dflash_target_layer_ids:
        return
    if draft.dflash_num_target_layers is not None or draft.num_hidden_layers is None:
        return
    ids = draft.dflash_target_layer_ids
    out_of_range = [(i, layer) for i, layer in enumerate(ids) if layer >= draft.num_hidden_layers]
    if not out_of_range:
        return
    index, layer = out_of_range[0]
    target_layers = f" (the target has {ctx.target.num_hidden_layers})" if ctx.target and ctx.target.num_hidden_layers else ""
    yield RULE.finding(
        f"The DFLASH draft's config.json gives target_layer_ids {list(ids)} but no num_target_layers, and SGLang "
        f"{ctx.version} then takes the target's layer count to be the draft's own {draft.num_hidden_layers}: building "
        f"the draft raises 'DFLASH target_layer_ids contains an out-of-range layer id. target_layer_ids[{index}]={layer}, "
        f"target_num_layers={draft.num_hidden_layers}.' Add num_target_layers{target_layers} to the draft's config.json "
        "or use 0.5.18+",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    check=check,
    code="DM140",
    category=Category.START,
    name="dflash-target-layer-ids-without-target-count",
    summary="DFLASH draft with target_layer_ids but no num_target_layers fails to build in 0.5.11-0.5.17",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with a draft config.json that sets `target_layer_ids` "
        "(in `dflash_config` or at the top level) but not `num_target_layers`, where a listed id is at or above the "
        "draft's own `num_hidden_layers`, SGLang 0.5.11 to 0.5.17.",
        why="Up to 0.5.17 `DFlashDraftModel.__init__` falls back to the draft's layer count when the config has no "
        "`num_target_layers` (0.5.17 models/dflash.py:361-368; 0.5.11 :276-284), and "
        "`resolve_target_layer_ids` refuses any id at or above that count with a ValueError (0.5.17 "
        "speculative/dflash_utils.py:440-445), so the draft fails to build at start-up. 0.5.18 takes "
        "max(target_layer_ids) + 1 instead (models/dflash.py:390-396).",
        fix="Add `num_target_layers` (the target's layer count) to the draft's config.json, or upgrade to 0.5.18.",
        fix_safety="No automatic fix: the draft's config.json is not a launch flag.",
    ),
    bad=Example(argv=QWEN3_8B_DFLASH, draft=DRAFT, sglang_version="0.5.17"),
    good=Example(argv=QWEN3_8B_DFLASH, draft=DRAFT, sglang_version="0.5.18"),
    sources=(
        "sglang 0.5.11: python/sglang/srt/models/dflash.py:276-284",
        "sglang 0.5.17: python/sglang/srt/models/dflash.py:361-368",
        "sglang 0.5.17: python/sglang/srt/speculative/dflash_utils.py:440-445",
        "sglang 0.5.18: python/sglang/srt/models/dflash.py:390-396",
    ),
    sglang_versions=">=0.5.11,<0.5.18",
    log_signatures=(r"DFLASH target_layer_ids contains an out-of-range layer id",),
)
