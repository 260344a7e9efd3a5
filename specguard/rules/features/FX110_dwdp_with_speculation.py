"""FX110 dwdp-with-speculation."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import LLAMA31_8B, LLAMA31_8B_EAGLE3

FLAG = "--dwdp-size"


def _dwdp_size(ctx: CheckContext) -> int | None:
    item = ctx.spec.item(FLAG)
    if item is None or not item.values:
        return None
    try:
        return int(item.values[-1])
    except ValueError:
        return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    size = _dwdp_size(ctx)
    if ctx.algorithm is None or size is None or size <= 1:
        return
    yield RULE.finding(
        f"{ctx.flag(FLAG)} {size} (DWDP) with {ctx.algorithm}: SGLang {ctx.env.sglang_version} refuses speculative "
        "decoding under DWDP at argument time (AssertionError 'DWDP does not support speculative decoding "
        f"(MTP/draft workers)'). Drop {ctx.flag(FLAG)} or {ctx.flag('--speculative-algorithm')}.",
        flags=(FLAG, "--speculative-algorithm"),
    )


RULE = Rule(
    check=check,
    code="FX110",
    category=Category.START,
    name="dwdp-with-speculation",
    summary="--dwdp-size above 1 with a speculative algorithm is refused at argument time (0.5.17+)",
    severity=Severity.ERROR,
    sglang_versions=">=0.5.17",
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--dwdp-size` above 1 (Distributed Weight Data Parallelism) together with any "
        "`--speculative-algorithm`, SGLang 0.5.17 or later.",
        why="0.5.17 added DWDP; its argument handler asserts `speculative_algorithm is None` with 'DWDP does not "
        "support speculative decoding (MTP/draft workers)' (0.5.17 `server_args.py:6396-6398`, in `_handle_dwdp` "
        "after the checks that DWDP equals the TP size, runs PD null or prefill and has no EPLB). 0.5.19 moved it to "
        "`arg_groups/parallel_hook.py`, unchanged up to 0.5.23 (`parallel_hook.py:451-453`). 0.5.16 has no DWDP.",
        fix="Serve either with DWDP or with speculative decoding, not both.",
        fix_safety="No automatic fix: which one to drop is the user's choice.",
    ),
    bad=Example(argv=(*LLAMA31_8B_EAGLE3, "--tp-size", "2", FLAG, "2"), sglang_version="0.5.17"),
    good=Example(argv=(*LLAMA31_8B, "--tp-size", "2", FLAG, "2"), sglang_version="0.5.17"),
    sources=(
        "sglang 0.5.16: python/sglang/srt/server_args.py (no --dwdp-size)",
        "sglang 0.5.17: python/sglang/srt/server_args.py:1067-1075 (the flag), 6379-6398 (_handle_dwdp's assert)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/parallel_hook.py:433-453 (handle_dwdp, the same assert)",
    ),
    log_signatures=(r"DWDP does not support speculative decoding",),
)
