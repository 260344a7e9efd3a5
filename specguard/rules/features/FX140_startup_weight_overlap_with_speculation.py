"""FX140 startup-weight-overlap-with-speculation."""

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

MODE = "--startup-weight-load-mode"


def check(ctx: CheckContext) -> Iterator[Finding]:
    item = ctx.spec.item(MODE)
    if ctx.algorithm is None or item is None or not item.values or item.values[-1] != "overlap":
        return
    yield RULE.finding(
        f"{ctx.flag(MODE)} overlap with {ctx.algorithm} in SGLang {ctx.version}: the overlapped start-up loader "
        "refuses speculative decoding, so loading the target model raises \"ValueError: "
        "--startup-weight-load-mode=overlap is not supported: speculative decoding is not supported\" before "
        f"the server starts. Drop {ctx.flag(MODE)} (serial is the default)",
        flags=(MODE, "--speculative-algorithm"),
        fix=fix_of(f"drop {MODE}", Applicability.UNSAFE, Edit(name=MODE, value=None)),
    )


RULE = Rule(
    check=check,
    code="FX140",
    category=Category.START,
    name="startup-weight-overlap-with-speculation",
    summary="--startup-weight-load-mode overlap with a speculative algorithm fails at model load (0.5.18+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--startup-weight-load-mode overlap` together with any `--speculative-algorithm`, SGLang 0.5.18 or later.",
        why="0.5.18 added the flag: with `overlap`, model loading goes through "
        "`StartupWeightLoadManager.create_from_server_args` (model_runner_components/load_model_utils.py:306-320), "
        "whose support matrix lists `speculative_algorithm is not None` as \"speculative decoding is not supported\" "
        "(startup_weight_load.py:350-353) and raises a ValueError for it (:300-310) when the target model loads. "
        "The refusal is unchanged up to 0.5.23 (startup_weight_load.py:315-317, :358-361). 0.5.17 has no such flag.",
        fix="Drop the flag (the default `serial` loads the weights before CUDA-graph capture).",
        fix_safety="Unsafe: it changes how start-up loads the weights (slower start), not what is served.",
    ),
    bad=Example(argv=(*LLAMA31_8B_EAGLE3, MODE, "overlap"), sglang_version="0.5.18"),
    good=Example(argv=(*LLAMA31_8B_EAGLE3, MODE, "serial"), sglang_version="0.5.18"),
    sources=(
        "sglang 0.5.17: python/sglang/srt/model_executor/model_runner_components/load_model_utils.py:258-297 (loads directly; no such flag)",
        "sglang 0.5.18: python/sglang/srt/model_executor/model_runner_components/load_model_utils.py:306-320",
        "sglang 0.5.18: python/sglang/srt/model_executor/model_runner_components/startup_weight_load.py:300-310,350-353",
        "sglang 0.5.23: python/sglang/srt/model_executor/model_runner_components/startup_weight_load.py:315-317,358-361",
    ),
    sglang_versions=">=0.5.18",
    log_signatures=(r"--startup-weight-load-mode=overlap is not supported: speculative decoding is not supported",),
)
