"""FX563 two-batch-overlap-hyv4-shared-indexer."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import (
    Applicability,
    Category,
    Edit,
    Finding,
    ModelFacts,
    Severity,
)
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)

TBO = "--enable-two-batch-overlap"
# The DSA target the model hook validates and the only config class with indexer_types (0.5.20
# arg_groups/model_hook.py:180-212; configs/hy_v4.py).
HYV4_TARGET = "HYV4ForCausalLM"
HYV4_MODEL_TYPE = "hy_v4"
SHARED = "shared"
# HYV4Config's defaults when config.json has no indexer_types: num_hidden_layers 34, and layer i is "full" when
# i == 0 or (i - 1) % 4 == 0, else "shared" (0.5.20 configs/hy_v4.py:15,107-114), so any model of 3+ layers shares.
DEFAULT_NUM_HIDDEN_LAYERS = 34
FIRST_SHARED_LAYER = 2


def _shares_indexer(target: ModelFacts) -> bool | None:
    """Whether a layer reuses another's top-k indices (an indexer_types entry "shared"), None when unknown."""
    if target.indexer_types is not None:
        return SHARED in target.indexer_types
    if target.model_type != HYV4_MODEL_TYPE:
        return None
    return (target.num_hidden_layers or DEFAULT_NUM_HIDDEN_LAYERS) > FIRST_SHARED_LAYER


def check(ctx: CheckContext) -> Iterator[Finding]:
    target = ctx.target
    if not ctx.spec.has(TBO) or target is None or target.architecture != HYV4_TARGET:
        return
    # The test runs only in the DSA branch, which needs index_topk set (0.5.20 configs/model_config.py:144-165).
    # HYV4Config fills 2048 when the key is absent, but an explicit null turns DSA off; the two read alike here.
    if target.index_topk is None:
        return
    if not _shares_indexer(target):
        return
    written = (
        "config.json indexer_types"
        if target.indexer_types is not None
        else "HYV4Config's default indexer_types"
    )
    yield RULE.finding(
        f'{ctx.flag(TBO)} on {HYV4_TARGET} in SGLang {ctx.version}: its {written} has "shared" layers, which '
        "reuse an earlier layer's DSA top-k indices that the two-batch-overlap op path does not carry, so argument "
        'handling raises "ValueError: --enable-two-batch-overlap is not supported with DSA index-topk sharing" '
        f"before the server starts. Drop {ctx.flag(TBO)}",
        flags=(TBO,),
        fix=fix_of(f"drop {TBO}", Applicability.UNSAFE, Edit(name=TBO, value=None)),
    )


HYV4_TBO = (
    "--model-path",
    "/ckpt/hy-v4",
    "--tp",
    "8",
    "--enable-dp-attention",
    "--dp-size",
    "8",
)
HYV4_FACTS = {
    "architectures": (HYV4_TARGET,),
    "model_type": HYV4_MODEL_TYPE,
    "num_hidden_layers": 34,
    "index_topk": 2048,
}

RULE = Rule(
    check=check,
    code="FX563",
    category=Category.START,
    name="two-batch-overlap-hyv4-shared-indexer",
    summary="--enable-two-batch-overlap on a HYV4 target whose indexer_types has shared layers is refused at "
    "argument time (0.5.20+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--enable-two-batch-overlap` on a target whose config.json `architectures[0]` is HYV4ForCausalLM and "
        'whose `indexer_types` lists a "shared" layer (or, with no `indexer_types`, a `model_type: hy_v4` config '
        "of 3 or more layers, whose default list has shared layers) and whose config.json sets `index_topk`, SGLang "
        '0.5.20 or later. An `indexer_types` without "shared" stays quiet, as does an unknown config or one with no '
        "`index_topk` (absent, HYV4Config would fill 2048; null, the DSA branch and its test are skipped).",
        why="The model hook's DSA branch (0.5.20 arg_groups/model_hook.py:180-212, for architectures[0] "
        "HYV4ForCausalLM when `is_deepseek_dsa`: index_topk is not None, configs/model_config.py:144-165) calls "
        "`_validate_dsa_tbo_index_sharing` (:48-69), which 0.5.20 widened from index_topk_freq/index_topk_pattern "
        '(0.5.19 model_hook.py) to `indexer_types` containing "shared" and raises ValueError '
        "'--enable-two-batch-overlap is not supported with DSA index-topk sharing: the TBO op path does not "
        "propagate topk indices across layers'. HYV4 (configs/hy_v4.py, its indexer_types default :107-114) is new "
        "in 0.5.20. Unchanged in 0.5.23 (model_hook.py:54-76, :275-299).",
        fix="Drop `--enable-two-batch-overlap`.",
        fix_safety="Unsafe: it changes how batches overlap (throughput), not what is served.",
    ),
    bad=Example(
        argv=(*HYV4_TBO, TBO), target=HYV4_FACTS, gpu="H200", sglang_version="0.5.20"
    ),
    good=Example(
        argv=(*HYV4_TBO, TBO),
        target={**HYV4_FACTS, "indexer_types": ("full",) * 34},
        gpu="H200",
        sglang_version="0.5.20",
    ),
    sources=(
        "sglang 0.5.19: python/sglang/srt/configs (no hy_v4.py); arg_groups/model_hook.py (no indexer_types test)",
        "sglang 0.5.20: python/sglang/srt/arg_groups/model_hook.py:48-69,111,180-212",
        "sglang 0.5.20: python/sglang/srt/configs/hy_v4.py:4-5,15,33,107-114; configs/model_config.py:144-165",
        "sglang 0.5.23: python/sglang/srt/arg_groups/model_hook.py:54-76,167,275-299",
    ),
    sglang_versions=">=0.5.20",
    log_signatures=(
        r"--enable-two-batch-overlap is not supported with DSA index-topk sharing",
    ),
)
