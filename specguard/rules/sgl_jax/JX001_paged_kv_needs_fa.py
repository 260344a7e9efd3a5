"""JX001 paged-kv-needs-fa."""

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
from specguard.rules.sgl_jax._jax import ATTENTION_BACKENDS, backend, jax_example


def check(ctx: CheckContext) -> Iterator[Finding]:
    pages = ctx.spec.get("page_size") or 1
    chosen = backend(ctx)
    if ctx.algorithm is None or pages <= 1 or chosen == "fa" or chosen not in ATTENTION_BACKENDS:
        return
    yield RULE.finding(
        f"{ctx.flag('--page-size')} {pages} needs paged attention, which sgl-jax's speculative path gets from "
        f"{ctx.flag('--attention-backend')} fa; {chosen} does not provide the paged metadata the EAGLE draft "
        "allocation expects. Use fa, or page size 1",
        flags=("--page-size", "--attention-backend"),
        fix=set_flags("use --attention-backend fa", Applicability.UNSAFE, attention_backend="fa"),
    )


RULE = Rule(
    check=check,
    code="JX001",
    category=Category.START,
    name="paged-kv-needs-fa",
    summary="sgl-jax: page size above 1 with an attention backend other than fa",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="sgl-jax launches with a speculative algorithm, `--page-size` above 1 and an "
        "`--attention-backend` among sgl-jax's other choices (native, fa_mha, dsa_sparse).",
        why="sgl-jax's speculative decoding guide: \"`--page-size` ... Values >1 require paged "
        "attention (`--attention-backend=fa`)\", and \"`--page-size 64` plus `--attention-backend=fa` "
        "gives us paged FlashAttention metadata that matches the EAGLE3 draft allocation logic\". "
        "fa is sgl-jax's default, so this only fires when another backend was typed.",
        fix="Use `--attention-backend fa` (the validated TPU command uses fa with page size 64), or "
        "page size 1.",
        fix_safety="Unsafe: another attention kernel runs.",
    ),
    bad=jax_example("--page-size", "64", "--attention-backend", "native", "--disable-overlap-schedule",
                    "--speculative-eagle-topk", "1", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4"),
    good=jax_example("--page-size", "64", "--attention-backend", "fa", "--disable-overlap-schedule",
                     "--speculative-eagle-topk", "1", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4"),
    sources=(
        "seed: sgl-jax-speculative-decoding.md (Enabling speculative decoding: --page-size; Quick start notes)",
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/server_args.py (attention_backend choices, default fa)",
        "design: shared/design/dialects.md §2",
    ),
    dialects=(Dialect.SGL_JAX,),
)
