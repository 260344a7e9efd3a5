"""DM450 dspark-mask-token-outside-target-vocab."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from specguard.models import Category, Finding, ModelFacts, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import DEEPSEEK_V4_FLASH_DSPARK
from specguard.sglang_facts.changes import Change

DRAFT_PATH = "--speculative-draft-model-path"
# 0.5.18 bounds the mask token (input-only: embedded, never sampled) by the target's embedding rows, its text config's
# padded_vocab_size when it declares one; 0.5.16-0.5.17 by its vocab_size.
MASK_BOUND_IS_PADDED_VOCAB = Change(
    "0.5.18",
    "0.5.18 speculative/dspark_components/dspark_worker_v2.py:134-151 (0.5.17 :127-133 passes vocab_size)",
)


def embedding_rows(target: ModelFacts, version: Version) -> tuple[int | None, str]:
    """The bound SGLang checks the draft's mask token against, and the key it comes from."""
    if (
        MASK_BOUND_IS_PADDED_VOCAB.present_in(version)
        and target.padded_vocab_size is not None
    ):
        return target.padded_vocab_size, "padded_vocab_size"
    return target.vocab_size, "vocab_size"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "DSPARK"
        or ctx.draft is None
        or ctx.target is None
        or not ctx.spec.has(DRAFT_PATH)
    ):
        return
    mask = ctx.draft.dspark_mask_token_id
    rows, key = embedding_rows(ctx.target, ctx.version)
    if mask is None or rows is None or mask < rows:
        return
    yield RULE.finding(
        f"the DSPARK draft's mask token id is {mask}, but the target's config.json {key} is {rows}: the draft was "
        f"trained for another tokenizer, and SGLang {ctx.version} refuses it when the DSpark worker starts, after both "
        f'models load ("DSpark mask_token_id={mask} is outside the target vocab size {rows}."). Use the DSpark draft '
        "trained for this target",
        flags=(DRAFT_PATH,),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM450",
    category=Category.START,
    name="dspark-mask-token-outside-target-vocab",
    summary="A DSPARK draft whose mask token id is not below the target's vocab (padded vocab from 0.5.18) is refused",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` with a `--speculative-draft-model-path` whose config.json mask token id "
        "(the top-level `dspark_noise_token_id`, else `dspark_config.mask_token_id`, else the text config's, top-level "
        "or `dflash_config`'s `mask_token_id`) is at least the target's `vocab_size`, or from 0.5.18 its "
        "`padded_vocab_size` when the target's config.json declares one.",
        why="The DSpark worker resolves its runtime config after both models load and raises "
        '`ValueError("DSpark mask_token_id=... is outside the target vocab size ...")` when the draft\'s mask token '
        "id is not below the bound it passes (speculative/dspark_components/dspark_config.py: 0.5.16 :109-118, 0.5.23 "
        ":119-128; the id is read by parse_dspark_draft_config, 0.5.16 :250-262, 0.5.23 :277-289). 0.5.16-0.5.17 pass "
        "the target's vocab_size (dspark_worker_v2.py 0.5.16 :110-116, 0.5.17 :127-133); 0.5.18 passes the text "
        "config's padded_vocab_size when set, else vocab_size (0.5.18 :134-151, 0.5.23 :251-265), since the mask "
        "token is only embedded. 0.5.15.post1 has no DSPARK. A draft without any mask token id fails the same "
        'function ("DSpark requires mask_token_id to be set"), which this rule does not judge; nor does it model '
        "config classes that rewrite the vocab (Inkling's unpadded_vocab_size): it then stays quiet.",
        fix="Use the DSpark draft trained for this target's tokenizer. No automatic fix.",
        fix_safety="No fix: the draft checkpoint is the user's choice.",
    ),
    bad=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK,
        target={"vocab_size": 129280},
        draft={"dspark_mask_token_id": 151669},
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK,
        target={"vocab_size": 129280},
        draft={"dspark_mask_token_id": 128815},
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/speculative/spec_info.py:28-41 (no DSPARK algorithm)",
        "sglang 0.5.16: python/sglang/srt/speculative/dspark_components/dspark_config.py:109-118,250-262",
        "sglang 0.5.16: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:110-116",
        "sglang 0.5.17: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:127-133 (vocab_size)",
        "sglang 0.5.18: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:134-151 (padded_vocab_size)",
        "sglang 0.5.23: python/sglang/srt/speculative/dspark_components/dspark_config.py:119-128,277-289",
        "sglang 0.5.23: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:251-265",
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(r"DSpark mask_token_id=\d+ is outside the target vocab size \d+",),
)
