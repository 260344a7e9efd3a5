"""JX237 dflash-block-beyond-trained."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Dialect, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, set_flags
from specguard.rules.examples import QWEN3_8B_DFLASH
from specguard.rules.sgl_jax._jax import raw_algorithm, runnable_in


def check(ctx: CheckContext) -> Iterator[Finding]:
    if raw_algorithm(ctx) != "DFLASH" or "DFLASH" not in runnable_in(ctx.env.sgl_jax_built):
        return
    typed = ctx.spec.get("speculative_num_draft_tokens")
    trained = ctx.draft.block_size if ctx.draft is not None else None
    # A smaller block than the draft was trained for may be deliberate (fewer tokens per step).
    if typed is None or trained is None or typed <= trained:
        return
    flag = ctx.flag("--speculative-num-draft-tokens")
    yield RULE.finding(
        f"DFLASH on sgl-jax with {flag} {typed}, but the draft's config.json gives block_size {trained}: sgl-jax "
        f"keeps a typed value (it takes block_size only when the flag is left out), so the draft denoises blocks "
        f"of {typed} tokens, {typed - trained} more than it was trained to predict, which the target then mostly "
        f"rejects while each verify pays for all {typed}. Drop {flag} (sgl-jax then uses block_size)",
        flags=("--speculative-num-draft-tokens",),
        fix=set_flags(f"drop {flag}", Applicability.SAFE, speculative_num_draft_tokens=None),
    )


def _example(*extra: str) -> Example:
    return Example(
        argv=(*QWEN3_8B_DFLASH, "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
              "--grammar-backend", "none", *extra),
        draft={"block_size": 16},
        dialect=Dialect.SGL_JAX,
        gpu="TPU-v6e",
    )


RULE = Rule(
    check=check,
    code="JX237",
    category=Category.PERF,
    name="dflash-block-beyond-trained",
    summary="sgl-jax: DFLASH with typed draft tokens above the draft's trained block_size",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="sgl-jax DFLASH launches whose typed `--speculative-num-draft-tokens` is larger than the DFlash "
        "draft's config.json `block_size`.",
        why="From DFLASH's arrival (sglang-jax #1467, 4406938a, 2026-07-28) `check_server_args` replaces the "
        "draft-token count by the draft config's `block_size` only when the flag was not typed "
        "(4406938a server_args.py:1825-1849; cddbf6f1 :1902-1928), and the DFLASH worker drafts blocks of "
        "exactly `speculative_num_draft_tokens` (dflash_worker.py:95 `self.block_size = "
        "self.speculative_num_draft_tokens`, the same at cddbf6f1). Nothing compares the typed value with the "
        "draft's block size, while SGLang refuses more draft tokens than the block size (PL003). Positions past the "
        "trained block are out of the draft's training, so they are rarely accepted and every verify pays for them. "
        "A smaller block is left alone: it may be chosen to draft less.",
        fix="Drop `--speculative-num-draft-tokens` (sgl-jax then uses the draft's block_size), or type at most block_size.",
        fix_safety="Safe: it only changes how many tokens the draft proposes per step, not what the target accepts.",
    ),
    bad=_example("--speculative-num-draft-tokens", "32"),
    good=_example("--speculative-num-draft-tokens", "8"),
    sources=(
        "sglang-jax b859cf17 (4406938a^): python/sgl_jax/srt/server_args.py:1433 (no DFLASH among the choices)",
        "sglang-jax 4406938a (#1467): python/sgl_jax/srt/server_args.py:1825-1849; speculative/dflash_worker.py:95; speculative/dflash_util.py:59-68",
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/server_args.py:1902-1928; speculative/dflash_worker.py:95",
    ),
    dialects=(Dialect.SGL_JAX,),
)
