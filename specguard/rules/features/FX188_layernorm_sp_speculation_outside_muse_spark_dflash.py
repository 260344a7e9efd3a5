"""FX188 layernorm-sp-speculation-outside-muse-spark-dflash."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import QWEN3_32B_TP4_EAGLE3
from specguard.rules.features.FX187_layernorm_sp_with_speculation import (
    LAYERNORM_SP,
    QWEN3_TP4,
)

# 0.5.23 layers/layernorm_sp.py:53 MUSE_SP_ARCHITECTURES: the models whose DFLASH path gathers the
# sequence-sharded aux hidden states.
MUSE_SPARK_ARCHITECTURES = frozenset({"MuseSparkForConditionalGeneration"})


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or not ctx.spec.has(LAYERNORM_SP):
        return
    architecture = ctx.target.architecture if ctx.target is not None else None
    if ctx.algorithm == "DFLASH":
        if architecture is None or architecture in MUSE_SPARK_ARCHITECTURES:
            return
        reason = (
            f"DFLASH is accepted only on Muse Spark, and the target is {architecture}"
        )
    else:
        reason = f"{ctx.algorithm} is not DFLASH"
    yield RULE.finding(
        f"{ctx.flag(LAYERNORM_SP)} with {ctx.algorithm} in SGLang {ctx.version}: {reason}, so argument handling "
        "raises (ValueError '--enable-layernorm-sp supports speculative decoding only with Muse Spark DFLASH: "
        "other models/algorithms do not gather the sequence-sharded auxiliary hidden states.'). Drop "
        f"{ctx.flag(LAYERNORM_SP)} to speculate",
        flags=(LAYERNORM_SP, "--speculative-algorithm"),
    )


RULE = Rule(
    check=check,
    code="FX188",
    category=Category.START,
    name="layernorm-sp-speculation-outside-muse-spark-dflash",
    summary="--enable-layernorm-sp speculates only with DFLASH on Muse Spark (0.5.23+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--enable-layernorm-sp` with a `--speculative-algorithm`, SGLang 0.5.23 or later, unless the "
        "algorithm is DFLASH on a MuseSparkForConditionalGeneration target (DFLASH on an unknown target stays "
        "quiet; 0.5.19-0.5.22 refuse every algorithm: FX187).",
        why="0.5.23's `validate_layernorm_sp` raises 'supports speculative decoding only with Muse Spark DFLASH' "
        "when an algorithm is set and not (is_muse_spark_architecture(architecture) and algorithm == 'DFLASH') "
        "(layernorm_sp_hook.py:178-185); the architecture test is MUSE_SP_ARCHITECTURES = "
        "{MuseSparkForConditionalGeneration} (layers/layernorm_sp.py:53-58). The hook runs after the speculative "
        "hook, so NEXTN is already EAGLE (pipeline.py:306, :315).",
        fix="Drop `--enable-layernorm-sp`, or serve a Muse Spark target with DFLASH.",
        fix_safety="No automatic fix: the user chooses between sequence parallelism and speculation.",
    ),
    bad=Example(
        argv=(*QWEN3_32B_TP4_EAGLE3, LAYERNORM_SP),
        target={"architectures": ("Qwen3ForCausalLM",)},
        sglang_version="0.5.23",
    ),
    good=Example(
        argv=(*QWEN3_TP4, LAYERNORM_SP),
        target={"architectures": ("Qwen3ForCausalLM",)},
        sglang_version="0.5.23",
    ),
    sources=(
        "sglang 0.5.22: python/sglang/srt/arg_groups/layernorm_sp_hook.py:61-66 (every algorithm refused: FX187)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/layernorm_sp_hook.py:15-39,109-185",
        "sglang 0.5.23: python/sglang/srt/layers/layernorm_sp.py:53-58",
        "sglang 0.5.23: python/sglang/srt/arg_groups/pipeline.py:306,315",
    ),
    sglang_versions=">=0.5.23",
    log_signatures=(
        r"--enable-layernorm-sp supports speculative decoding only with Muse Spark DFLASH",
    ),
)
