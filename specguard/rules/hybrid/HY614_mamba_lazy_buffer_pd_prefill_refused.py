"""HY614 mamba-lazy-buffer-pd-prefill-refused."""

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
from specguard.rules.hybrid._hybrid import (
    EXTRA_BUFFER_AUTO_ARCHITECTURES,
    extra_buffer_fix,
    mamba_strategy,
    strategy_flag,
    typed_strategy_flags,
)
from specguard.sglang_facts.changes import Change

# 0.5.17 lets extra_buffer_lazy run with speculation (0.5.13-0.5.16 refused it with any: HY312) but refuses it under
# PD disaggregation (server_args.py:5593-5598); 0.5.18 server_args.py:5812-5817 and 0.5.23 arg_groups/mamba_hook.py:
# 123-128 keep the refusal.
LAZY_BUFFER_PD_REFUSED = Change(
    "0.5.17",
    "0.5.17 server_args.py:5593-5598 (0.5.16 :4840-4843 refuses extra_buffer_lazy with any speculation instead)",
)
# What SGLang asserts (0.5.17 server_args.py:5595-5598):
#   extra_buffer_lazy unsupported under PD disaggregation; use --mamba-radix-cache-strategy extra_buffer.


def _reaches_pd_assert(ctx: CheckContext) -> bool:
    """_validate_mamba_extra_buffer runs (radix cache on, which a PD decode server turns off unless its own radix
    cache is asked for: 0.5.17 arg_groups/pd_disaggregation_hook.py:55-84, refused with speculation) and passes its
    first check, an architecture with extra_buffer on the triton linear-attention backend (overrides.py:1453-1458)."""
    linear = [
        item.values[0]
        for item in ctx.spec.items
        if item.flag == "--linear-attn-backend" and item.values
    ]
    return (
        ctx.spec.get("disaggregation_mode") == "prefill"
        and not ctx.spec.has("--disable-radix-cache")
        and ctx.target is not None
        and ctx.target.architecture in EXTRA_BUFFER_AUTO_ARCHITECTURES
        and (not linear or linear[-1] == "triton")
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm is None
        or not LAZY_BUFFER_PD_REFUSED.present_in(ctx.version)
        or mamba_strategy(ctx) != "extra_buffer_lazy"
        or not _reaches_pd_assert(ctx)
    ):
        return
    flag = strategy_flag(ctx)
    yield RULE.finding(
        f"{flag} extra_buffer_lazy on the PD prefill server ({ctx.flag('--disaggregation-mode')} prefill) in SGLang "
        f"{ctx.version}: the mamba radix-cache check refuses it while parsing the arguments (AssertionError "
        '"extra_buffer_lazy unsupported under PD disaggregation; use --mamba-radix-cache-strategy extra_buffer."), '
        f"with or without speculation. Use {flag} extra_buffer",
        flags=(
            *typed_strategy_flags(ctx),
            "--disaggregation-mode",
        ),
        fix=extra_buffer_fix(ctx),
    )


_QWEN35_MTP_PD_PREFILL = (
    "--model-path",
    "Qwen/Qwen3.5-35B-A3B",
    "--speculative-algorithm",
    "NEXTN",
    "--disaggregation-mode",
    "prefill",
    "--mamba-radix-cache-strategy",
)
_QWEN35 = {"architectures": ("Qwen3_5MoeForConditionalGeneration",)}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="HY614",
    category=Category.START,
    name="mamba-lazy-buffer-pd-prefill-refused",
    summary="--mamba-radix-cache-strategy extra_buffer_lazy on a PD prefill server is refused at start-up (0.5.17+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--mamba-radix-cache-strategy` (or `--mamba-scheduler-strategy`) `extra_buffer_lazy` with "
        "`--disaggregation-mode prefill`, radix cache on, on a hybrid mamba target with extra_buffer (Qwen3-Next, "
        "Qwen3.5, Nemotron-H, Falcon-H1) and the triton linear-attention backend, a speculative launch, SGLang 0.5.17 "
        "or later.",
        why="0.5.17 lifts the 0.5.13-0.5.16 refusal of extra_buffer_lazy with speculation (HY312; 0.5.16 "
        "server_args.py:4840-4843) but asserts 'extra_buffer_lazy unsupported under PD disaggregation; use "
        "--mamba-radix-cache-strategy extra_buffer.' when disaggregation_mode is not null (0.5.17 "
        "server_args.py:5593-5598, reached through _handle_mamba_radix_cache :5625-5643 whenever the radix cache is "
        "on). A PD decode server runs with the radix cache off unless its decode radix cache is asked for, which "
        "speculation refuses (arg_groups/pd_disaggregation_hook.py:55-84), so only the prefill server meets the "
        "assertion. 0.5.18 keeps it (server_args.py:5812-5817), as does 0.5.23 (arg_groups/mamba_hook.py:123-128).",
        fix="Track mamba state with `extra_buffer` on the prefill server.",
        fix_safety="Unsafe: extra_buffer keeps a mamba state slot per request from the start (more memory).",
    ),
    bad=Example(
        argv=(*_QWEN35_MTP_PD_PREFILL, "extra_buffer_lazy"),
        target=_QWEN35,
        sglang_version="0.5.17",
    ),
    good=Example(
        argv=(*_QWEN35_MTP_PD_PREFILL, "extra_buffer"),
        target=_QWEN35,
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.16: python/sglang/srt/server_args.py:4840-4843",
        (
            "sglang 0.5.17: python/sglang/srt/server_args.py:5584-5643; arg_groups/pd_disaggregation_hook.py:55-84; "
            "arg_groups/overrides.py:1453-1458"
        ),
        "sglang 0.5.18: python/sglang/srt/server_args.py:5812-5817",
        "sglang 0.5.23: python/sglang/srt/arg_groups/mamba_hook.py:123-128",
    ),
    sglang_versions=">=0.5.17",
    log_signatures=(r"extra_buffer_lazy unsupported under PD disaggregation",),
)
