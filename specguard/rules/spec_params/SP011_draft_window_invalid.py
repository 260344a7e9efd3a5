"""SP011 draft-window-invalid."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.AB420_eagle3_draft_window_triton_multi_step import (
    WINDOWED_HEAD,
)
from specguard.rules.attention.backends import (
    draft_decode_backend,
)
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import QWEN3_8B_DFLASH
from specguard.rules.spec_params._shared import int_flag
from specguard.sglang_facts.algorithms import DRAFT_WINDOW_ALGORITHMS
from specguard.sglang_facts.changes import (
    DRAFT_SINK_FLAG,
    DRAFT_WINDOW_ANY_ALGORITHM,
    Change,
)

WINDOW = "--speculative-draft-window-size"
DFLASH_WINDOW = "--speculative-dflash-draft-window-size"  # the 0.5.11 spelling, an alias until 0.5.19
SINK = "--speculative-draft-sink-size"
# 0.5.23 honours the window for EAGLE (MTP/NEXTN draft decode), EAGLE3 and DFLASH.
WINDOW_ALGORITHMS = DRAFT_WINDOW_ALGORITHMS
# EAGLE (MTP/NEXTN) draft decode applies the window from 0.5.21, and only in the triton and flashinfer multi-step
# draft backends (resolve_draft_decode_window; 0.5.21 triton_backend.py:2417, flashinfer_backend.py:2369; 0.5.23
# :2548, :2489), which exist only with more than one step (speculative/draft_utils.py create_decode_backend).
EAGLE_DRAFT_DECODE_WINDOW = Change("0.5.21", "0.5.21 speculative/spec_utils.py:242-274 resolve_draft_decode_window, called by the triton and flashinfer multi-step draft backends")
WINDOWED_DRAFT_DECODE_BACKENDS = frozenset({"triton", "flashinfer"})


def _eagle_window_unused(ctx: CheckContext) -> str | None:
    """Why an EAGLE launch's draft decode never applies the window (None: it does, or specguard cannot tell)."""
    if ctx.algorithm != "EAGLE" or not EAGLE_DRAFT_DECODE_WINDOW.present_in(ctx.version) or ctx.spec.has("--enable-multi-layer-eagle"):
        return None
    if ctx.draft is not None and ctx.draft.architecture == WINDOWED_HEAD:
        return None  # the head windows its own layers from the flag whatever the algorithm (0.5.21 llama_eagle3.py:277-288)
    steps = ctx.resolution.num_steps
    if steps is not None and steps <= 1:
        return "one draft step runs no multi-step draft decode"
    backend = draft_decode_backend(ctx)
    if backend is None or backend in WINDOWED_DRAFT_DECODE_BACKENDS:
        return None
    return f"the draft decodes on {backend}, and only the triton and flashinfer draft backends apply it"


def _window_checked(ctx: CheckContext) -> bool:
    """0.5.11-0.5.12.post1 check the window inside the DFLASH branch only; 0.5.13 for every algorithm."""
    return ctx.algorithm == "DFLASH" or DRAFT_WINDOW_ANY_ALGORITHM.present_in(ctx.version)


def check(ctx: CheckContext) -> Iterator[Finding]:
    window = ctx.spec.get("speculative_draft_window_size")
    sink = int_flag(ctx, SINK)
    if window is not None and window <= 0 and _window_checked(ctx):
        item = ctx.spec.item(WINDOW)
        # 0.5.11 knows only the DFLASH spelling; name the one the user wrote.
        written = item.written if item is not None else None
        spelled = DFLASH_WINDOW if written is not None and written.endswith(DFLASH_WINDOW[2:]) else WINDOW
        yield RULE.finding(
            f"{ctx.flag(spelled)} must be positive: SGLang raises for {window} at argument time",
            flags=(WINDOW,),
            fix=fix_of(f"drop {WINDOW}", Applicability.UNSAFE, Edit(name=WINDOW, value=None), Edit(name=SINK, value=None)),
        )
        return
    if ctx.version >= DRAFT_SINK_FLAG.release and sink is not None:
        if sink < 0:
            yield RULE.finding(
                f"{ctx.flag(SINK)} must be non-negative: SGLang raises for {sink} at argument time",
                flags=(SINK,),
                fix=fix_of(f"drop {SINK}", Applicability.UNSAFE, Edit(name=SINK, value=None)),
            )
        elif window is None:
            yield RULE.finding(
                f"{ctx.flag(SINK)} requires {ctx.flag(WINDOW)}: SGLang raises at argument time",
                flags=(SINK,),
                fix=fix_of(f"drop {SINK}", Applicability.UNSAFE, Edit(name=SINK, value=None)),
            )
    if window is not None and ctx.algorithm is not None and ctx.algorithm not in WINDOW_ALGORITHMS and ctx.version >= DRAFT_SINK_FLAG.release:
        yield RULE.finding(
            f"{ctx.flag(WINDOW)} has no effect with {ctx.algorithm} (SGLang only warns): only DFLASH, EAGLE3 and "
            "the EAGLE/MTP draft decode use it",
            flags=(WINDOW,),
            fix=fix_of(f"drop {WINDOW}, which {ctx.algorithm} ignores", Applicability.SAFE,
                       Edit(name=WINDOW, value=None), Edit(name=SINK, value=None)),
            severity=Severity.WARNING,
        )
    unused = _eagle_window_unused(ctx) if window is not None else None
    if unused is not None:
        yield RULE.finding(
            f"{ctx.flag(WINDOW)} has no effect here (SGLang says nothing): {unused}, so the EAGLE draft attends the "
            "whole context",
            flags=(WINDOW,),
            fix=fix_of(f"drop {WINDOW}, which this draft decode ignores", Applicability.SAFE,
                       Edit(name=WINDOW, value=None), Edit(name=SINK, value=None)),
            severity=Severity.WARNING,
        )


RULE = Rule(
    check=check,
    code="SP011",
    category=Category.START,
    name="draft-window-invalid",
    summary="--speculative-draft-window-size / --speculative-draft-sink-size out of range or without effect",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="Checks the draft KV window (0.5.11+, DFLASH only before 0.5.13) and sink (0.5.21+) sizes.",
        why="SGLang validates them before any algorithm handler: a window <= 0, a negative sink, or a sink "
        "without a window raise a ValueError; a window with an algorithm that does not use it is only "
        "warned about (catalogue P54; 0.5.23 speculative_hook.py:197-235). The window check came with DFLASH "
        "in 0.5.11 as `--speculative-dflash-draft-window-size` (server_args.py:3378-3384, inside the DFLASH branch at :3319) "
        "and was kept there for `--speculative-draft-window-size` in 0.5.12 and 0.5.12.post1 "
        "(server_args.py:3648-3653), and runs for every algorithm from 0.5.13 (arg_groups/speculative_hook.py:79-87). "
        "DFLASH's own window >= block-size check is PL003. From 0.5.21 the EAGLE/MTP draft decode applies the window "
        "only in the triton and flashinfer multi-step draft backends (speculative/spec_utils.py:242-274, called from "
        "triton_backend.py:2417 and flashinfer_backend.py:2369), which one draft step never builds; on any other draft "
        "backend the flag is silently unused (0.5.23 the same: triton_backend.py:2548, flashinfer_backend.py:2489), "
        "unless the draft is a `LlamaForCausalLMEagle3` head, which windows its own layers from the flag whatever the "
        "algorithm (0.5.21 models/llama_eagle3.py:277-288).",
        fix="Drop the invalid or ignored values.",
        fix_safety="Dropping an ignored window is safe; the others change the draft cache and are unsafe.",
    ),
    bad=Example(
        argv=(*QWEN3_8B_DFLASH, "--speculative-dflash-draft-window-size", "0"),
        sglang_version="0.5.11",
    ),
    good=Example(
        argv=(*QWEN3_8B_DFLASH, "--speculative-dflash-draft-window-size", "2048"),
        sglang_version="0.5.11",
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:197-235",
        "sglang 0.5.20: python/sglang/srt/arg_groups/speculative_hook.py:132-150 (the window honoured by EAGLE3 and DFLASH only)",
        "sglang 0.5.21: python/sglang/srt/speculative/spec_utils.py:242-274",
        "sglang 0.5.21: python/sglang/srt/layers/attention/triton_backend.py:2417; flashinfer_backend.py:2369",
        "sglang 0.5.23: python/sglang/srt/layers/attention/triton_backend.py:2548; flashinfer_backend.py:2489",
        "sglang 0.5.21: python/sglang/srt/models/llama_eagle3.py:277-288",
        "sglang 0.5.13: python/sglang/srt/arg_groups/speculative_hook.py:79-87",
        "sglang 0.5.12: python/sglang/srt/server_args.py:3589, 3648-3653 (DFLASH branch)",
        "sglang 0.5.11: python/sglang/srt/server_args.py:3319, 3378-3384 (--speculative-dflash-draft-window-size, DFLASH branch)",
        "catalogue: shared/design/sglang-spec-checks.md P54",
    ),
    sglang_versions=">=0.5.11",
)
