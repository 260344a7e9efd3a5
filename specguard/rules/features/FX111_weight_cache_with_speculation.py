"""FX111 weight-cache-with-speculation."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3

FLAG = "--weight-cache-mode"


def check(ctx: CheckContext) -> Iterator[Finding]:
    item = ctx.spec.item(FLAG)
    if ctx.algorithm is None or item is None or not item.values or item.values[-1] == "off":
        return
    mode = item.values[-1]
    yield RULE.finding(
        f"{ctx.flag(FLAG)} {mode} with {ctx.algorithm}: the weight-cache daemon does not export the draft model's "
        f"weights, so SGLang {ctx.env.sglang_version} raises ValueError '--weight-cache-mode is not supported together "
        f"with speculative decoding' at argument time. Use {ctx.flag(FLAG)} off (load from disk) with speculation.",
        flags=(FLAG, "--speculative-algorithm"),
        fix=fix_of(f"load the weights from disk ({FLAG} off)", Applicability.UNSAFE, Edit(name=FLAG, value=None)),
    )


RULE = Rule(
    check=check,
    code="FX111",
    category=Category.START,
    name="weight-cache-with-speculation",
    summary="--weight-cache-mode daemon or client with a speculative algorithm is refused at argument time (0.5.17+)",
    severity=Severity.ERROR,
    sglang_versions=">=0.5.17",
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--weight-cache-mode` other than `off` (`daemon`, `client`) together with any "
        "`--speculative-algorithm`, SGLang 0.5.17 or later.",
        why="0.5.17 added the weight cache (weights held by a daemon and loaded over IPC). The daemon exports only "
        "the target's weights, so `_handle_load_format` raises ValueError '--weight-cache-mode is not supported "
        "together with speculative decoding (--speculative-algorithm): the weight cache daemon does not export the "
        "draft model's weights' when the mode is not `off` and an algorithm is set (0.5.17 `server_args.py:7326-7332`). "
        "0.5.19 moved it to `arg_groups/model_path_hook.py`, unchanged up to 0.5.23 (`model_path_hook.py:281-287`). "
        "0.5.16 has no weight cache.",
        fix="Drop `--weight-cache-mode` (the default `off` loads from disk), or serve without speculation.",
        fix_safety="Unsafe: start-up loads the weights from disk instead of the daemon (slower start, same serving).",
    ),
    bad=Example(argv=(*LLAMA31_8B_EAGLE3, FLAG, "client"), sglang_version="0.5.17"),
    good=Example(argv=(*LLAMA31_8B_EAGLE3, FLAG, "off"), sglang_version="0.5.17"),
    sources=(
        "sglang 0.5.16: python/sglang/srt/server_args.py (no --weight-cache-mode)",
        "sglang 0.5.17: python/sglang/srt/server_args.py:3388-3401 (the flag), 7326-7332 (the ValueError)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/model_path_hook.py:281-287; arg_groups/fields/model.py:377-389",
    ),
    log_signatures=(r"--weight-cache-mode is not supported together with speculative decoding",),
)
