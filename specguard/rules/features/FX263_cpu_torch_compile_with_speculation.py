"""FX263 cpu-torch-compile-with-speculation."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE3

COMPILE = "--enable-torch-compile"
CPU_EAGLE3 = (*LLAMA31_8B_EAGLE3, "--device", "cpu")


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm is None
        or ctx.spec.get("device") != "cpu"
        or not ctx.spec.get("enable_torch_compile")
    ):
        return
    # A PD prefill server skips graph capture in the releases that know it; quiet rather than guess.
    if ctx.spec.get("disaggregation_mode") == "prefill":
        return
    yield RULE.finding(
        f"{ctx.flag('--device')} cpu with {ctx.flag(COMPILE)} makes SGLang {ctx.version} capture CPU graphs with "
        f"CPUGraphRunner, which asserts no speculative algorithm: with {ctx.algorithm} the target model runner fails "
        f"with 'CPUGraphRunner does not support speculative inference yet.' at start-up. Drop {ctx.flag(COMPILE)}",
        flags=("--device", COMPILE, "--speculative-algorithm"),
        fix=fix_of(
            f"drop {COMPILE}", Applicability.UNSAFE, Edit(name=COMPILE, value=None)
        ),
    )


RULE = Rule(
    check=check,
    code="FX263",
    category=Category.START,
    name="cpu-torch-compile-with-speculation",
    summary="--device cpu with --enable-torch-compile and speculation fails CPU graph capture (0.5.2+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--device cpu` with `--enable-torch-compile` and any `--speculative-algorithm` (not a PD prefill "
        "server), SGLang 0.5.2 or later.",
        why="0.5.2 adds CPU graph capture: on `--device cpu` with `--enable-torch-compile`, `init_device_graphs` "
        "builds a CPUGraphRunner (0.5.2 model_runner.py:1734-1762), whose constructor asserts "
        "`spec_algorithm == NONE` ('CPUGraphRunner does not support speculative inference yet.', "
        "cpu_graph_runner.py:393-395), so the target model runner fails at start-up. 0.5.2rc2 has no "
        "cpu_graph_runner.py and captures nothing on CPU. Unchanged in 0.5.23 "
        "(model_runner_components/cuda_graph_setup.py:735-780; cpu_graph_runner.py:663-664), where a PD prefill "
        "server skips capture (cuda_graph_setup.py:718-725).",
        fix="Drop `--enable-torch-compile` (CPU graphs are then not captured).",
        fix_safety="Unsafe: the CPU forward runs eagerly (slower), not what is served.",
    ),
    bad=Example(argv=(*CPU_EAGLE3, COMPILE), sglang_version="0.5.2"),
    good=Example(argv=CPU_EAGLE3, sglang_version="0.5.2"),
    sources=(
        "sglang 0.5.2rc2: python/sglang/srt/model_executor/ (no cpu_graph_runner.py)",
        "sglang 0.5.2: python/sglang/srt/model_executor/model_runner.py:1734-1762",
        "sglang 0.5.2: python/sglang/srt/model_executor/cpu_graph_runner.py:393-395",
        "sglang 0.5.23: python/sglang/srt/model_executor/model_runner_components/cuda_graph_setup.py:718-725,735-780",
        "sglang 0.5.23: python/sglang/srt/model_executor/cpu_graph_runner.py:663-664",
    ),
    sglang_versions=">=0.5.2",
    log_signatures=(r"CPUGraphRunner does not support speculative inference yet",),
)
