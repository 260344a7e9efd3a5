"""DM302 deepseek-v41-speculation-refused."""

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
from specguard.rules.spec_params._ragged_verify import RAGGED
from specguard.rules.spec_params._shared import int_flag
from specguard.sglang_facts.changes import DSV41_DSPARK_PD_NIXL_AND_PREFILL_CP

# config.json of a DeepSeek-V4.1 checkpoint: its model_type, and the architectures SGLang serves it as
# (configs/deepseek_v41.py normalize_deepseek_v41_config maps DeepseekV41ForCausalLM to the V4 class, whose
# model hook runs validate_deepseek_v41_features).
V41_MODEL_TYPE = "deepseek_v41"
V41_ARCHITECTURES = frozenset({"DeepseekV4ForCausalLM", "DeepseekV41ForCausalLM"})
NON_STATIC_MODES = ("cap-accept", "compact")
TRANSFER = "--disaggregation-transfer-backend"
MODE = "--disaggregation-mode"


def _pd_refusals(ctx: CheckContext) -> list[tuple[str, str | None]]:
    """(what, flag) of each setting the DeepSeek-V4.1 DSpark PD check refuses, read from explicit settings only."""
    widened = DSV41_DSPARK_PD_NIXL_AND_PREFILL_CP.present_in(ctx.version)
    found: list[tuple[str, str | None]] = []
    mode = ctx.spec.env_value(RAGGED)
    if mode in NON_STATIC_MODES:
        found.append((f"{RAGGED}={mode} (static verify only)", None))
    transfer = ctx.spec.item(TRANSFER)
    allowed = ("mooncake", "nixl") if widened else ("mooncake",)
    if transfer is not None and transfer.values and transfer.values[-1] not in allowed:
        found.append(
            (
                f"{ctx.flag(TRANSFER)} {transfer.values[-1]} (only {' or '.join(allowed)})",
                TRANSFER,
            )
        )
    dcp = int_flag(ctx, "--dcp-size")
    if dcp is not None and dcp != 1:
        found.append((f"{ctx.flag('--dcp-size')} {dcp}", "--dcp-size"))
    cp = int_flag(ctx, "--attn-cp-size")
    if widened:
        # 0.5.22 admits interleaved prefill CP on the prefill node; a decode node still needs CP 1.
        if cp is not None and cp != 1 and _mode(ctx) == "decode":
            found.append(
                (
                    f"{ctx.flag('--attn-cp-size')} {cp} on the decode node",
                    "--attn-cp-size",
                )
            )
        return found
    if cp is not None and cp != 1:
        found.append((f"{ctx.flag('--attn-cp-size')} {cp}", "--attn-cp-size"))
    dp = ctx.spec.get("dp_size")
    if dp is not None and dp != 1:
        found.append((f"{ctx.flag('--dp-size')} {dp}", "--dp-size"))
    if ctx.spec.get("enable_dp_attention"):
        found.append((ctx.flag("--enable-dp-attention"), "--enable-dp-attention"))
    return found


def _mode(ctx: CheckContext) -> str:
    item = ctx.spec.item(MODE)
    return item.values[-1] if item is not None and item.values else "null"


def check(ctx: CheckContext) -> Iterator[Finding]:
    target = ctx.target
    if (
        target is None
        or target.model_type != V41_MODEL_TYPE
        or target.architecture not in V41_ARCHITECTURES
    ):
        return
    written = ctx.spec.get("speculative_algorithm")
    if written is None:
        return
    algorithm = ctx.flag("--speculative-algorithm")
    # validate_deepseek_v41_features compares the name as written, upper-cased: NEXTN is not DSPARK either.
    if str(written).upper() != "DSPARK":
        yield RULE.finding(
            f"{algorithm} {written} on a DeepSeek-V4.1 target (config.json model_type {V41_MODEL_TYPE}) in SGLang "
            f"{ctx.version}: argument handling raises 'DeepSeek-V4.1 does not support speculative decoding other "
            f"than DSpark yet; disable it to serve this model.' Use {algorithm} DSPARK with a DSpark draft, or "
            "serve without speculation",
            flags=("--speculative-algorithm",),
        )
        return
    if _mode(ctx) == "null":
        return
    refusals = _pd_refusals(ctx)
    if not refusals:
        return
    yield RULE.finding(
        f"DSPARK on a DeepSeek-V4.1 target under {ctx.flag(MODE)} {_mode(ctx)} with "
        f"{', '.join(what for what, _ in refusals)}: SGLang {ctx.version} raises 'DeepSeek-V4.1 DSpark PD "
        "requires static verify, ...' at argument time",
        flags=(MODE, *(flag for _, flag in refusals if flag)),
    )


V41_TARGET = {"architectures": ("DeepseekV4ForCausalLM",), "model_type": V41_MODEL_TYPE}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM302",
    category=Category.START,
    name="deepseek-v41-speculation-refused",
    summary="DeepSeek-V4.1 speculates only with DSPARK, and DSPARK under PD only with static verify, "
    "Mooncake (or NIXL, 0.5.22+) and no DCP/decode CP (0.5.21+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="A target whose config.json model_type is deepseek_v41 (architectures[0] DeepseekV4ForCausalLM or "
        "DeepseekV41ForCausalLM) with `--speculative-algorithm` other than DSPARK (NEXTN and EAGLE included); or "
        "DSPARK with `--disaggregation-mode` prefill/decode and any of: `SGLANG_RAGGED_VERIFY_MODE` cap-accept/"
        "compact, `--disaggregation-transfer-backend` other than mooncake (0.5.22+: or nixl), `--dcp-size` "
        "above 1, and in 0.5.21 `--dp-size` above 1, `--enable-dp-attention` or `--attn-cp-size` above 1 (0.5.22+: "
        "`--attn-cp-size` above 1 on a decode node). SGLang 0.5.21 or later. Prefill-node CP is not checked.",
        why="0.5.21 added `validate_deepseek_v41_features` (arg_groups/deepseek_v4_hook.py:169-252), run by the "
        "DeepseekV4ForCausalLM model hook (model_hook.py:432-441) after `apply_deepseek_v4_defaults` (:232): for "
        'model_type deepseek_v41 it raises "DeepSeek-V4.1 does not support speculative decoding other than '
        'DSpark yet; disable it to serve this model." (:214-232) and, under PD with speculation, "DeepSeek-V4.1 '
        'DSpark PD requires static verify, Mooncake, DP=1 and CP=1." (:234-252). 0.5.22 accepts NIXL, attention '
        "DP and interleaved prefill CP on the prefill node (deepseek_v4_hook.py:260-315); 0.5.23 keeps both "
        "checks (:333-383, called from model_hook.py:470-479). 0.5.20 has no DeepSeek-V4.1 config "
        "(no configs/deepseek_v41.py). `apply_deepseek_v4_defaults` runs first, so a NEXTN launch (or EAGLE "
        "without topk 1) meets DM197's assert before this one.",
        fix="Speculate with DSPARK and a DSpark draft (or serve without speculation); under PD keep static verify, "
        "Mooncake (or NIXL, 0.5.22+) and no DCP.",
        fix_safety="No automatic fix: DSPARK needs a DSpark draft checkpoint.",
    ),
    bad=Example(
        argv=(
            "--model-path",
            "deepseek-ai/DeepSeek-V4.1",
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-eagle-topk",
            "1",
        ),
        target=V41_TARGET,
        sglang_version="0.5.21",
    ),
    good=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK, target=V41_TARGET, sglang_version="0.5.21"
    ),
    sources=(
        "sglang 0.5.20: python/sglang/srt/configs/ (no deepseek_v41.py; no validate_deepseek_v41_features)",
        (
            "sglang 0.5.21: python/sglang/srt/arg_groups/deepseek_v4_hook.py:169-252; model_hook.py:232,432-441; "
            "configs/deepseek_v41.py:23-41"
        ),
        "sglang 0.5.22: python/sglang/srt/arg_groups/deepseek_v4_hook.py:260-315",
        "sglang 0.5.23: python/sglang/srt/arg_groups/deepseek_v4_hook.py:333-383; model_hook.py:470-479",
    ),
    sglang_versions=">=0.5.21",
    log_signatures=(
        r"DeepSeek-V4\.1 does not support speculative decoding other than DSpark yet",
        r"DeepSeek-V4\.1 DSpark PD requires static verify",
    ),
)
