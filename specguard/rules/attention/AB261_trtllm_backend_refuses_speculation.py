"""AB261 trtllm-backend-refuses-speculation."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.changes import (
    TRTLLM_MHA_SPEC_REFUSED,
    TRTLLM_MLA_DECODE_FLAG_CHECKED,
)

ATTENTION = "--attention-backend"
PREFILL = "--prefill-attention-backend"
DECODE = "--decode-attention-backend"
DEST = {
    ATTENTION: "attention_backend",
    PREFILL: "prefill_attention_backend",
    DECODE: "decode_attention_backend",
}


def _checked_flags(ctx: CheckContext, backend: str) -> tuple[str, ...]:
    """The backend flags ServerArgs compares with ``backend`` in this release (none: no refusal)."""
    if backend == "trtllm_mha":
        return (
            (ATTENTION, DECODE, PREFILL)
            if TRTLLM_MHA_SPEC_REFUSED.present_in(ctx.version)
            else ()
        )
    if backend == "trtllm_mla":
        return (
            (ATTENTION, DECODE)
            if TRTLLM_MLA_DECODE_FLAG_CHECKED.present_in(ctx.version)
            else (ATTENTION,)
        )
    return ()


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None:
        return
    for backend in ("trtllm_mla", "trtllm_mha"):
        typed = tuple(
            flag
            for flag in _checked_flags(ctx, backend)
            if ctx.spec.get(DEST[flag]) == backend
        )
        if not typed:
            continue
        yield RULE.finding(
            f"{', '.join(ctx.flag(flag) for flag in typed)} {backend} with {ctx.algorithm}: SGLang {ctx.version} raises "
            f"ValueError '{backend} backend does not support speculative decoding yet.' at argument time (on a GPU "
            f"other than Blackwell its SM100 check refuses {backend} first). Use another backend, or SGLang 0.5.1 or later",
            flags=(*typed, "--speculative-algorithm"),
            fix=fix_of(
                f"drop {backend}",
                Applicability.UNSAFE,
                *(Edit(name=flag, value=None) for flag in typed),
            ),
        )


RULE = Rule(
    check=check,
    code="AB261",
    category=Category.START,
    name="trtllm-backend-refuses-speculation",
    summary="trtllm_mla (0.4.10.post2-0.5.0rc2) or trtllm_mha (0.5.0rc0-0.5.0rc2) with speculation is refused",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="Any `--speculative-algorithm` with a typed trtllm backend that ServerArgs checks: "
        "`--attention-backend trtllm_mla` from 0.4.10.post2, also `--decode-attention-backend trtllm_mla` from "
        "0.5.0rc1; `trtllm_mha` on `--attention-backend`, `--decode-attention-backend` or "
        "`--prefill-attention-backend` from 0.5.0rc0; up to 0.5.0rc2.",
        why="trtllm_mla arrives in 0.4.10.post2 and `ServerArgs.__post_init__` raises `ValueError('trtllm_mla backend "
        "does not support speculative decoding yet.')` for it with any speculative algorithm (0.4.10.post2 "
        "server_args.py:428-442; 0.5.0rc0 :436-450 still only `--attention-backend`; 0.5.0rc1 :435-453 and "
        "0.5.0rc2 :436-454 also `--decode-attention-backend`). trtllm_mha arrives in 0.5.0rc0 with the same raise on "
        "any of the three flags (0.5.0rc0 server_args.py:452-471; 0.5.0rc2 :461-480). 0.5.1 drops both raises "
        "(server_args.py:476-498) and, for trtllm_mha, refuses only topk > 1 (:660-666, rule AB003). Each block first "
        "refuses a GPU other than SM100, which fails the launch as well.",
        fix="Use another attention backend for the speculative launch, or SGLang 0.5.1 or later.",
        fix_safety="Unsafe: another attention kernel runs.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, ATTENTION, "trtllm_mha"),
        gpu="B200",
        sglang_version="0.5.0rc2",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, ATTENTION, "flashinfer"),
        gpu="B200",
        sglang_version="0.5.0rc2",
    ),
    sources=(
        "sglang 0.4.10: python/sglang/srt/server_args.py (no trtllm backends)",
        "sglang 0.4.10.post2: python/sglang/srt/server_args.py:428-442",
        "sglang 0.5.0rc0: python/sglang/srt/server_args.py:436-450,452-471",
        "sglang 0.5.0rc1: python/sglang/srt/server_args.py:435-453,460-479",
        "sglang 0.5.0rc2: python/sglang/srt/server_args.py:436-454,461-480",
        "sglang 0.5.1: python/sglang/srt/server_args.py:476-498,660-666 (no speculative refusal; topk > 1 only for trtllm_mha)",
    ),
    sglang_versions=">=0.4.10.post2,<=0.5.0rc2",
    log_signatures=(
        r"trtllm_(mla|mha) backend does not support speculative decoding yet",
    ),
)
