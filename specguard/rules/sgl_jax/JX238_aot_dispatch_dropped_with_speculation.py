"""JX238 aot-dispatch-dropped-with-speculation."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Dialect, Edit, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of
from specguard.rules.sgl_jax._jax import jax_example, raw_algorithm, runnable_in
from specguard.sglang_facts.sgl_jax import AOT_DISPATCH

VAR = "SGLANG_JAX_AOT_DISPATCH"
# aot_dispatch.py aot_dispatch_requested(): the values that ask for it ("0", the default, is off).
REQUESTED = ("auto", "1")


def check(ctx: CheckContext) -> Iterator[Finding]:
    built = ctx.env.sgl_jax_built
    if raw_algorithm(ctx) not in runnable_in(built) or (built is not None and not AOT_DISPATCH.present_in(built)):
        return
    value = ctx.spec.env_value(VAR)
    if value not in REQUESTED:
        return
    yield RULE.finding(
        f"{VAR}={value} with {raw_algorithm(ctx)}: sgl-jax does not combine AOT dispatch with speculative decoding; "
        "it logs 'SGLANG_JAX_AOT_DISPATCH is set but speculative decoding is enabled; falling back to the stock "
        "pjit dispatch path' and runs without it, so the host-dispatch saving it was set for does not happen. "
        f"Unset {VAR}, or serve without speculation to keep it",
        flags=(VAR,),
        fix=fix_of(f"unset {VAR}", Applicability.SAFE, Edit(target="env", name=VAR, value=None)),
    )


_EAGLE3 = ("--speculative-eagle-topk", "1", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4",
           "--disable-overlap-schedule")


def _example(env: dict[str, str]) -> Example:
    base = jax_example(*_EAGLE3)
    return Example(argv=base.argv, env=env, dialect=base.dialect, gpu=base.gpu)


RULE = Rule(
    check=check,
    code="JX238",
    category=Category.PERF,
    name="aot-dispatch-dropped-with-speculation",
    summary="sgl-jax: SGLANG_JAX_AOT_DISPATCH is ignored when speculative decoding is on",
    severity=Severity.INFO,
    docs=RuleDocs(
        what=f"sgl-jax speculative launches with `{VAR}` set to `auto` or `1`.",
        why="sglang-jax #1478 (393453d7, 2026-07-28) adds opt-in AOT dispatch (aot_dispatch.py:41-55: `auto` or "
        "`1` asks for it), but `ModelRunner.initialize_jit` turns it off with a warning whenever "
        "`speculative_algorithm` is set (393453d7 model_runner.py:286-292, 'interaction not yet supported'; the "
        "same at cddbf6f1 :313-319). The launch runs, on the stock pjit dispatch path, without the saving the "
        "variable was set for. Before #1478 the variable does not exist.",
        fix=f"Unset `{VAR}` (it has no effect with speculation), or serve without speculative decoding.",
        fix_safety="Safe: with a speculative algorithm sgl-jax ignores the variable anyway.",
    ),
    bad=_example({VAR: "auto"}),
    good=_example({VAR: "0"}),
    sources=(
        "sglang-jax 240d0ae8 (393453d7^): no aot_dispatch.py",
        "sglang-jax 393453d7 (#1478): python/sgl_jax/srt/model_executor/aot_dispatch.py:41-55; model_runner.py:286-292",
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/model_executor/aot_dispatch.py:41-52; model_runner.py:305-319",
    ),
    dialects=(Dialect.SGL_JAX,),
    log_signatures=(r"SGLANG_JAX_AOT_DISPATCH is set but speculative decoding is enabled",),
)
