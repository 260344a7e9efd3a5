"""DM645 iquest-q1-mtp-draft-foreign-tensor-names."""

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
from specguard.rules.draft_model.DM321_iquest_q1_speculation_constraints import (
    IQUEST_Q1,
)

# The config class SGLang builds for this model_type forces architectures ["IQuestQ1MTP"]
# (0.5.21 configs/iquest_q1.py:166-197), whatever the draft's config.json lists.
IQUEST_Q1_MTP_TYPE = "iquest_q1_mtp"
# IQuestQ1MTP.load_weights takes embed_tokens.weight, lm_head.weight, target_final_norm.weight and
# mtp.*, and raises on any other name (0.5.21 models/iquest_q1_mtp.py:187-200). By their first dotted
# part: a tensor under any other root is certainly refused.
ACCEPTED_ROOTS = frozenset({"embed_tokens", "lm_head", "target_final_norm", "mtp"})
# The draft loads with --speculative-draft-load-format, else --load-format (0.5.21
# model_executor/model_runner.py:1447-1458); the dummy loader fills random weights and never calls
# load_weights (model_loader/loader.py:1628-1668), so no tensor name is ever checked.
DRAFT_LOAD_FORMATS = ("--speculative-draft-load-format", "--load-format")
DUMMY = "dummy"
# SGLang refuses IQuest Q1 with another algorithm or multi-layer EAGLE before any draft loads (0.5.21
# arg_groups/model_overrides/iquest_q1.py:23-25,34-35; DM321 reports it).
MULTI_LAYER_EAGLE = "--enable-multi-layer-eagle"


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.draft
    if (
        ctx.algorithm != "EAGLE"
        or ctx.spec.has(MULTI_LAYER_EAGLE)
        or draft is None
        or draft.model_type != IQUEST_Q1_MTP_TYPE
        or draft.weights is None
        or _draft_load_format(ctx) == DUMMY
    ):
        return
    foreign = [root for root in draft.weights.name_roots if root not in ACCEPTED_ROOTS]
    if not foreign:
        return
    shown = ", ".join(f"'{root}.*'" for root in foreign)
    yield RULE.finding(
        f"the IQuest Q1 MTP draft's safetensors hold tensors under {shown}: SGLang {ctx.version}'s IQuestQ1MTP "
        "loader takes only embed_tokens.weight, lm_head.weight, target_final_norm.weight and mtp.*, so loading "
        'the draft fails with "ValueError: Unexpected MTP weight: <name>" after the target has loaded. Point '
        f"{ctx.flag('--speculative-draft-model-path')} at the MTP checkpoint as IQuest exports it (its tensors "
        "named without a 'model.' prefix)",
        flags=("--speculative-draft-model-path",),
    )


def _draft_load_format(ctx: CheckContext) -> str | None:
    return next(
        (
            value
            for flag in DRAFT_LOAD_FORMATS
            if (value := ctx.spec.last_value(flag)) is not None
        ),
        None,
    )


IQUEST_Q1_EAGLE = (
    "--model-path",
    "./IQuest-Q1",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-draft-model-path",
    "./IQuest-Q1-MTP",
)
MTP_ROOTS = ("embed_tokens", "lm_head", "mtp", "target_final_norm")


def _mtp_draft(*roots: str) -> dict[str, object]:
    return {
        "model_type": IQUEST_Q1_MTP_TYPE,
        "weights": {"source": "example", "tensor_count": 40, "name_roots": roots},
    }


RULE = Rule(
    check=check,
    code="DM645",
    category=Category.START,
    name="iquest-q1-mtp-draft-foreign-tensor-names",
    summary="An IQuest Q1 MTP draft with a tensor outside embed_tokens, lm_head, target_final_norm and mtp.* fails to load (0.5.21+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="An EAGLE/NEXTN launch (not multi-layer EAGLE, which SGLang refuses first) whose draft's config.json has `model_type: iquest_q1_mtp` and whose safetensors "
        "headers (read with the weights) hold a tensor whose name begins with anything other than `embed_tokens`, "
        "`lm_head`, `target_final_norm` or `mtp` (for example a `model.`-prefixed export), SGLang 0.5.21 or later, unless the draft loads with the "
        "`dummy` format.",
        why="0.5.21 adds the IQuest Q1 MTP draft: `IQuestQ1MTPConfig` (model_type `iquest_q1_mtp`) forces "
        "`architectures=['IQuestQ1MTP']` (configs/iquest_q1.py:166-197), and `IQuestQ1MTP.load_weights` skips "
        "`target_final_norm.weight`, maps `embed_tokens.weight` and `mtp.*` into the model, keeps `lm_head.weight` "
        'and otherwise raises `ValueError(f"Unexpected MTP weight: {name}")` (models/iquest_q1_mtp.py:187-200). '
        "The default loader hands it every tensor of the shards the index names, unrenamed (the class has no "
        "name mapper), so one foreign tensor stops the draft's load. The same code is in 0.5.23 "
        "(iquest_q1_mtp.py:187-200); 0.5.20 has no IQuest Q1 model.",
        fix="Use the MTP checkpoint as exported for SGLang (tensors `embed_tokens.weight`, `lm_head.weight`, "
        "`target_final_norm.weight`, `mtp.*`), or rename the tensors to those names.",
        fix_safety="No automatic fix: the draft checkpoint is the user's.",
    ),
    bad=Example(
        argv=IQUEST_Q1_EAGLE,
        target={"architectures": (IQUEST_Q1,)},
        draft=_mtp_draft("lm_head", "model"),
        sglang_version="0.5.21",
    ),
    good=Example(
        argv=IQUEST_Q1_EAGLE,
        target={"architectures": (IQUEST_Q1,)},
        draft=_mtp_draft(*MTP_ROOTS),
        sglang_version="0.5.21",
    ),
    sources=(
        "sglang 0.5.20: python/sglang/srt/models/ (no iquest_q1_mtp.py; configs/ has no iquest_q1.py)",
        "sglang 0.5.21: python/sglang/srt/configs/iquest_q1.py:166-197",
        "sglang 0.5.21: python/sglang/srt/models/iquest_q1_mtp.py:187-200",
        "sglang 0.5.21: python/sglang/srt/model_executor/model_runner.py:1447-1458; model_loader/loader.py:1628-1668",
        "sglang 0.5.21: python/sglang/srt/arg_groups/model_overrides/iquest_q1.py:23-25,34-35",
        "sglang 0.5.23: python/sglang/srt/models/iquest_q1_mtp.py:187-200 (unchanged)",
    ),
    sglang_versions=">=0.5.21",
    dialects=SGLANG_DIALECTS,
    log_signatures=(r"Unexpected MTP weight: ",),
)
