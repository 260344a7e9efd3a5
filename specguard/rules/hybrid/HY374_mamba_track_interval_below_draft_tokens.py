"""HY374 mamba-track-interval-below-draft-tokens."""

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
from specguard.rules.hybrid import HY312_mamba_lazy_buffer_spec_refused as HY312
from specguard.rules.hybrid._hybrid import (
    EXTRA_BUFFER_AUTO_ARCHITECTURES,
    mamba_strategy,
    runs_extra_buffer,
)
from specguard.rules.hybrid.HY370_mamba_no_buffer_overlap_schedule import (
    old_strategy_flag_refused,
)
from specguard.sglang_facts.architectures import GDN_ARCHITECTURES

INTERVAL = "--mamba-track-interval"
DRAFT_TOKENS = "--speculative-num-draft-tokens"
# ServerArgs.mamba_track_interval: 256 from 0.5.7 (server_args.py:474) to 0.5.23.
DEFAULT_INTERVAL = 256
# The Qwen gated-delta-net targets, which take the extra_buffer strategy in every release that knows them;
# other hybrid targets refuse it in some releases (0.5.13 server_args.py:2597), which is another error.
QWEN_GDN_ARCHITECTURES = EXTRA_BUFFER_AUTO_ARCHITECTURES & GDN_ARCHITECTURES


def _interval(ctx: CheckContext) -> int | None:
    item = ctx.spec.item(INTERVAL)
    if item is None or not item.values:
        return DEFAULT_INTERVAL
    try:
        return int(item.values[-1])
    except ValueError:
        return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.spec.get("speculative_num_draft_tokens")
    if ctx.algorithm is None or draft is None or ctx.target is None:
        return
    if ctx.target.architecture not in QWEN_GDN_ARCHITECTURES or ctx.spec.has(
        "--disable-radix-cache"
    ):
        return
    if old_strategy_flag_refused(ctx):
        return
    # extra_buffer needs CUDA and is asserted first elsewhere; a lazy buffer with speculation is HY312's
    # refusal up to 0.5.16.
    gpu = ctx.env.gpu
    if gpu is not None and gpu.platform != "cuda":
        return
    if not runs_extra_buffer(ctx) or (
        mamba_strategy(ctx) == "extra_buffer_lazy" and HY312.RULE.applies_to(ctx)
    ):
        return
    interval = _interval(ctx)
    if interval is None or interval >= draft:
        return
    yield RULE.finding(
        f"{ctx.flag(DRAFT_TOKENS)} {draft} exceeds the mamba track interval {interval} "
        f"({ctx.flag(INTERVAL)}{'' if ctx.spec.has(INTERVAL) else ', default'}) with the extra_buffer mamba "
        f"strategy on {ctx.target.architecture}: SGLang {ctx.version} asserts "
        f"mamba_track_interval >= speculative_num_draft_tokens while parsing the arguments. Raise "
        f"{ctx.flag(INTERVAL)} to at least {draft}",
        flags=(DRAFT_TOKENS, *((INTERVAL,) if ctx.spec.has(INTERVAL) else ())),
        fix=fix_of(
            "raise the mamba track interval",
            Applicability.UNSAFE,
            Edit(name=INTERVAL, value=str(draft)),
        ),
    )


QWEN3_NEXT_MTP_EXTRA_BUFFER = (
    "--model-path",
    "Qwen/Qwen3-Next-80B-A3B-Instruct",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
    "--mamba-scheduler-strategy",
    "extra_buffer",
)

RULE = Rule(
    check=check,
    code="HY374",
    category=Category.START,
    name="mamba-track-interval-below-draft-tokens",
    summary="--speculative-num-draft-tokens above --mamba-track-interval with the extra_buffer mamba strategy (0.5.7+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    sglang_versions=">=0.5.7",
    docs=RuleDocs(
        what="Any speculative algorithm on a Qwen gated-delta-net target (Qwen3-Next, Qwen3.5) with the radix cache "
        "on and the extra_buffer mamba strategy (typed, `extra_buffer_lazy` from 0.5.17, or `auto`, which "
        "resolves to it from 0.5.14), on CUDA, where the typed `--speculative-num-draft-tokens` is larger than "
        "`--mamba-track-interval` (default 256), SGLang 0.5.7 or later.",
        why="0.5.7 added the extra_buffer strategy (mamba radix cache v2) with the check `assert "
        'self.mamba_track_interval >= self.speculative_num_draft_tokens, f"mamba_track_interval '
        "{self.mamba_track_interval} must be greater than or equal to speculative_num_draft_tokens "
        '{self.speculative_num_draft_tokens}"` (0.5.7 server_args.py:1411-1419; 0.5.6.post2 has no '
        "mamba_track_interval); 0.5.9 moved it to `_handle_mamba_radix_cache` (server_args.py:1727-1735), 0.5.14 "
        "to `_validate_mamba_extra_buffer` without the message (server_args.py:4364-4378), and 0.5.23 keeps it "
        "in arg_groups/mamba_hook.py:131-133. The check runs before SGLang chooses its automatic speculative "
        "parameters (see HY312), so only a typed draft-token count reaches it.",
        fix="Raise `--mamba-track-interval` to at least the draft-token count, or draft fewer tokens.",
        fix_safety="Unsafe: mamba states are checkpointed less often, so prefixes are reused at a coarser grain.",
    ),
    bad=Example(
        argv=(*QWEN3_NEXT_MTP_EXTRA_BUFFER, INTERVAL, "2"),
        target={"architectures": ("Qwen3NextForCausalLM",)},
        gpu="H100",
        sglang_version="0.5.7",
    ),
    good=Example(
        argv=(*QWEN3_NEXT_MTP_EXTRA_BUFFER, INTERVAL, "4"),
        target={"architectures": ("Qwen3NextForCausalLM",)},
        gpu="H100",
        sglang_version="0.5.7",
    ),
    sources=(
        "sglang 0.5.6.post2: python/sglang/srt/server_args.py (no mamba_track_interval, no extra_buffer strategy)",
        "sglang 0.5.7: python/sglang/srt/server_args.py:474, 1411-1419",
        "sglang 0.5.9: python/sglang/srt/server_args.py:1727-1735",
        "sglang 0.5.14: python/sglang/srt/server_args.py:4364-4378",
        "sglang 0.5.23: python/sglang/srt/arg_groups/mamba_hook.py:114-133",
    ),
    log_signatures=(
        r"mamba_track_interval \d+ must be greater than or equal to speculative_num_draft_tokens \d+",
    ),
)
