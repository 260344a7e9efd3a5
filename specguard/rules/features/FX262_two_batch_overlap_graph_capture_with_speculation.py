"""FX262 two-batch-overlap-graph-capture-with-speculation."""

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

TBO = "--enable-two-batch-overlap"


def check(ctx: CheckContext) -> Iterator[Finding]:
    # The failing asserts run while CUDA graphs are captured; without graphs this path never runs.
    if (
        ctx.algorithm is None
        or not ctx.spec.has(TBO)
        or ctx.spec.get("disable_cuda_graph")
    ):
        return
    yield RULE.finding(
        f"{ctx.flag(TBO)} with {ctx.algorithm} in SGLang {ctx.version}: the two-batch-overlap attention backend "
        "cannot split speculative CUDA-graph metadata, so capturing the target's verify graphs fails with "
        "AssertionError 'Only support num_tokens==bs currently' (or 'spec_info is not supported yet') at start-up. "
        f"Drop {ctx.flag(TBO)}, or use SGLang 0.4.9 or later",
        flags=(TBO, "--speculative-algorithm"),
        fix=fix_of(f"drop {TBO}", Applicability.UNSAFE, Edit(name=TBO, value=None)),
    )


RULE = Rule(
    check=check,
    code="FX262",
    category=Category.START,
    name="two-batch-overlap-graph-capture-with-speculation",
    summary="--enable-two-batch-overlap with speculation fails CUDA-graph capture (0.4.7-0.4.8.post1)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--enable-two-batch-overlap` with any `--speculative-algorithm` and CUDA graphs on (no "
        "`--disable-cuda-graph`), SGLang 0.4.7 through 0.4.8.post1.",
        why="0.4.7 adds two-batch overlap: with the flag, every model runner's attention backend is a "
        "TboAttnBackend (0.4.7 model_runner.py:1021-1026, no draft-worker exception) whose CUDA-graph capture "
        "splits the metadata for its two children and asserts `capture_num_tokens == bs` ('Only support "
        "num_tokens==bs currently', tbo_backend.py:123) and `spec_info is None` ('spec_info is not supported yet', "
        ":201). A target-verify graph holds bs x draft tokens and an EAGLE spec_info, so capture fails. The same "
        "code stands in 0.4.8.post1 (tbo_backend.py:123, :201; model_runner.py:1040-1045). 0.4.9 counts tokens per "
        "sequence and splits spec_info (tbo_backend.py:106-150) and keeps the draft worker off TBO.",
        fix="Drop `--enable-two-batch-overlap`, or upgrade to 0.4.9 or later.",
        fix_safety="Unsafe: it gives up the overlap of the two micro-batches (throughput), not what is served.",
    ),
    bad=Example(argv=(*LLAMA31_8B_EAGLE3, TBO), sglang_version="0.4.8.post1"),
    good=Example(argv=(*LLAMA31_8B_EAGLE3, TBO), sglang_version="0.4.9"),
    sources=(
        "sglang 0.4.6.post5: python/sglang/srt/server_args.py (no --enable-two-batch-overlap)",
        "sglang 0.4.7: python/sglang/srt/layers/attention/tbo_backend.py:106-145,183-201",
        "sglang 0.4.7: python/sglang/srt/model_executor/model_runner.py:1021-1026",
        "sglang 0.4.8.post1: python/sglang/srt/layers/attention/tbo_backend.py:106-168,183-201",
        "sglang 0.4.9: python/sglang/srt/layers/attention/tbo_backend.py:106-150 (token_num_per_seq, split_spec_info)",
        "sglang 0.4.9: python/sglang/srt/model_executor/model_runner.py:1251-1256 (no TBO for the draft worker)",
    ),
    sglang_versions=">=0.4.7,<=0.4.8.post1",
    log_signatures=(
        r"Only support num_tokens==bs currently",
        r"spec_info is not supported yet",
    ),
)
