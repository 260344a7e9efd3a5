"""SP170 uno-launch-refused."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Fix, Severity
from specguard.rules.attention.backends import BACKEND_FLAGS
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B
from specguard.rules.spec_params._shared import (
    attn_dp_enabled,
    attn_dp_flags,
    device,
    drop_attn_dp,
    float_flag,
    int_flag,
)

# _handle_uno (0.5.20 arg_groups/speculative_hook.py:346-508, unchanged to 0.5.23 :449-611 but for
# how attention DP is read) raises a ValueError for each of these. LoRA serving (PL005), rejection
# sampling (SP009) and --pp-size (PL002) are refused there too, and reported by those rules.
LORA_PATH = "--uno-lora-path"
# SGLang says: "UNO does not support --enable-deterministic-inference because its sampling path does not
# use per-request seeds." and "UNO does not support --enable-strict-thinking because it requires grammar
# decoding." (0.5.20 speculative_hook.py:358-367).
# and: "UNO requires --speculative-num-draft-tokens to be a positive integer denoting the linear width or
# tree verify width Q." and "UNO requires --speculative-eagle-topk to be at least 1, got 0." (:371-388).
SWITCHES_REFUSED = (
    (
        "--enable-deterministic-inference",
        "its sampling path does not use per-request seeds",
    ),
    ("--enable-strict-thinking", "strict thinking needs grammar decoding"),
)
TREE_SWITCHES_REFUSED = ("--enable-pdmux", "--enable-two-batch-overlap")
THRESHOLDS = (
    "--speculative-accept-threshold-single",
    "--speculative-accept-threshold-acc",
)
# speculative_hook.py tree-mode limits (0.5.20 :409-419): at most 128 verify nodes, Q*K at most 2048.
MAX_TREE_VERIFY = 128
MAX_FRONTIER_SLOTS = 2048


def _drop(*flags: str) -> Fix:
    return fix_of(
        f"drop {' '.join(flags)}",
        Applicability.UNSAFE,
        *(Edit(name=f, value=None) for f in flags),
    )


def tree_geometry_refusal(verify: int, topk: int, steps: int) -> str | None:
    """Why UNO tree mode cannot build Q verify nodes from F = steps + 1 and K = topk (0.5.20 :402-443)."""
    draft_width = steps + 1
    if verify < draft_width:
        return f"it requires Q >= F; got Q={verify}, F={draft_width}"
    if verify > MAX_TREE_VERIFY:
        return f"it supports at most Q={MAX_TREE_VERIFY} verify nodes, got Q={verify}"
    if verify * topk > MAX_FRONTIER_SLOTS:
        return f"it supports Q*K <= {MAX_FRONTIER_SLOTS}; got Q*K={verify}*{topk}={verify * topk}"
    capacity, nodes_at_depth = 1, 1
    for _ in range(steps):
        nodes_at_depth *= topk
        capacity += nodes_at_depth
        if capacity >= verify:
            break
    if verify > capacity:
        return f"Q={verify} exceeds the tree's capacity={capacity} for F={draft_width}, K={topk}"
    parent_width = topk * max(steps - 1, 0) + 1
    if verify - 1 > parent_width:
        return f"Q-1={verify - 1} exceeds K*(F-2)+1={parent_width} for F={draft_width}, K={topk} (EAGLE's parent list)"
    return None


def _tree_mode(ctx: CheckContext, verify: int | None, topk: int) -> Iterator[Finding]:
    """The checks of UNO's tree mode (candidate topk > 1)."""
    steps = ctx.spec.get("speculative_num_steps")
    steps_flag = ctx.flag("--speculative-num-steps")
    if steps is None or steps < 1:
        yield RULE.finding(
            f"UNO tree mode ({ctx.flag('--speculative-eagle-topk')} {topk}) needs a positive {steps_flag} "
            f"(its draft width F is steps + 1){'' if steps is None else f', not {steps}'}: SGLang raises at argument time",
            flags=("--speculative-num-steps", "--speculative-eagle-topk"),
        )
    elif (
        verify is not None
        and (why := tree_geometry_refusal(verify, topk, steps)) is not None
    ):
        yield RULE.finding(
            f"UNO tree mode cannot verify {verify} draft tokens with {steps_flag} {steps} and "
            f"{ctx.flag('--speculative-eagle-topk')} {topk}: {why}. SGLang raises at argument time",
            flags=(
                "--speculative-num-draft-tokens",
                "--speculative-num-steps",
                "--speculative-eagle-topk",
            ),
        )
    for switch in TREE_SWITCHES_REFUSED:
        if ctx.spec.has(switch):
            yield RULE.finding(
                f"UNO tree mode does not yet support {ctx.flag(switch)}: SGLang raises at argument time",
                flags=(switch,),
                fix=_drop(switch),
            )
    thresholds = {
        flag: value
        for flag in THRESHOLDS
        if (value := float_flag(ctx, flag)) is not None and value != 1.0
    }
    if thresholds:
        yield RULE.finding(
            "UNO tree mode reuses EAGLE's target-only sampling and requires both accept thresholds to be 1.0, not "
            + ", ".join(
                f"{ctx.flag(flag)} {value}" for flag, value in thresholds.items()
            )
            + ": SGLang raises at argument time",
            flags=tuple(thresholds),
            fix=_drop(*thresholds),
        )


def _explicit_backends(ctx: CheckContext) -> tuple[str | None, str | None]:
    """(prefill, decode) backends as typed, split flags over --attention-backend (attention_backends_of)."""
    base = ctx.spec.get("attention_backend")
    return ctx.spec.get("prefill_attention_backend") or base, ctx.spec.get(
        "decode_attention_backend"
    ) or base


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "UNO":
        return
    where = device(ctx)
    if where is not None and where != "cuda":
        yield RULE.finding(
            f"UNO only supports CUDA, not {where!r}: SGLang raises 'UNO only supports CUDA.'",
            flags=("--device",),
        )
    if ctx.spec.get("speculative_draft_model_path") is not None:
        yield RULE.finding(
            f"UNO drafts with the target model and a LoRA ({ctx.flag(LORA_PATH)}) and refuses "
            f"{ctx.flag('--speculative-draft-model-path')}: SGLang raises at argument time",
            flags=("--speculative-draft-model-path",),
            fix=_drop("--speculative-draft-model-path"),
        )
    if not ctx.spec.has(LORA_PATH):
        yield RULE.finding(
            f"UNO needs its draft LoRA checkpoint in {ctx.flag(LORA_PATH)}: SGLang raises 'UNO requires --uno-lora-path.'",
            flags=(LORA_PATH,),
        )
    for switch, why in SWITCHES_REFUSED:
        if ctx.spec.has(switch):
            yield RULE.finding(
                f"UNO does not support {ctx.flag(switch)} ({why}): SGLang raises at argument time",
                flags=(switch,),
                fix=_drop(switch),
            )
    verify = ctx.spec.get("speculative_num_draft_tokens")
    if verify is None or verify < 1:
        yield RULE.finding(
            f"UNO needs a positive {ctx.flag('--speculative-num-draft-tokens')} (its linear width or tree verify "
            f"width Q){'' if verify is None else f', not {verify}'}: SGLang raises at argument time",
            flags=("--speculative-num-draft-tokens",),
        )
    topk = ctx.spec.get("speculative_eagle_topk")
    if topk is not None and topk < 1:
        yield RULE.finding(
            f"UNO needs {ctx.flag('--speculative-eagle-topk')} at least 1, not {topk}: SGLang raises at argument time",
            flags=("--speculative-eagle-topk",),
        )
    elif topk is not None and topk > 1:
        yield from _tree_mode(
            ctx, verify if verify is not None and verify >= 1 else None, topk
        )
    tp = ctx.spec.get("tp_size") or 1
    if tp != 1:
        yield RULE.finding(
            f"UNO runs on one GPU and refuses {ctx.flag('--tp-size')} {tp}: SGLang raises 'UNO requires TP=PP=1.'",
            flags=("--tp-size",),
        )
    if attn_dp_enabled(ctx):
        flags = attn_dp_flags(ctx)
        yield RULE.finding(
            f"UNO does not support attention DP ({' '.join(ctx.flag(f) for f in flags)}): SGLang raises "
            "'UNO does not support DP attention or context parallelism.'",
            flags=flags,
            fix=drop_attn_dp("turn attention DP off"),
        )
    cp = int_flag(ctx, "--attn-cp-size")
    if cp is not None and cp != 1:
        yield RULE.finding(
            f"UNO does not support context parallelism ({ctx.flag('--attn-cp-size')} {cp}): SGLang raises "
            "'UNO does not support DP attention or context parallelism.'",
            flags=("--attn-cp-size",),
            fix=_drop("--attn-cp-size"),
        )
    prefill, decode = _explicit_backends(ctx)
    if (prefill is not None and prefill != "fa3") or (
        decode is not None and decode != "fa3"
    ):
        typed = tuple(f for f in BACKEND_FLAGS if ctx.spec.has(f))
        yield RULE.finding(
            f"UNO requires FA3 for both prefill and decode attention; this launch asks for prefill={prefill!r}, "
            f"decode={decode!r}: SGLang raises at argument time",
            flags=typed,
            fix=fix_of(
                "use fa3 for both phases",
                Applicability.UNSAFE,
                Edit(name="--attention-backend", value="fa3"),
                Edit(name="--prefill-attention-backend", value=None),
                Edit(name="--decode-attention-backend", value=None),
            ),
        )


UNO_LAUNCH = (
    *LLAMA31_8B,
    "--speculative-algorithm",
    "UNO",
    "--uno-lora-path",
    "/ckpt/uno-lora",
    "--speculative-num-draft-tokens",
    "4",
)

RULE = Rule(
    dialects=SGLANG_DIALECTS,  # sgl-jax has no UNO (JX007)
    check=check,
    code="SP170",
    category=Category.START,
    name="uno-launch-refused",
    summary="--speculative-algorithm UNO with a combination its argument handler refuses (0.5.20+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.SOMETIMES,
    docs=RuleDocs(
        what="`--speculative-algorithm UNO` (new in SGLang 0.5.20) with any of: a device other than CUDA, "
        "`--speculative-draft-model-path`, no `--uno-lora-path`, `--enable-deterministic-inference`, "
        "`--enable-strict-thinking`, no positive `--speculative-num-draft-tokens`, a topk below 1, `--tp-size` "
        "other than 1, attention DP or `--attn-cp-size` other than 1, a prefill or decode attention backend other "
        "than fa3; in tree mode (`--speculative-eagle-topk` above 1): no positive `--speculative-num-steps`, a "
        "draft-token count Q the tree cannot build (Q < steps + 1, Q > 128, Q x topk > 2048, above the tree's "
        "capacity or EAGLE's parent list), `--enable-pdmux`, `--enable-two-batch-overlap`, or an accept threshold "
        "other than 1.0.",
        why="UNO drafts with the target model plus a draft LoRA. Its argument handler `_handle_uno` (0.5.20 "
        "arg_groups/speculative_hook.py:346-508) raises a ValueError for each of these before anything loads; "
        "0.5.23 (:449-611) is the same but reads attention DP as `attn_dp_size > 1` (0.5.22+) instead of the "
        "`--enable-dp-attention` switch. 0.5.19 has no UNO (speculative/spec_info.py:32-47). "
        "The same handler also refuses LoRA serving, rejection sampling and `--pp-size` other than 1; PL005, "
        "SP009 and PL002 report those. Backends are checked only when typed: SGLang's automatic choice is not "
        "predicted here.",
        fix="Give `--uno-lora-path` and `--speculative-num-draft-tokens`, run on one CUDA GPU with fa3, and drop "
        "what UNO refuses.",
        fix_safety="Unsafe: dropping a feature or changing the attention backend changes what runs.",
    ),
    bad=Example(
        argv=(*UNO_LAUNCH, "--enable-deterministic-inference"), sglang_version="0.5.20"
    ),
    good=Example(argv=UNO_LAUNCH, sglang_version="0.5.20"),
    sources=(
        "sglang 0.5.19: python/sglang/srt/speculative/spec_info.py:32-47 (SpeculativeAlgorithm has no UNO; speculative_hook.py has no _handle_uno)",
        "sglang 0.5.20: python/sglang/srt/speculative/spec_info.py:249-250 (UNO dispatches to _handle_uno)",
        "sglang 0.5.20: python/sglang/srt/arg_groups/speculative_hook.py:346-508 (_handle_uno)",
        "sglang 0.5.20: python/sglang/srt/arg_groups/model_override_base.py:164-178 (attention_backends_of)",
        "sglang 0.5.22: python/sglang/srt/arg_groups/speculative_hook.py:432-594 (attn_dp_enabled_of)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:449-611 (_handle_uno)",
    ),
    sglang_versions=">=0.5.20",
    log_signatures=(
        r"UNO only supports CUDA\.",
        r"UNO reuses the target model and does not accept --speculative-draft-model-path",
        r"UNO requires --uno-lora-path\.",
        r"UNO does not support --enable-(deterministic-inference|strict-thinking)",
        r"UNO requires --speculative-(num-draft-tokens to be a positive|eagle-topk to be at least 1)",
        r"UNO tree mode (requires|currently supports|cannot|does not yet support|reuses EAGLE)",
        r"UNO requires TP=PP=1\.",
        r"UNO does not support DP attention or context parallelism\.",
        r"UNO requires FA3 for both prefill and decode attention",
    ),
)
