"""DM441 dflash-mask-token-unresolvable."""

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
from specguard.rules.examples import QWEN3_8B_DFLASH
from specguard.sglang_facts.changes import Change

DRAFT_PATH = "--speculative-draft-model-path"
SKIP_TOKENIZER = "--skip-tokenizer-init"
# parse_dflash_draft_config falls back to the draft config's top-level mask_token_id when dflash_config has none.
TOP_LEVEL_MASK_ID_READ = Change(
    "0.5.18",
    "0.5.18 speculative/dflash_utils.py:598-600 (0.5.17 :509 reads dflash_config only)",
)

# What SGLang raises (speculative/dflash_worker.py _resolve_mask_token_id, dflash_worker_v2.py from 0.5.14):
# "DFLASH mask_token_id is outside the target vocab size. mask_token_id=..., vocab_size=...."
# "DFLASH requires tokenizer initialization when dflash_config.mask_token_id is not set (skip_tokenizer_init is not
# supported in this mode)."


def mask_token_id(draft: ModelFacts, ctx: CheckContext) -> int | None:
    """The mask token id this release's parse_dflash_draft_config takes from the draft's config.json, if any."""
    if draft.dflash_mask_token_id is not None:
        return draft.dflash_mask_token_id
    return (
        draft.mask_token_id if TOP_LEVEL_MASK_ID_READ.present_in(ctx.version) else None
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.draft
    if ctx.algorithm != "DFLASH" or draft is None:
        return
    mask = mask_token_id(draft, ctx)
    vocab = ctx.target.vocab_size if ctx.target is not None else None
    if mask is not None and vocab is not None and mask >= vocab:
        yield RULE.finding(
            f"the DFLASH draft's config.json gives mask_token_id {mask}, but the target's vocab_size is {vocab}: "
            f"SGLang {ctx.version} raises 'DFLASH mask_token_id is outside the target vocab size. "
            f"mask_token_id={mask}, vocab_size={vocab}.' when the DFLASH worker starts, after both models have "
            "loaded (it cannot resize the target's embeddings). Use the DFLASH draft trained for this target's "
            "tokenizer",
            flags=(DRAFT_PATH,),
        )
    elif mask is None and draft.architectures and ctx.spec.has(SKIP_TOKENIZER):
        yield RULE.finding(
            f"{ctx.flag(SKIP_TOKENIZER)} with a DFLASH draft whose config.json gives no mask_token_id: SGLang "
            f"{ctx.version} finds the mask token through the target's tokenizer, which it did not load, and raises "
            "'DFLASH requires tokenizer initialization when dflash_config.mask_token_id is not set' when the DFLASH "
            f"worker starts. Drop {ctx.flag(SKIP_TOKENIZER)}, or give the draft's dflash_config its mask_token_id",
            flags=(SKIP_TOKENIZER, DRAFT_PATH),
        )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM441",
    category=Category.START,
    name="dflash-mask-token-unresolvable",
    summary="A DFLASH draft whose mask token SGLang cannot resolve (id outside the target's vocab, or no id and no tokenizer)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with a draft whose config.json `dflash_config.mask_token_id` (from "
        "0.5.18 also the top-level `mask_token_id` when `dflash_config` has none) is at least the target's "
        "`vocab_size`; or with `--skip-tokenizer-init` and a draft config.json that gives no such id.",
        why="The DFLASH worker resolves the mask token when it starts, after both models have loaded "
        "(`_resolve_mask_token_id`, 0.5.11 `speculative/dflash_worker.py:181-186, 441-518`; 0.5.23 "
        "`speculative/dflash_worker_v2.py:531-536, 1391-1470`). An id from the draft's config is compared with the "
        "target's `model_config.vocab_size`: `ValueError: DFLASH mask_token_id is outside the target vocab size. "
        "mask_token_id=..., vocab_size=.... ... SGLang does not support resizing target embeddings for DFLASH yet.`. "
        "Without an id it looks the draft's `mask_token` up in the target's tokenizer, which `--skip-tokenizer-init` "
        "leaves unset (0.5.11 `managers/tp_worker.py:267-268`, 0.5.23 :326-329): `RuntimeError: DFLASH requires "
        "tokenizer initialization when dflash_config.mask_token_id is not set (skip_tokenizer_init is not supported "
        "in this mode).` (0.5.11 `dflash_worker.py:474-479`, 0.5.23 `dflash_worker_v2.py:1424-1429`). Up to 0.5.17 "
        "`parse_dflash_draft_config` reads only `dflash_config.mask_token_id` (0.5.11 `dflash_utils.py:373`, 0.5.17 "
        ":509); 0.5.18 falls back to the top-level `mask_token_id` (0.5.18 :598-600, 0.5.23 :688-690). Whether a "
        "tokenizer holds the mask token is not judged.",
        fix="Use the DFLASH draft trained for this target; with --skip-tokenizer-init, a draft whose dflash_config "
        "gives its mask_token_id.",
        fix_safety="No fix: the draft checkpoint and the tokenizer mode are the user's choice.",
    ),
    bad=Example(
        argv=QWEN3_8B_DFLASH,
        target={"vocab_size": 128256},
        draft={"dflash_mask_token_id": 151669},
        sglang_version="0.5.11",
    ),
    good=Example(
        argv=QWEN3_8B_DFLASH,
        target={"vocab_size": 151936},
        draft={"dflash_mask_token_id": 151669},
        sglang_version="0.5.11",
    ),
    sources=(
        "sglang 0.5.11: python/sglang/srt/speculative/dflash_worker.py:181-186, 441-518",
        "sglang 0.5.11: python/sglang/srt/speculative/dflash_utils.py:373",
        "sglang 0.5.11: python/sglang/srt/managers/tp_worker.py:267-268",
        "sglang 0.5.17: python/sglang/srt/speculative/dflash_utils.py:509",
        "sglang 0.5.18: python/sglang/srt/speculative/dflash_utils.py:598-600",
        "sglang 0.5.23: python/sglang/srt/speculative/dflash_utils.py:688-690",
        "sglang 0.5.23: python/sglang/srt/speculative/dflash_worker_v2.py:531-536, 1391-1470",
        "sglang 0.5.23: python/sglang/srt/managers/tp_worker.py:326-329",
    ),
    sglang_versions=">=0.5.11",
    log_signatures=(
        r"DFLASH mask_token_id is outside the target vocab size",
        r"DFLASH requires tokenizer initialization when dflash_config\.mask_token_id is not set",
    ),
)
