"""DM412 dspark-minimax-draft-refused."""

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
from specguard.sglang_facts.changes import Change

MINIMAX_DSPARK_DRAFT = "DSparkMiniMaxDraftModel"
# 0.5.23 registers the MiniMax-M3.1 DSpark draft class and translates its checkpoint config, refusing one without
# the dense draft FFN; 0.5.16-0.5.22 have no such class and fail to resolve the draft's architecture.
MINIMAX_DSPARK_DRAFT_CLASS = Change(
    "0.5.23",
    "0.5.23 models/dspark_minimax.py:175, 326 EntryClass; configs/model_config.py:1020-1027 configure_minimax_m3_dspark "
    "(0.5.22 has no models/dspark_minimax.py)",
)

LAUNCH = (
    "--model-path", "/models/minimax-m3.1", "--speculative-algorithm", "DSPARK",
    "--speculative-draft-model-path", "/ckpt/minimax-m3.1-dspark",
)  # fmt: skip


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "DSPARK"
        or ctx.draft is None
        or ctx.draft.architecture != MINIMAX_DSPARK_DRAFT
    ):
        return
    if not MINIMAX_DSPARK_DRAFT_CLASS.present_in(ctx.version):
        yield RULE.finding(
            f"the DSPARK draft's architectures say {MINIMAX_DSPARK_DRAFT}, a class SGLang {ctx.version} does not have "
            f"(it arrives in {MINIMAX_DSPARK_DRAFT_CLASS.first_release}) and whose config it does not translate: the "
            "launch fails at start, at the latest when the draft worker resolves the class (\"Cannot find model module. 'DSparkMiniMaxDraftModel' is not a registered model in the "
            f'Transformers library"). Use SGLang {MINIMAX_DSPARK_DRAFT_CLASS.first_release} or later for this draft',
            flags=("--speculative-draft-model-path",),
        )
        return
    if ctx.draft.dspark_use_dense_ffn is not False:
        return
    yield RULE.finding(
        f"the {MINIMAX_DSPARK_DRAFT} draft's config.json sets no dspark_config.use_dense_ffn (nor dspark_use_dense_ffn): "
        f"SGLang {ctx.version} translates the MiniMax-M3.1 draft config whenever it builds the draft's model config at "
        "start (first while the target's model runner starts) and raises \"M3.1 DSpark requires the dense draft FFN "
        'checkpoint". Use the dense-FFN draft checkpoint, whose config sets it',
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM412",
    category=Category.START,
    name="dspark-minimax-draft-refused",
    summary="A DSparkMiniMaxDraftModel DSPARK draft fails before 0.5.23, and from 0.5.23 without its dense FFN",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` with a draft whose config.json `architectures` is "
        "`DSparkMiniMaxDraftModel` (a MiniMax-M3.1 DSpark draft): on 0.5.16-0.5.22 always; on 0.5.23 when neither "
        "`dspark_config.use_dense_ffn` nor `dspark_use_dense_ffn` is true.",
        why="0.5.23 added the class (models/dspark_minimax.py:175, EntryClass :326): for DSPARK the draft's "
        "ModelConfig passes its config through `configure_minimax_m3_dspark` (configs/model_config.py:1020-1027), "
        'which copies the top-level `dspark_*` keys onto the text config and raises `ValueError("M3.1 DSpark requires '
        'the dense draft FFN checkpoint")` unless `dspark_config.use_dense_ffn` (else `dspark_use_dense_ffn`, default '
        "false) is set (configs/minimax_vl.py:63-74); the same translation runs in "
        "`read_draft_checkpoint_config` (speculative/dspark_components/dspark_config.py:155-158). 0.5.22 has neither "
        "the class nor the translation (dspark_config.py:155 parses the raw config): the architecture is not native, "
        "so `get_model_architecture` falls back to Transformers, which does not know it either and raises "
        "(model_loader/utils.py:154-168; 0.5.16 :151-165, the first release with DSPARK).",
        fix="On 0.5.16-0.5.22, upgrade to 0.5.23 or later; on 0.5.23, use the dense-FFN draft checkpoint. No "
        "automatic fix.",
        fix_safety="No fix: the release and the draft checkpoint are the user's choice.",
    ),
    bad=Example(
        argv=LAUNCH,
        draft={"architectures": (MINIMAX_DSPARK_DRAFT,), "dspark_use_dense_ffn": False},
        sglang_version="0.5.23",
    ),
    good=Example(
        argv=LAUNCH,
        draft={"architectures": (MINIMAX_DSPARK_DRAFT,), "dspark_use_dense_ffn": True},
        sglang_version="0.5.23",
    ),
    sources=(
        "sglang 0.5.16: python/sglang/srt/model_loader/utils.py:151-165 (no such class; the Transformers fallback raises)",
        "sglang 0.5.22: python/sglang/srt/speculative/dspark_components/dspark_config.py:155 (no MiniMax translation)",
        "sglang 0.5.22: python/sglang/srt/model_loader/utils.py:154-168",
        "sglang 0.5.23: python/sglang/srt/models/dspark_minimax.py:175,326",
        "sglang 0.5.23: python/sglang/srt/configs/model_config.py:1020-1027",
        "sglang 0.5.23: python/sglang/srt/configs/minimax_vl.py:63-74 (use_dense_ffn required)",
        "sglang 0.5.23: python/sglang/srt/speculative/dspark_components/dspark_config.py:155-158",
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(
        r"Cannot find model module\. 'DSparkMiniMaxDraftModel' is not a registered model in the Transformers library",
        r"M3\.1 DSpark requires the dense draft FFN checkpoint",
    ),
)
