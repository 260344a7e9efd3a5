"""HY633 dspark-inkling-conv-commit-without-slots."""

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
from specguard.rules.spec_params.SP322_inkling_multi_step_draft_without_multi_layer_eagle import (
    INKLING_ARCHITECTURES,
)

# SGLang says (0.5.17 layers/attention/linear/inkling_sconv_backend.py:547-550):
# "Inkling's conv-state commit needs req_pool_indices; the caller must pass the verify batch's request slots."


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "DSPARK"
        or ctx.target is None
        or ctx.target.architecture not in INKLING_ARCHITECTURES
    ):
        return
    yield RULE.finding(
        f"DSPARK on an Inkling target ({ctx.target.architecture}) in SGLang {ctx.version}: after every target "
        "verify the DSpark worker commits the accepted step's short-conv state through Inkling's hybrid backend "
        "without the batch's request slots, and that backend asserts \"Inkling's conv-state commit needs "
        'req_pool_indices", so the server dies at the first verify. 0.5.18 passes the slots; upgrade, or use '
        "another algorithm on 0.5.17",
        flags=("--model-path", "--speculative-algorithm"),
    )


_INKLING_DSPARK = (
    "--model-path",
    "inkling-ai/Inkling",
    "--speculative-algorithm",
    "DSPARK",
    "--speculative-draft-model-path",
    "/ckpt/inkling-dspark",
)

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="HY633",
    category=Category.CRASH,
    name="dspark-inkling-conv-commit-without-slots",
    summary="DSPARK on an Inkling target asserts in the post-verify short-conv commit (0.5.17)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` on a target whose config.json architectures[0] is "
        "InklingForConditionalGeneration or InklingForConditionalGenerationMTP, SGLang 0.5.17.",
        why="0.5.17's DSpark worker commits the target's linear-attention state after each verify "
        "(`_commit_target_mamba_states_after_verify`, speculative/dspark_components/dspark_worker_v2.py:678-683, "
        ":740-785) whenever the target config is mamba-ish and its backend has `update_mamba_state_after_mtp_verify` "
        "(:316-321). An Inkling config always is: `mamba2_config` returns it whenever it has conv cache params "
        "(configs/hybrid_arch.py:81-85), which it always builds (configs/inkling.py:211-251); its backend is "
        "`InklingShortConvHybridAttnBackend` (layers/attention/attention_registry.py:331-346), whose "
        "`update_mamba_state_after_mtp_verify` asserts `req_pool_indices is not None` "
        "(layers/attention/linear/inkling_sconv_backend.py:536-556); the worker's call passes no "
        "`req_pool_indices` (dspark_worker_v2.py:780-785), so the first verify raises AssertionError. 0.5.18 "
        "passes `req_pool_indices=batch.req_pool_indices` (dspark_worker_v2.py:834-840). In 0.5.16 the Inkling "
        "class has no DFLASH/DSpark capture hook, so DSPARK is refused after loading there (DM445).",
        fix="Upgrade to SGLang 0.5.18, or use another speculative algorithm on 0.5.17.",
        fix_safety="No automatic fix: it takes another release or algorithm.",
    ),
    bad=Example(
        argv=_INKLING_DSPARK,
        target={"architectures": ("InklingForConditionalGeneration",)},
        sglang_version="0.5.17",
    ),
    good=Example(
        argv=_INKLING_DSPARK,
        target={"architectures": ("InklingForConditionalGeneration",)},
        sglang_version="0.5.18",
    ),
    sources=(
        "sglang 0.5.16: python/sglang/srt/layers/attention/linear/ (no inkling_sconv_backend.py)",
        "sglang 0.5.16: python/sglang/srt/models/inkling.py (no DFLASH/DSpark capture hook)",
        "sglang 0.5.17: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:316-321,678-683,740-785",
        "sglang 0.5.17: python/sglang/srt/layers/attention/attention_registry.py:331-346",
        "sglang 0.5.17: python/sglang/srt/configs/hybrid_arch.py:81-85; python/sglang/srt/configs/inkling.py:211-251",
        "sglang 0.5.17: python/sglang/srt/layers/attention/linear/inkling_sconv_backend.py:510,536-556",
        "sglang 0.5.18: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:834-840",
    ),
    sglang_versions="==0.5.17",
    log_signatures=(r"Inkling's conv-state commit needs req_pool_indices",),
)
