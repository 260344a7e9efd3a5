"""AB260 split-prefill-decode-backends-with-speculation."""

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

PREFILL = "--prefill-attention-backend"
DECODE = "--decode-attention-backend"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None:
        return
    # Each phase falls back to --attention-backend; an unset one would be SGLang's default, which
    # specguard does not predict for these releases, so only typed backends are compared.
    typed = ctx.spec.get("attention_backend")
    prefill = ctx.spec.get("prefill_attention_backend") or typed
    decode = ctx.spec.get("decode_attention_backend") or typed
    if prefill is None or decode is None or prefill == decode:
        return
    split = tuple(flag for flag in (PREFILL, DECODE) if ctx.spec.has(flag))
    yield RULE.finding(
        f"Prefill on {prefill} and decode on {decode} make SGLang {ctx.version} build its HybridAttnBackend, which "
        f"asserts no speculative algorithm: the target model runner fails with 'Currently HybridAttentionBackend "
        f"does not support speculative decoding.' after the weights load. Use one backend for both phases (drop "
        f"{', '.join(ctx.flag(flag) for flag in split)}), or SGLang 0.5.2rc0 or later",
        flags=(*split, "--speculative-algorithm"),
        fix=fix_of(
            f"drop {' and '.join(split)}",
            Applicability.UNSAFE,
            *(Edit(name=flag, value=None) for flag in split),
        ),
    )


RULE = Rule(
    check=check,
    code="AB260",
    category=Category.START,
    name="split-prefill-decode-backends-with-speculation",
    summary="different prefill and decode attention backends with speculation fail at start (0.4.9.post5-0.5.1.post3)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="Any `--speculative-algorithm` with a prefill backend and a decode backend that differ "
        "(`--prefill-attention-backend` / `--decode-attention-backend`, each falling back to a typed "
        "`--attention-backend`), SGLang 0.4.9.post5 through 0.5.1.post3. A phase left to SGLang's default "
        "backend is not compared: the rule stays quiet.",
        why="0.4.9.post5 added the two per-phase flags; when the resolved strings differ, "
        "`ModelRunner._get_attention_backend` builds a HybridAttnBackend and first asserts "
        "`speculative_algorithm is None` ('Currently HybridAttentionBackend does not support speculative "
        "decoding.', 0.4.9.post5 model_runner.py:1311-1330; the same at 0.5.1.post3 :1430-1445), so the target "
        "model runner fails at start-up. 0.5.2rc0 drops the assert (model_runner.py:1433-1459).",
        fix="Drop the per-phase flags so one backend serves both phases, or upgrade to 0.5.2rc0 or later.",
        fix_safety="Unsafe: another attention kernel serves one of the phases.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, PREFILL, "fa3", DECODE, "flashinfer"),
        gpu="H100",
        sglang_version="0.4.9.post5",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, PREFILL, "fa3", DECODE, "fa3"),
        gpu="H100",
        sglang_version="0.4.9.post5",
    ),
    sources=(
        "sglang 0.4.9.post2: python/sglang/srt/model_executor/model_runner.py:1259 (no per-phase backends, no assert)",
        "sglang 0.4.9.post5: python/sglang/srt/model_executor/model_runner.py:1311-1330",
        "sglang 0.5.1.post3: python/sglang/srt/model_executor/model_runner.py:1430-1445",
        "sglang 0.5.2rc0: python/sglang/srt/model_executor/model_runner.py:1433-1459 (the assert is gone)",
        "https://github.com/sgl-project/sglang/issues/9330 (the assert, trtllm_mla with flashinfer prefill and EAGLE)",
        "https://github.com/sgl-project/sglang/pull/9573 (removes the assert; first released in 0.5.2rc0)",
    ),
    sglang_versions=">=0.4.9.post5,<=0.5.1.post3",
    log_signatures=(
        r"Currently HybridAttentionBackend does not support speculative decoding",
    ),
)
