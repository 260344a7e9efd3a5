"""JX234 eagle-verify-ignores-grammar."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import (
    Applicability,
    Category,
    Dialect,
    Edit,
    Finding,
    RequestFeature,
    Severity,
)
from specguard.rules.base import CheckContext, Rule, RuleDocs, fix_of
from specguard.rules.sgl_jax._jax import (
    TOPK_DRAFT_ALGORITHMS,
    jax_example,
    raw_algorithm,
    runnable_in,
)
from specguard.rules.sgl_jax.JX080_dflash_grammar_backend_default import (
    GRAMMAR_OFF,
    grammar_backend,
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    algorithm = raw_algorithm(ctx)
    # DFLASH refuses a grammar backend at start (JX080); the EAGLE-family verify just skips it.
    if algorithm not in TOPK_DRAFT_ALGORITHMS or algorithm not in runnable_in(ctx.env.sgl_jax_built):
        return
    # Only a backend the launch names shows it serves structured output (severity.FEATURE_FLAGS); the
    # unset default (llguidance) stays quiet, as any client may or may not send such requests.
    backend = grammar_backend(ctx)
    if backend is None or backend in GRAMMAR_OFF:
        return
    flag = ctx.flag("--grammar-backend")
    yield RULE.finding(
        f"{algorithm} on sgl-jax with {flag} {backend}: the speculative verify never applies the grammar's "
        "vocab mask (nor penalties), so requests with a JSON schema, regex or EBNF are answered without their "
        "constraint and may return text that does not match it. Serve structured output without "
        f"speculation, or set {flag} none so such requests are refused instead",
        flags=("--speculative-algorithm", "--grammar-backend"),
        fix=fix_of(f"set {flag} none", Applicability.UNSAFE, Edit(name="--grammar-backend", value="none")),
    )


_EAGLE3 = ("--speculative-eagle-topk", "1", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4",
           "--disable-overlap-schedule")

RULE = Rule(
    check=check,
    code="JX234",
    category=Category.WRONG_OUTPUT,
    needs=RequestFeature.STRUCTURED_OUTPUT,
    name="eagle-verify-ignores-grammar",
    summary="sgl-jax: EAGLE/EAGLE3/NEXTN verify ignores the grammar mask, structured output comes out unconstrained",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="sgl-jax EAGLE, EAGLE3 or NEXTN launches that name a `--grammar-backend` other than `none` (an "
        "unset backend, which sgl-jax fills in as llguidance, stays quiet: the launch does not show structured output).",
        why="sgl-jax's target verify samples the accepted tokens with the grammar mask, penalties and custom "
        "logit processors left as TODOs (f671c326 speculative/eagle_util.py:826-834; cddbf6f1 "
        "speculative/eagle_info.py:648-656, still commented out), and the fused verify kernels of #1293 "
        "(b735f16e) do not apply them either (overlap_utils.py can_use_spec_decode_overlap: 'neither the fused "
        "overlap verify kernel ... nor the non-overlap verify path currently applies grammar / vocab_mask / "
        "penalty constraints'). The scheduler refuses grammar requests only for DFLASH (cddbf6f1 scheduler.py:167). "
        "Since structured output arrived (#354, 098aa6f6, before speculation) an unset backend becomes "
        "llguidance (f671c326 server_args.py:208-209), so a speculative server accepts JSON-schema/regex/EBNF "
        "requests and answers them unconstrained. The launch cannot show whether clients send such requests.",
        fix="Serve structured output from a server without speculative decoding, or set `--grammar-backend none`.",
        fix_safety="Unsafe: `--grammar-backend none` makes the server refuse every constrained request.",
    ),
    bad=jax_example(*_EAGLE3, "--grammar-backend", "llguidance"),
    good=jax_example(*_EAGLE3, "--grammar-backend", "none"),
    sources=(
        "sglang-jax f671c326 (#378): python/sgl_jax/srt/speculative/eagle_util.py:826-834 (TODO: apply grammar mask, penalty)",
        "sglang-jax f671c326: python/sgl_jax/srt/server_args.py:208-209 (grammar_backend None -> llguidance)",
        "sglang-jax b735f16e (#1293): python/sgl_jax/srt/speculative/overlap_utils.py (fused verify applies no grammar)",
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/speculative/eagle_info.py:648-656; managers/scheduler.py:167 (DFLASH only)",
    ),
    dialects=(Dialect.SGL_JAX,),
)
