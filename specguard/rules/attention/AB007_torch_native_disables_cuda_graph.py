"""AB007 torch-native-disables-cuda-graph."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS, proposed_backend
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, set_flags
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import (
    EAGLE_DRAFT_BACKEND_CHECKED,
    NGRAM_TORCH_NATIVE_WARMUP_CRASH,
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or ctx.spec.get("attention_backend") != "torch_native":
        return
    if ctx.algorithm in EAGLE_WORKER_ALGORITHMS and EAGLE_DRAFT_BACKEND_CHECKED.present_in(ctx.version):
        # The EAGLE draft worker refuses torch_native at start there (AB330): no graphs to lose.
        return
    replacement = proposed_backend(ctx, avoid=frozenset({"torch_native"}))
    fix = set_flags(f"use {replacement}", Applicability.UNSAFE, attention_backend=replacement) if replacement else None
    if ctx.algorithm == "NGRAM" and ctx.version >= NGRAM_TORCH_NATIVE_WARMUP_CRASH.release:
        yield RULE.finding(
            f"NGRAM with {ctx.flag('--attention-backend')} torch_native is accepted, but the server crashes in its "
            "own startup warmup ('NoneType' object has no attribute 'shape': torch_native reads extend_prefix_lens, "
            "which NGRAM's verify batch leaves unset); SGLang's backend matrix lists torch_native without "
            "speculative decoding" + (f". Use {replacement}" if replacement else ""),
            flags=("--attention-backend",),
            fix=fix,
            severity=Severity.ERROR,
        )
        return
    yield RULE.finding(
        f"{ctx.flag('--attention-backend')} torch_native turns CUDA graphs off for prefill and decode, so "
        "every draft step and every verify runs eagerly and speculative decoding loses most of its speed-up"
        + (f"; {replacement} keeps CUDA graphs" if replacement else ""),
        flags=("--attention-backend",),
        fix=fix,
    )


RULE = Rule(
    check=check,
    code="AB007",
    category=Category.PERF,
    name="torch-native-disables-cuda-graph",
    summary="torch_native attention turns CUDA graphs off under speculative decoding",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="`--attention-backend torch_native` with a speculative algorithm (for the EAGLE family from 0.4.3, "
        "whose draft worker refuses torch_native at start, AB330 reports the error instead).",
        why="SGLang disables decode and prefill CUDA graphs for torch_native with a warning "
        "(catalogue P43, `arg_groups/attention_hook.py:122-140` in 0.5.23; `server_args.py:445-449` "
        "in 0.5.1). Speculative decoding launches many small kernels per step (one draft forward "
        "per step, plus verify), so without graphs it is usually slower than no speculation. "
        "torch_native also fails AB002 with topk > 1 and page size > 1. With NGRAM it is worse: SGLang accepts "
        "the pair and then crashes in the startup warmup with \"'NoneType' object has no attribute 'shape'\" "
        "(issue 36352, reported on 0.5.18 and open; the docs' attention-backend matrix marks torch_native as "
        "not supporting speculative decoding), so from 0.5.18 that case is an error; earlier releases were not "
        "checked for it.",
        fix="Use fa3 on Hopper, else flashinfer or triton.",
        fix_safety="Unsafe: another attention kernel runs.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "NGRAM", "--attention-backend", "torch_native"),
        gpu="A10G",
    ),
    good=Example(
        argv=("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "NGRAM", "--attention-backend", "triton"),
        gpu="A10G",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/36352",
        "sglang 0.5.23: python/sglang/srt/arg_groups/attention_hook.py:122-140",
        "catalogue: shared/design/sglang-spec-checks.md P43",
    ),
    dialects=SGLANG_DIALECTS,
    log_signatures=(
        # torch_native_backend.py asserts seq_lens.shape[0] == extend_prefix_lens.shape[0], which a
        # speculative verify batch leaves None (0.5.18: line 101); a common message, ranked after specific ones.
        r"'NoneType' object has no attribute 'shape'",
    ),
)
