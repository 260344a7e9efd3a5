"""JX080 dflash-grammar-backend-default."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Dialect, Edit, Finding, Severity
from specguard.rules.base import CheckContext, Rule, RuleDocs, fix_of
from specguard.rules.examples import QWEN3_8B_DFLASH
from specguard.rules.sgl_jax._jax import jax_example, raw_algorithm

# sglang-jax cddbf6f1 server_args.py:369-370: an unset --grammar-backend becomes llguidance in __post_init__.
DEFAULT_GRAMMAR_BACKEND = "llguidance"
GRAMMAR_OFF = ("none",)
_QWEN3_DFLASH = (*QWEN3_8B_DFLASH, "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
                 "--disable-overlap-schedule")


def grammar_backend(ctx: CheckContext) -> str | None:
    item = ctx.spec.item("--grammar-backend")
    return item.values[0] if item is not None and len(item.values) == 1 else None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if raw_algorithm(ctx) != "DFLASH":
        return
    backend = grammar_backend(ctx)
    if backend in GRAMMAR_OFF:
        return
    given = f"is {backend}" if backend else f"is unset, which sgl-jax turns into {DEFAULT_GRAMMAR_BACKEND}"
    flag = ctx.flag("--grammar-backend")
    yield RULE.finding(
        f"DFLASH on sgl-jax raises 'DFLASH does not support constrained decoding.' at argument checking "
        f"unless {flag} is none, and {flag} {given}. Add {flag} none (requests with a JSON schema or "
        "regex are then refused)",
        flags=("--grammar-backend",),
        fix=fix_of(f"set {flag} none", Applicability.UNSAFE, Edit(name="--grammar-backend", value="none")),
    )


RULE = Rule(
    check=check,
    code="JX080",
    category=Category.START,
    name="dflash-grammar-backend-default",
    summary="sgl-jax: DFLASH without --grammar-backend none (the llguidance default refuses to start)",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="sgl-jax launches with `--speculative-algorithm DFLASH` whose `--grammar-backend` is not `none` "
        "(unset included).",
        why="sgl-jax's `ServerArgs.__post_init__` replaces an unset grammar backend with `llguidance` "
        "(`python/sgl_jax/srt/server_args.py:369-370` at HEAD cddbf6f1), and `check_server_args` then raises "
        "`ValueError('DFLASH does not support constrained decoding.')` for any backend other than none "
        "(`:1931-1932`, added with DFLASH in sglang-jax #1467, 2026-07-28). So a DFLASH launch that copies "
        "SGLang's flags fails before the weights load unless it says `--grammar-backend none`; sgl-jax's own "
        "tests pass `grammar_backend='none'` (`python/sgl_jax/test/speculative/test_dflash_server_args.py`). "
        "SGLang instead accepts the launch and refuses grammar requests one by one.",
        fix="Add `--grammar-backend none`.",
        fix_safety="Unsafe: the server then refuses every constrained-decoding request (JSON schema, regex, EBNF).",
    ),
    bad=jax_example(base=_QWEN3_DFLASH),
    good=jax_example("--grammar-backend", "none", base=_QWEN3_DFLASH),
    sources=(
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/server_args.py:369-370 (grammar_backend None -> llguidance)",
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/server_args.py:1931-1932 (DFLASH does not support constrained decoding)",
        "sglang-jax 4406938a (#1467, 2026-07-28): [Feat] support DFlash",
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/test/speculative/test_dflash_server_args.py (grammar_backend='none')",
    ),
    dialects=(Dialect.SGL_JAX,),
    log_signatures=(
        r"DFLASH does not support constrained decoding",
    ),
)
