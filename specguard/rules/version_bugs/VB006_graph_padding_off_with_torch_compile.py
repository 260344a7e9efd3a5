"""VB006 graph-padding-off-with-torch-compile."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.sglang_facts.changes import TORCH_COMPILE_GRAPH_PADDING_ASSERT


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not (ctx.spec.get("disable_cuda_graph_padding") and ctx.spec.get("enable_torch_compile")):
        return
    fix = set_flags("drop --disable-cuda-graph-padding", Applicability.UNSAFE, disable_cuda_graph_padding=None)
    padding, compile_ = ctx.flag("--disable-cuda-graph-padding"), ctx.flag("--enable-torch-compile")
    if ctx.version >= TORCH_COMPILE_GRAPH_PADDING_ASSERT.release:
        yield RULE.finding(
            f"{padding} with {compile_}: SGLang {ctx.env.sglang_version} asserts they are incompatible in "
            "check_server_args, before anything loads (every batch size would get its own torch.compile "
            "and Triton autotune)",
            flags=("--disable-cuda-graph-padding", "--enable-torch-compile"),
            fix=fix,
        )
        return
    yield RULE.finding(
        f"{padding} with {compile_}: every captured batch size gets its own torch.compile and Triton "
        "autotune, so start-up can stall for many minutes (SGLang 0.5.12+ rejects the pair)",
        flags=("--disable-cuda-graph-padding", "--enable-torch-compile"),
        fix=fix,
        severity=Severity.WARNING,
    )


RULE = Rule(
    check=check,
    code="VB006",
    category=Category.START,
    name="graph-padding-off-with-torch-compile",
    summary="--disable-cuda-graph-padding is combined with --enable-torch-compile",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="Both `--disable-cuda-graph-padding` and `--enable-torch-compile`.",
        why="Without padding every distinct batch size is captured and compiled on its own "
        "(O(max batch size) torch.compile + autotune cycles). From 0.5.12 SGLang asserts against "
        "the pair (catalogue P48; `server_args.py:7243` in 0.5.12, "
        "`arg_groups/validation_hook.py:188-194` in 0.5.23); earlier versions accept it and stall "
        "at start-up, so specguard warns there.",
        fix="Drop `--disable-cuda-graph-padding` (keep torch.compile), or drop `--enable-torch-compile`.",
        fix_safety="Unsafe: replays are padded again.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "NGRAM",
              "--disable-cuda-graph-padding", "--enable-torch-compile"),
    ),
    good=Example(
        argv=("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "NGRAM", "--enable-torch-compile"),
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/arg_groups/validation_hook.py:188-194",
        "sglang 0.5.12: python/sglang/srt/server_args.py:7243",
        "catalogue: shared/design/sglang-spec-checks.md P48",
    ),
    dialects=SGLANG_DIALECTS,
)
