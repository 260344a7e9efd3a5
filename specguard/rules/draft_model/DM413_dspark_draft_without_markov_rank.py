"""DM413 dspark-draft-without-markov-rank."""

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
from specguard.rules.examples import DEEPSEEK_V4_FLASH_DSPARK
from specguard.sglang_facts.changes import Change

# 0.5.23 merges dflash_config under dspark_config before reading the DSpark fields ("Published DSpark drafts nest
# their fields under dflash_config"); 0.5.16-0.5.22 read dspark_config alone, then the text config and top level.
DSPARK_READS_DFLASH_CONFIG = Change(
    "0.5.23",
    "0.5.23 speculative/dspark_components/dspark_config.py:206-211 (0.5.22 :196-205 reads dspark_config only)",
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "DSPARK"
        or ctx.draft is None
        or ctx.spec.get("speculative_draft_model_path") is None
    ):
        return
    reads_dflash_config = DSPARK_READS_DFLASH_CONFIG.present_in(ctx.version)
    rank = (
        ctx.draft.dspark_markov_rank
        if reads_dflash_config
        else ctx.draft.dspark_markov_rank_without_dflash_config
    )
    if rank != 0:
        return
    where = "dspark_markov_rank, dspark_config, dflash_config or the top level"
    advice = "Use a DSpark draft checkpoint (its config sets a positive markov_rank)"
    if not reads_dflash_config:
        where = "dspark_markov_rank, dspark_config or the top level"
        if ctx.draft.dspark_markov_rank:
            advice = (
                f"Its markov_rank ({ctx.draft.dspark_markov_rank}) sits in dflash_config, which SGLang reads for DSpark "
                f"only from {DSPARK_READS_DFLASH_CONFIG.first_release}: upgrade, or repeat its DSpark fields (markov_rank, markov_head_type) in a dspark_config"
            )
    yield RULE.finding(
        f"the DSPARK draft's config.json gives no markov_rank ({where}), so SGLang {ctx.version} resolves it to 0 and "
        "refuses it while the target's model runner starts, before the draft loads (\"DSPARK requires markov_rank > 0 "
        f'in the draft config, got markov_rank=0."). {advice}',
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM413",
    category=Category.START,
    name="dspark-draft-without-markov-rank",
    summary="A DSPARK draft whose config.json resolves markov_rank to 0 fails at start (dflash_config counts from 0.5.23)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` with a `--speculative-draft-model-path` whose config.json gives "
        "`markov_rank` 0 or none where SGLang looks: the top-level `dspark_markov_rank`, then `dspark_config` "
        "(merged over `dflash_config` from 0.5.23), then the text config's or the top-level `markov_rank`.",
        why="For DSPARK the target's model runner reads the draft's config.json while it sets up the auxiliary "
        'hidden-state capture and raises `ValueError("DSPARK requires markov_rank > 0 in the draft config, got '
        'markov_rank=0.")` when `parse_dspark_draft_config` resolves the rank to 0 '
        "(model_executor/model_runner_components/spec_aux_hidden_state.py: 0.5.16 :147-159, 0.5.22 :207-219, "
        "0.5.23 :262-272); the draft classes (models/dspark.py DSparkDraftMixin: 0.5.16 :363-370, 0.5.23 :524-529) "
        "and `resolve_runtime_config` (speculative/dspark_components/dspark_config.py 0.5.16 :83-88, 0.5.23 :93-98) "
        "repeat the check. The rank defaults to 0 when no key states it (dspark_config.py 0.5.16 :212-222; 0.5.23 "
        ":239-249). Up to 0.5.22 the DSpark section is `dspark_config` alone (0.5.22 :196-205), so a published draft "
        "that keeps its `markov_rank` under `dflash_config` is refused; 0.5.23 merges `dflash_config` under it "
        "(:206-211), so these checks pass there (the generic Markov head builder, models/dspark.py:385-391, still "
        "reads a top-level `markov_rank`, which this rule does not judge).",
        fix="Use a DSpark draft checkpoint with a positive `markov_rank`; on 0.5.16-0.5.22 with the rank under "
        "`dflash_config`, upgrade to 0.5.23 (or add a `dspark_config` that repeats its `markov_rank` and `markov_head_type`). No automatic fix.",
        fix_safety="No fix: the release and the draft checkpoint are the user's choice.",
    ),
    bad=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK,
        draft={"dspark_markov_rank": 4, "dspark_markov_rank_without_dflash_config": 0},
        sglang_version="0.5.22",
    ),
    good=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK,
        draft={"dspark_markov_rank": 4, "dspark_markov_rank_without_dflash_config": 0},
        sglang_version="0.5.23",
    ),
    sources=(
        "sglang 0.5.16: python/sglang/srt/speculative/dspark_components/dspark_config.py:83-88,175-185,212-222",
        "sglang 0.5.16: python/sglang/srt/model_executor/model_runner_components/spec_aux_hidden_state.py:147-159",
        "sglang 0.5.16: python/sglang/srt/models/dspark.py:363-370",
        "sglang 0.5.16: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:110-116",
        "sglang 0.5.22: python/sglang/srt/speculative/dspark_components/dspark_config.py:93-98,196-205,233-243",
        "sglang 0.5.23: python/sglang/srt/speculative/dspark_components/dspark_config.py:93-98,206-211,239-249",
        "sglang 0.5.22: python/sglang/srt/model_executor/model_runner_components/spec_aux_hidden_state.py:207-219",
        "sglang 0.5.23: python/sglang/srt/model_executor/model_runner_components/spec_aux_hidden_state.py:262-272",
        "sglang 0.5.23: python/sglang/srt/models/dspark.py:524-529",
        "sglang 0.5.23: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:261-265",
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(
        r"DSPARK requires markov_rank > 0 in the draft config, got markov_rank=0",
    ),
)
