"""DM178 dspark-without-draft-path."""

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

DRAFT_PATH = "--speculative-draft-model-path"
# 0.5.23 takes a dspark/ subfolder of the target checkpoint (with a config.json) as the draft before it refuses; what
# such a folder holds is known here only for a local checkpoint directory.
DSPARK_SUBFOLDER_DRAFT = Change(
    "0.5.23",
    "0.5.23 arg_groups/speculative_hook.py:622-663,737-755 (0.5.22 :659-680 refuses without it)",
)
TARGET = {"architectures": ("DeepseekV4ForCausalLM",), "dspark_draft_bundled": False}


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DSPARK" or ctx.spec.has(DRAFT_PATH) or ctx.target is None:
        return
    if ctx.target.dspark_draft_bundled is not False:
        return
    subfolder = DSPARK_SUBFOLDER_DRAFT.present_in(ctx.version)
    if subfolder and ctx.target.dspark_subfolder is not False:
        return
    yield RULE.finding(
        f"DSPARK without {ctx.flag(DRAFT_PATH)}, and the target's config.json has none of the dspark_* keys that mark "
        f"a bundled DSpark draft{' (nor has its checkpoint a dspark/ subfolder with a config.json)' if subfolder else ''}: "
        f"SGLang {ctx.version} raises 'DSpark dense speculative decoding requires setting "
        f"--speculative-draft-model-path.' at argument time. Give the DSpark draft with {ctx.flag(DRAFT_PATH)}",
        flags=(DRAFT_PATH,),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM178",
    category=Category.START,
    name="dspark-without-draft-path",
    summary="DSPARK with no draft path on a target that bundles no DSpark draft (nor, from 0.5.23, a dspark/ "
    "subfolder) is refused",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` without `--speculative-draft-model-path`, on a target whose config.json "
        "sets none of `dspark_block_size`, `dspark_markov_rank`, `dspark_noise_token_id`, `dspark_target_layer_ids`; "
        "from 0.5.23, only when the target is a local checkpoint directory without a `dspark/config.json`.",
        why="`_handle_dspark` defaults the draft path to the target only when `checkpoint_bundles_dspark_draft` finds one "
        "of those keys on the target's config (0.5.16 arg_groups/speculative_hook.py:268-273, 308-321; "
        "speculative/dspark_components/dspark_config.py:143-155), and raises a ValueError otherwise (0.5.22 "
        "speculative_hook.py:659-680). 0.5.23 first takes a `dspark/` subfolder of the target checkpoint that holds a "
        "config.json as the draft (speculative_hook.py:622-663, 737-755; fetched from the hub when the path is a "
        "repo id): the rule then fires only for a local checkpoint directory it has looked into, and stays quiet "
        "for a hub id, whose files it does not list. DM005 does not model DSPARK.",
        fix="Pass the DSpark draft checkpoint with `--speculative-draft-model-path`.",
        fix_safety="No automatic fix: the draft checkpoint is the user's to name.",
    ),
    bad=Example(argv=DEEPSEEK_V4_FLASH_DSPARK[:4], target=TARGET, sglang_version="0.5.16"),
    good=Example(argv=DEEPSEEK_V4_FLASH_DSPARK, target=TARGET, sglang_version="0.5.16"),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/speculative/spec_info.py:28-41 (no DSPARK algorithm)",
        "sglang 0.5.16: python/sglang/srt/arg_groups/speculative_hook.py:268-273, 308-321",
        "sglang 0.5.16: python/sglang/srt/speculative/dspark_components/dspark_config.py:143-155",
        "sglang 0.5.22: python/sglang/srt/arg_groups/speculative_hook.py:659-680",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:622-663,720-755 (the dspark/ subfolder)",
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(
        r"DSpark dense speculative decoding requires setting --speculative-draft-model-path",
    ),
)
