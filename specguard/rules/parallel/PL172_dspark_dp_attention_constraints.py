"""PL172 dspark-dp-attention-constraints."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
    set_flags,
)
from specguard.rules.spec_params._ragged_verify import RAGGED, unset_ragged
from specguard.rules.spec_params._shared import (
    attn_dp_enabled,
    attn_dp_flags,
    device,
    int_flag,
)
from specguard.sglang_facts.changes import ATTN_DP_SIZE_FLAG, Change, as_of

A2A = "--moe-a2a-backend"
SPEC_A2A = "--speculative-moe-a2a-backend"
COORDINATION = "SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION"

# 0.5.18 skips the DP checks when --enable-dp-attention comes with --dp-size 1 (a degenerate flag under
# DeepSeek-V4 context parallel; 0.5.18 arg_groups/speculative_hook.py:285-286); 0.5.16-0.5.17 checked the
# switch alone, 0.5.22 reads the resolved attention-DP width (speculative_hook.py:613).
DP_SIZE_CHECKED = Change("0.5.18", "0.5.18 arg_groups/speculative_hook.py:286")
# Off NPU from 0.5.18, the MoE all-to-all backends DSPARK runs with under attention DP, newest first.
A2A_BACKENDS: tuple[tuple[Change, tuple[str, ...]], ...] = (
    (
        Change("0.5.21", "0.5.21 arg_groups/speculative_hook.py:595-600"),
        ("none", "megamoe", "mori"),
    ),
    (
        Change("0.5.18", "0.5.18 arg_groups/speculative_hook.py:289-294"),
        ("none", "megamoe"),
    ),
)
NPU_EXEMPT = Change(
    "0.5.18", "0.5.18 arg_groups/speculative_hook.py:279, 289, 295, 313 (_is_npu)"
)
STATIC_VERIFY_WITH_A2A = Change(
    "0.5.18", "0.5.18 arg_groups/speculative_hook.py:295-306"
)
STATIC_VERIFY_WITH_COORDINATION = Change(
    "0.5.22", "0.5.22 arg_groups/speculative_hook.py:622-635"
)
NON_STATIC_MODES = ("cap-accept", "compact")


def a2a_backends(version: Version) -> tuple[str, ...]:
    return as_of(A2A_BACKENDS, version, before=("none",))


def dspark_dp_attention(ctx: CheckContext) -> bool:
    """Whether _handle_dspark runs its attention-DP checks, as each release reads it."""
    if ATTN_DP_SIZE_FLAG.present_in(ctx.version) or not DP_SIZE_CHECKED.present_in(
        ctx.version
    ):
        return attn_dp_enabled(ctx)
    return (
        bool(ctx.spec.get("enable_dp_attention")) and (ctx.spec.get("dp_size") or 1) > 1
    )


def _a2a(ctx: CheckContext, flag: str) -> str | None:
    item = ctx.spec.item(flag)
    return item.values[-1] if item is not None and item.values else None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "DSPARK"
        or not dspark_dp_attention(ctx)
        or ctx.spec.has("--dwdp-size")
    ):
        return  # DWDP forces --enable-dp-lm-head itself and refuses speculation (FX110)
    written = " ".join(ctx.flag(f) for f in attn_dp_flags(ctx))
    npu = device(ctx) == "npu" and NPU_EXEMPT.present_in(ctx.version)
    if not ctx.spec.get("enable_dp_lm_head"):
        yield RULE.finding(
            f"DSPARK with attention DP ({written}) requires {ctx.flag('--enable-dp-lm-head')}: SGLang raises "
            "'DSpark with dp attention requires --enable-dp-lm-head.' at argument time",
            flags=("--enable-dp-lm-head",),
            fix=set_flags(
                "add --enable-dp-lm-head", Applicability.UNSAFE, enable_dp_lm_head=True
            ),
        )
    target_a2a = _a2a(ctx, A2A)
    allowed = a2a_backends(ctx.version)
    if not npu and target_a2a is not None and target_a2a not in allowed:
        yield RULE.finding(
            f"DSPARK with attention DP in SGLang {ctx.version} supports {ctx.flag(A2A)} "
            f"{', '.join(allowed)}, not {target_a2a!r}: SGLang raises at argument time",
            flags=(A2A,),
        )
    mode = ctx.spec.env_value(RAGGED)
    coordination = ctx.spec.env_flag(
        COORDINATION
    ) and STATIC_VERIFY_WITH_COORDINATION.present_in(ctx.version)
    moe_a2a = target_a2a is not None and target_a2a != "none" and target_a2a in allowed
    if (
        not npu
        and mode in NON_STATIC_MODES
        and STATIC_VERIFY_WITH_A2A.present_in(ctx.version)
        and (moe_a2a or coordination)
    ):
        why = f"{ctx.flag(A2A)} {target_a2a}" if moe_a2a else f"{COORDINATION}=1"
        yield RULE.finding(
            f"DSPARK with attention DP and {why} requires {RAGGED}=static, not {mode!r}: SGLang raises at "
            "argument time",
            flags=(A2A,) if moe_a2a else (),
            fix=unset_ragged(),
        )
    cp = int_flag(ctx, "--attn-cp-size")
    if cp is not None and cp > 1:
        yield RULE.finding(
            f"DSPARK with attention DP does not support context parallel ({ctx.flag('--attn-cp-size')} {cp}): "
            "SGLang raises at argument time",
            flags=("--attn-cp-size",),
            fix=fix_of(
                "drop --attn-cp-size",
                Applicability.UNSAFE,
                Edit(name="--attn-cp-size", value=None),
            ),
        )
    draft_a2a = _a2a(ctx, SPEC_A2A)
    effective = target_a2a or "none"  # the field's default
    if not npu and draft_a2a is not None and draft_a2a != effective:
        yield RULE.finding(
            f"DSPARK ignores {ctx.flag(SPEC_A2A)}, and with attention DP it must match the target's "
            f"{ctx.flag(A2A)} ({effective!r}), not {draft_a2a!r}: SGLang raises at argument time",
            flags=(SPEC_A2A,),
            fix=fix_of(
                f"drop {SPEC_A2A}",
                Applicability.UNSAFE,
                Edit(name=SPEC_A2A, value=None),
            ),
        )


DSPARK_DP = (
    "--model-path",
    "deepseek-ai/DeepSeek-V4-Flash",
    "--speculative-algorithm",
    "DSPARK",
    "--speculative-draft-model-path",
    "/ckpt/dspark-draft",
    "--tp-size",
    "8",
    "--enable-dp-attention",
    "--dp-size",
    "8",
)

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="PL172",
    category=Category.START,
    name="dspark-dp-attention-constraints",
    summary="DSPARK with attention DP but without --enable-dp-lm-head, or with an MoE all-to-all, context "
    "parallel or ragged-verify setting it refuses (0.5.16+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.SOMETIMES,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` with attention DP and any of: no `--enable-dp-lm-head`; a "
        "`--moe-a2a-backend` other than none (0.5.16-0.5.17), none/megamoe (0.5.18-0.5.20) or none/megamoe/mori "
        "(0.5.21+); a non-none all-to-all backend (0.5.18+) or `SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION` "
        "(0.5.22+) with `SGLANG_RAGGED_VERIFY_MODE` cap-accept or compact; `--attn-cp-size` above 1; a "
        "`--speculative-moe-a2a-backend` that differs from the target's. From 0.5.18 the all-to-all checks skip "
        "NPU.",
        why="`_handle_dspark` raises a ValueError for each before anything loads (0.5.16 "
        "arg_groups/speculative_hook.py:280-301; 0.5.18 :285-321 adds megamoe, the static-verify test and the NPU "
        "exemptions; 0.5.21 :595-600 adds mori; 0.5.22 :613-650 adds the coordination env var; 0.5.23 :674-711 is "
        "0.5.22's). What counts as attention DP moved: the `--enable-dp-attention` switch (0.5.16-0.5.17), the "
        "switch with `--dp-size` above 1 (0.5.18-0.5.21), the resolved attention-DP width (0.5.22+). "
        "`--moe-a2a-backend` is checked only when typed (model overrides may choose it).",
        fix="Add `--enable-dp-lm-head`, keep the target's all-to-all backend for the draft, use static ragged "
        "verify with an all-to-all backend, and no context parallel under attention DP.",
        fix_safety="Unsafe: each changes the parallel layout or the verify schedule.",
    ),
    bad=Example(argv=DSPARK_DP, sglang_version="0.5.16"),
    good=Example(argv=(*DSPARK_DP, "--enable-dp-lm-head"), sglang_version="0.5.16"),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/speculative/spec_info.py:28-41 (no DSPARK algorithm)",
        "sglang 0.5.16: python/sglang/srt/arg_groups/speculative_hook.py:280-301",
        "sglang 0.5.18: python/sglang/srt/arg_groups/speculative_hook.py:279-321",
        "sglang 0.5.21: python/sglang/srt/arg_groups/speculative_hook.py:591-627",
        "sglang 0.5.22: python/sglang/srt/arg_groups/speculative_hook.py:613-650",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:674-711",
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(
        (
            r"DSpark with dp attention (requires --enable-dp-lm-head|only supports the built-in TP MoE|supports "
            r"moe_a2a_backend|does not support context parallel|\+ moe_a2a_backend=)"
        ),
        r"DSpark DP MoE or prefill coordination requires SGLANG_RAGGED_VERIFY_MODE=static",
        r"DSpark ignores --speculative-moe-a2a-backend; with dp attention it must match",
    ),
)
