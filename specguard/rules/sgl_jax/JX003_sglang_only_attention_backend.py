"""JX003 sglang-only-attention-backend."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Dialect, Finding, Severity
from specguard.rules.base import (
    CheckContext,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.sgl_jax._jax import ATTENTION_BACKENDS, jax_example


def check(ctx: CheckContext) -> Iterator[Finding]:
    value = ctx.spec.get("attention_backend")
    if value is None or value in ATTENTION_BACKENDS:
        return
    yield RULE.finding(
        f"{ctx.flag('--attention-backend')} {value} is an SGLang (CUDA/ROCm) backend; sgl-jax only offers "
        f"{', '.join(ATTENTION_BACKENDS)} and argparse exits before anything loads. Use fa",
        flags=("--attention-backend",),
        fix=set_flags("use --attention-backend fa", Applicability.UNSAFE, attention_backend="fa"),
    )


RULE = Rule(
    check=check,
    code="JX003",
    category=Category.START,
    name="sglang-only-attention-backend",
    summary="sgl-jax: --attention-backend names a backend only SGLang has",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--attention-backend` in an sgl-jax launch against sgl-jax's choices "
        "(native, fa, fa_mha, dsa_sparse).",
        why="Commands copied from SGLang carry `fa3`, `flashinfer`, `triton` or `trtllm_mha`; sgl-jax's "
        "parser has `choices` for the flag, so the launch fails with an argparse error.",
        fix="Use `fa`, sgl-jax's default and the backend its speculative path is validated with.",
        fix_safety="Unsafe: the value changes (there is no equivalent of an SGLang kernel on TPU).",
    ),
    bad=jax_example("--attention-backend", "fa3", "--disable-overlap-schedule",
                    "--speculative-eagle-topk", "1", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4"),
    good=jax_example("--attention-backend", "fa", "--disable-overlap-schedule",
                     "--speculative-eagle-topk", "1", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4"),
    sources=(
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/server_args.py (--attention-backend choices)",
        "design: shared/design/dialects.md §2",
    ),
    dialects=(Dialect.SGL_JAX,),
)
