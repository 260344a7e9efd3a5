"""PL380 qwen4-exp-unified-memory-or-mori-pp-refused."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)

ARCHITECTURE = "Qwen4ExpForConditionalGeneration"
UNIFIED_MEMORY = "--enable-unified-memory"
TRANSFER_BACKEND = "--disaggregation-transfer-backend"
TARGET = {"architectures": (ARCHITECTURE,)}
# A local checkpoint: Qwen4-Exp ships its NEXTN layer inside the target, so no draft path is needed.
QWEN4_EXP_NEXTN = (
    "--model-path",
    "/models/qwen4-exp",
    "--speculative-algorithm",
    "NEXTN",
)


def _mori_pd_with_pp(ctx: CheckContext) -> bool:
    return (
        ctx.spec.get("disaggregation_mode") in ("prefill", "decode")
        and ctx.spec.last_value(TRANSFER_BACKEND) == "mori"
        and (ctx.spec.get("pp_size") or 1) > 1
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm is None
        or ctx.target is None
        or ctx.target.architecture != ARCHITECTURE
    ):
        return
    if _mori_pd_with_pp(ctx):
        yield RULE.finding(
            f"Qwen4-Exp on a PD {ctx.spec.get('disaggregation_mode')} node with {ctx.flag(TRANSFER_BACKEND)} mori and "
            f"{ctx.flag('--pp-size')} {ctx.spec.get('pp_size')}: SGLang {ctx.version} raises ValueError 'Qwen4-Exp PD "
            "with MORI requires --pp-size 1' at argument time. Use --pp-size 1 or another transfer backend",
            flags=(TRANSFER_BACKEND, "--pp-size", "--disaggregation-mode"),
        )
    if ctx.spec.has(UNIFIED_MEMORY):
        yield RULE.finding(
            f"Qwen4-Exp with {ctx.flag(UNIFIED_MEMORY)}: SGLang {ctx.version} raises ValueError 'Qwen4-Exp does not "
            f"support --enable-unified-memory yet' at argument time. Drop {ctx.flag(UNIFIED_MEMORY)}",
            flags=(UNIFIED_MEMORY,),
            fix=fix_of(
                f"drop {UNIFIED_MEMORY}",
                Applicability.UNSAFE,
                Edit(name=UNIFIED_MEMORY, value=None),
            ),
        )


RULE = Rule(
    check=check,
    code="PL380",
    category=Category.START,
    name="qwen4-exp-unified-memory-or-mori-pp-refused",
    summary="A Qwen4-Exp target with --enable-unified-memory, or on a MORI PD node with --pp-size > 1, is refused (0.5.20+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.SOMETIMES,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="A target whose config.json names `Qwen4ExpForConditionalGeneration` first, speculated on (its NEXTN "
        "layer), with `--enable-unified-memory`, or with `--disaggregation-mode` prefill/decode, "
        "`--disaggregation-transfer-backend mori` and `--pp-size` above 1; SGLang 0.5.20 or later.",
        why="0.5.20 added the Qwen4-Exp model and its config-time override `_qwen4_exp_overrides` "
        "(arg_groups/model_overrides/qwen4_exp.py:23-42), which runs for the target's architecture while the "
        'arguments resolve (arg_groups/overrides.py:379) and raises ValueError "Qwen4-Exp PD with MORI requires '
        "--pp-size 1; MORI does not yet exchange the global QSA layer metadata needed to pair compact state "
        'descriptors across pipeline stages." or "Qwen4-Exp does not support --enable-unified-memory yet". The '
        "same raises stand in 0.5.23 (qwen4_exp.py:20-39). 0.5.19 has no Qwen4-Exp model and no such override.",
        fix="Drop `--enable-unified-memory`; for MORI PD run `--pp-size 1` or another transfer backend.",
        fix_safety="Unsafe: dropping unified memory changes how the KV cache is laid out.",
    ),
    bad=Example(
        argv=(*QWEN4_EXP_NEXTN, UNIFIED_MEMORY), target=TARGET, sglang_version="0.5.20"
    ),
    good=Example(argv=QWEN4_EXP_NEXTN, target=TARGET, sglang_version="0.5.20"),
    sources=(
        "sglang 0.5.19: python/sglang/srt/arg_groups/model_overrides/ (no qwen4_exp.py; no Qwen4ExpForConditionalGeneration model)",
        "sglang 0.5.20: python/sglang/srt/arg_groups/model_overrides/qwen4_exp.py:23-42",
        "sglang 0.5.20: python/sglang/srt/arg_groups/overrides.py:379",
        "sglang 0.5.20: python/sglang/srt/arg_groups/speculative_hook.py:877-884 (NEXTN draft inside the target)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/model_overrides/qwen4_exp.py:20-39",
    ),
    sglang_versions=">=0.5.20",
    log_signatures=(
        r"Qwen4-Exp PD with MORI requires --pp-size 1",
        r"Qwen4-Exp does not support --enable-unified-memory yet",
    ),
)
