"""DM451 dspark-draft-markov-head-type-refused."""

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
from specguard.rules.draft_model.DM413_dspark_draft_without_markov_rank import (
    DSPARK_READS_DFLASH_CONFIG,
)
from specguard.rules.examples import DEEPSEEK_V4_FLASH_DSPARK

DRAFT_PATH = "--speculative-draft-model-path"
# SUPPORTED_DSPARK_MARKOV_HEAD_TYPES, the same in every release with DSPARK (0.5.16 dspark_config.py:17, 0.5.23 :22).
SUPPORTED_HEAD_TYPES = ("vanilla", "gated", "rnn")


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.draft
    if ctx.algorithm != "DSPARK" or draft is None or not ctx.spec.has(DRAFT_PATH):
        return
    if DSPARK_READS_DFLASH_CONFIG.present_in(ctx.version):
        head, rank = draft.dspark_markov_head_type, draft.dspark_markov_rank
    else:
        head, rank = (
            draft.dspark_markov_head_type_without_dflash_config,
            draft.dspark_markov_rank_without_dflash_config,
        )
    if head is not None and head not in SUPPORTED_HEAD_TYPES:
        yield RULE.finding(
            f"the DSPARK draft's config.json gives markov_head_type {head!r}, which SGLang {ctx.version} does not "
            f"build: it raises \"Unsupported DSpark markov_head_type='{head}'. Supported: "
            f"('vanilla', 'gated', 'rnn').\" while the target's model runner starts. Use a DSpark draft with one "
            "of those heads",
            flags=(DRAFT_PATH,),
        )
    elif (
        head is None
        and rank is not None
        and rank > 0
        and draft.dspark_draft_bundled is False
    ):
        yield RULE.finding(
            f"the DSPARK draft's config.json gives markov_rank {rank} but no markov_head_type where SGLang "
            f"{ctx.version} looks for it (dspark_markov_head_type, dspark_config"
            f"{', dflash_config' if DSPARK_READS_DFLASH_CONFIG.present_in(ctx.version) else ''}, the text config or the "
            'top level): it raises "DSpark requires markov_head_type when markov_rank > 0, got None." while the '
            "target's model runner starts. Use the draft's own config.json, which names its head",
            flags=(DRAFT_PATH,),
        )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM451",
    category=Category.START,
    name="dspark-draft-markov-head-type-refused",
    summary="A DSPARK draft with an unknown markov_head_type, or a Markov rank and no head type, fails at start",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` with a `--speculative-draft-model-path` whose config.json gives a "
        "`markov_head_type` other than vanilla, gated or rnn (any case), or a positive `markov_rank` without any "
        "`markov_head_type` and without the prefixed `dspark_*` keys (`dspark_block_size`, `dspark_markov_rank`, "
        "`dspark_noise_token_id`, `dspark_target_layer_ids`). SGLang looks in the top-level "
        "`dspark_markov_head_type`, then `dspark_config` (merged over `dflash_config` from 0.5.23), then the text "
        "config and the top level.",
        why="`parse_dspark_draft_config` raises a ValueError for both (speculative/dspark_components/dspark_config.py: "
        "0.5.16 :226-248, 0.5.23 :253-275; the supported heads at 0.5.16 :17, 0.5.23 :22). For DSPARK the target's "
        "model runner parses the draft's config.json while it sets up the auxiliary hidden-state capture "
        "(model_executor/model_runner_components/spec_aux_hidden_state.py: 0.5.16 :147-154, 0.5.23 :260-267), before "
        "the draft loads; the argument-time read of the draft's gamma (0.5.16 arg_groups/speculative_hook.py:355-362) "
        "catches the same error and only warns. The DSpark section is `dspark_config` alone up to 0.5.22 and "
        "`dflash_config` under `dspark_config` from 0.5.23 (0.5.23 dspark_config.py:206-211), so the rule reads the "
        "head and the rank as each release does (a rank SGLang resolves to 0 is DM413's). 0.5.15.post1 has no DSPARK.",
        fix="Use the DSpark draft's own config.json (its head type is one of vanilla, gated, rnn). No automatic fix.",
        fix_safety="No fix: the draft checkpoint is the user's choice.",
    ),
    bad=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK,
        draft={
            "dspark_markov_rank": 4,
            "dspark_markov_rank_without_dflash_config": 4,
            "dspark_markov_head_type": "mlp",
            "dspark_markov_head_type_without_dflash_config": "mlp",
            "dspark_draft_bundled": False,
        },
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK,
        draft={
            "dspark_markov_rank": 4,
            "dspark_markov_rank_without_dflash_config": 4,
            "dspark_markov_head_type": "gated",
            "dspark_markov_head_type_without_dflash_config": "gated",
            "dspark_draft_bundled": False,
        },
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/speculative/spec_info.py:28-41 (no DSPARK algorithm)",
        "sglang 0.5.16: python/sglang/srt/speculative/dspark_components/dspark_config.py:17,175-185,226-248",
        "sglang 0.5.16: python/sglang/srt/model_executor/model_runner_components/spec_aux_hidden_state.py:147-154",
        "sglang 0.5.16: python/sglang/srt/arg_groups/speculative_hook.py:355-362 (the argument-time read only warns)",
        "sglang 0.5.22: python/sglang/srt/speculative/dspark_components/dspark_config.py:196-205 (dspark_config only)",
        "sglang 0.5.23: python/sglang/srt/speculative/dspark_components/dspark_config.py:22,206-211,253-275",
        "sglang 0.5.23: python/sglang/srt/model_executor/model_runner_components/spec_aux_hidden_state.py:260-267",
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(
        r"Unsupported DSpark markov_head_type='[^']*'\. Supported: \('vanilla', 'gated', 'rnn'\)",
        r"DSpark requires markov_head_type when markov_rank > 0, got None",
    ),
)
