"""DM345 lilicorr-draft-refused."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import QWEN3_8B_DFLASH

LILICORR_DRAFT = "LiLiCorrDraftModel"
# sglang/kernels/ops/speculative/lilicorr.py:18 (0.5.21 to 0.5.23): one Triton lane group.
MAX_FUSED_CANDIDATE_TOPK = 16
# parse_lilicorr_draft_config's fields after candidate_topk, in the order it reads them: (key, cast, must be > 0).
GEOMETRY: tuple[tuple[str, Callable[[Any], Any], bool], ...] = (
    ("hidden_size", int, False),
    ("num_layers", int, True),
    ("num_heads", int, True),
    ("mlp_ratio", float, True),
    ("factor_dim", int, True),
    ("vector_eps", float, True),
    ("logit_scale", float, True),
)

FIELDS = {
    "lilicorr_candidate_topk": 8,
    "lilicorr_hidden_size": 0,
    "lilicorr_num_layers": 2,
    "lilicorr_num_heads": 8,
    "lilicorr_mlp_ratio": 4.0,
    "lilicorr_factor_dim": 64,
    "lilicorr_vector_eps": 1e-6,
    "lilicorr_logit_scale": 1.0,
}
DRAFT = {"architectures": (LILICORR_DRAFT,), "lilicorr_fields": FIELDS}


def _field(
    fields: dict[str, Any], key: str, cast: Callable[[Any], Any], positive: bool
) -> tuple[Any, str | None]:
    """(the cast value, None) or (None, the ValueError SGLang's ``required`` raises)."""
    full_key = f"lilicorr_{key}"
    if full_key not in fields:
        return (
            None,
            f"DFLASH dflash_config.{full_key} is required to rebuild the LiLiCorr head, and the checkpoint does not carry it.",
        )
    try:
        value = cast(fields[full_key])
    except (TypeError, ValueError, OverflowError):
        return None, f"Invalid dflash_config.{full_key}={fields[full_key]!r}."
    if positive and value <= 0:
        return None, f"dflash_config.{full_key} must be positive, got {value}."
    return value, None


def geometry_refusal(fields: dict[str, Any]) -> str | None:
    """The ValueError parse_lilicorr_draft_config raises for these dflash_config lilicorr_* fields, or None."""
    enabled = fields.get("lilicorr_enabled")
    if not fields or (enabled is not None and not bool(enabled)):
        return (
            "LiLiCorr requires the lilicorr_* geometry fields in dflash_config; a checkpoint declaring "
            'architectures=["LiLiCorrDraftModel"] without them cannot be rebuilt.'
        )
    topk, refusal = _field(fields, "candidate_topk", int, True)
    if refusal is not None:
        return refusal
    if topk & (topk - 1):
        return f"dflash_config.lilicorr_candidate_topk must be a power of two, got {topk}: tl.arange requires a power-of-two extent."
    if topk > MAX_FUSED_CANDIDATE_TOPK:
        return (
            f"dflash_config.lilicorr_candidate_topk={topk} exceeds the fused greedy commit's width of "
            f"{MAX_FUSED_CANDIDATE_TOPK}, one Triton lane group; a wider head would serve on the reference path."
        )
    for key, cast, positive in GEOMETRY:
        if (refusal := _field(fields, key, cast, positive)[1]) is not None:
            return refusal
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.draft
    if (
        ctx.algorithm != "DFLASH"
        or draft is None
        or draft.architecture != LILICORR_DRAFT
    ):
        return
    if (
        draft.lilicorr_fields is not None
        and (refusal := geometry_refusal(draft.lilicorr_fields)) is not None
    ):
        yield RULE.finding(
            f"SGLang {ctx.version} cannot build this LiLiCorr draft from its config.json: building it raises "
            f"'{refusal}' after the target has loaded. Fix the draft's dflash_config lilicorr_* fields (they must "
            "describe the checkpoint's LiLiCorr head)",
            flags=("--speculative-draft-model-path",),
        )
        return
    if ctx.spec.env_flag("SGLANG_LILICORR_REQUIRE_SAMPLING") and not ctx.spec.env_flag(
        "SGLANG_ENABLE_LILICORR_SAMPLING"
    ):
        yield RULE.finding(
            "SGLANG_LILICORR_REQUIRE_SAMPLING is set without SGLANG_ENABLE_LILICORR_SAMPLING: with this LiLiCorr draft "
            f"SGLang {ctx.version}'s DFLASH worker raises 'SGLANG_LILICORR_REQUIRE_SAMPLING is set but "
            "SGLANG_ENABLE_LILICORR_SAMPLING is not; this process would serve the greedy commit under a sampled arm's "
            "name.' at start-up. Set SGLANG_ENABLE_LILICORR_SAMPLING=1 for the sampled commit, or unset "
            "SGLANG_LILICORR_REQUIRE_SAMPLING",
            flags=(),
        )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM345",
    category=Category.START,
    name="lilicorr-draft-refused",
    summary="A LiLiCorr DFLASH draft whose lilicorr_* geometry or sampling env vars SGLang refuses at start (0.5.21+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with a draft of architecture `LiLiCorrDraftModel` (new in 0.5.21) whose "
        "`dflash_config` lacks the `lilicorr_*` fields or sets `lilicorr_enabled` false, lacks one of "
        "`lilicorr_candidate_topk`/`hidden_size`/`num_layers`/`num_heads`/`mlp_ratio`/`factor_dim`/`vector_eps`/"
        "`logit_scale`, gives one that does not cast or is not positive (`hidden_size` may be 0), or a "
        "`candidate_topk` that is not a power of two or exceeds 16; or `SGLANG_LILICORR_REQUIRE_SAMPLING` set without "
        "`SGLANG_ENABLE_LILICORR_SAMPLING`.",
        why="`LiLiCorrDraftModel.__init__` builds its head from `parse_lilicorr_draft_config` (0.5.21 "
        "`models/lilicorr.py:437-445`), which raises `LiLiCorr requires the lilicorr_* geometry fields in "
        "dflash_config`, `DFLASH dflash_config.lilicorr_candidate_topk is required to rebuild the LiLiCorr head`, "
        "`Invalid dflash_config.lilicorr_num_heads=...`, `dflash_config.lilicorr_num_layers must be positive, got 0.`, "
        "`dflash_config.lilicorr_candidate_topk must be a power of two` or `dflash_config.lilicorr_candidate_topk=32 "
        "exceeds the fused greedy commit's width of 16` (0.5.21 `speculative/lilicorr_utils.py:46-104`; 0.5.23 "
        ":47-105, the same checks; `MAX_FUSED_CANDIDATE_TOPK = 16` in `sglang/kernels/ops/speculative/lilicorr.py:18`). "
        "The DFLASH worker then calls `resolve_sampling_enabled`, which raises `SGLANG_LILICORR_REQUIRE_SAMPLING is "
        "set but SGLANG_ENABLE_LILICORR_SAMPLING is not` (0.5.21 `lilicorr_utils.py:20-29`, "
        "`speculative/dflash_worker_v2.py:436-440`; 0.5.23 :21-30 and :447-449; both variables new in 0.5.21 "
        "`environ.py:1381-1382`). All of it happens while the server starts, after the target has loaded.",
        fix="Give the draft's dflash_config the lilicorr_* fields of its head; set SGLANG_ENABLE_LILICORR_SAMPLING=1 "
        "with SGLANG_LILICORR_REQUIRE_SAMPLING, or drop the latter.",
        fix_safety="No automatic fix: the draft's config.json is not a launch flag, and sampled or greedy commits "
        "are the user's choice.",
    ),
    bad=Example(
        argv=QWEN3_8B_DFLASH,
        draft={**DRAFT, "lilicorr_fields": {**FIELDS, "lilicorr_candidate_topk": 12}},
        sglang_version="0.5.21",
    ),
    good=Example(argv=QWEN3_8B_DFLASH, draft=DRAFT, sglang_version="0.5.21"),
    sources=(
        "sglang 0.5.21: python/sglang/srt/models/lilicorr.py:437-445",
        "sglang 0.5.21: python/sglang/srt/speculative/lilicorr_utils.py:20-29, 46-104",
        "sglang 0.5.21: python/sglang/srt/speculative/dflash_worker_v2.py:436-440",
        "sglang 0.5.21: python/sglang/srt/environ.py:1381-1382",
        "sglang 0.5.21: python/sglang/kernels/ops/speculative/lilicorr.py:18",
        "sglang 0.5.23: python/sglang/srt/speculative/lilicorr_utils.py:21-30, 47-105",
        "sglang 0.5.23: python/sglang/srt/speculative/dflash_worker_v2.py:447-449",
    ),
    sglang_versions=">=0.5.21",
    log_signatures=(
        r"LiLiCorr requires the lilicorr_\* geometry fields in dflash_config",
        r"DFLASH dflash_config\.lilicorr_\w+ is required to rebuild the LiLiCorr head",
        r"Invalid dflash_config\.lilicorr_\w+=",
        r"dflash_config\.lilicorr_\w+ must be positive, got",
        r"dflash_config\.lilicorr_candidate_topk must be a power of two",
        r"dflash_config\.lilicorr_candidate_topk=\d+ exceeds the fused greedy commit's width",
        r"SGLANG_LILICORR_REQUIRE_SAMPLING is set but SGLANG_ENABLE_LILICORR_SAMPLING is not",
    ),
)
