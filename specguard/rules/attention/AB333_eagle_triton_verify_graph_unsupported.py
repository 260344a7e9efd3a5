"""AB333 eagle-triton-verify-graph-unsupported."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS, is_mla_target
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

ATTENTION = "--attention-backend"


def _mla_forced_triton(ctx: CheckContext) -> bool:
    """The model runner gives an MLA target triton whatever was typed (0.4.2.post4 model_runner.py:107-114)."""
    return (
        is_mla_target(ctx)
        and not ctx.spec.has("--disable-mla")
        and ctx.spec.get("device") != "cpu"
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS:
        return
    # Double sparsity moves to triton but turns CUDA graphs off itself (model_runner.py:116-121).
    if ctx.spec.get("disable_cuda_graph") or ctx.spec.has("--enable-double-sparsity"):
        return
    typed = ctx.spec.get("attention_backend") == "triton"
    forced = _mla_forced_triton(ctx)
    if not typed and not forced:
        return
    how = (
        "this MLA target runs triton (the model runner's choice for MLA)"
        if forced
        else f"{ctx.flag(ATTENTION)} triton"
    )
    fix = (
        None
        if forced
        else set_flags(
            "use flashinfer", Applicability.UNSAFE, attention_backend="flashinfer"
        )
    )
    yield RULE.finding(
        f"{how} with {ctx.algorithm} in SGLang {ctx.env.sglang_version}: the triton backend has no speculative path "
        "before 0.4.3, and capturing the target's verify CUDA graphs (forward mode TARGET_VERIFY) fails its "
        "assertion 'Not supported' while the server starts. "
        + (
            "Use SGLang 0.4.3 or later"
            if forced
            else f"Use {ctx.flag(ATTENTION)} flashinfer, or SGLang 0.4.3 or later"
        ),
        flags=(ATTENTION, "--speculative-algorithm")
        if typed
        else ("--speculative-algorithm",),
        fix=fix,
    )


RULE = Rule(
    check=check,
    code="AB333",
    category=Category.START,
    name="eagle-triton-verify-graph-unsupported",
    summary="EAGLE on the triton attention backend with CUDA graphs before SGLang 0.4.3, whose triton backend "
    "could not capture verify graphs",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.SOMETIMES,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE (0.4.1.post5-0.4.2.post4) on the triton attention backend, typed or given to an MLA target by the "
        "model runner, with CUDA graphs on (no `--disable-cuda-graph`, no `--enable-double-sparsity`).",
        why="For EAGLE the target's CUDA-graph runner captures in `ForwardMode.TARGET_VERIFY` with an EAGLE spec "
        "info (0.4.1.post5 `model_executor/cuda_graph_runner.py:157-166`; 0.4.2.post4 `:170-179`), and "
        "`TritonAttnBackend.init_forward_metadata_capture_cuda_graph` asserts `forward_mode.is_decode(), 'Not "
        "supported'` and `spec_info is None, 'Not supported'` (0.4.1.post5 `layers/attention/triton_backend.py:91-93`; "
        "0.4.2.post4 `:161-163`), so start-up fails with AssertionError: Not supported. The model runner gives an MLA "
        "target triton whatever was typed (0.4.1.post5 `model_runner.py:98-103`; 0.4.2.post4 `:107-114`, not on "
        "CPU). 0.4.3 adds triton's speculative paths (`triton_backend.py:227-275`, a target-verify branch) and a "
        "triton draft backend. EAGLE itself is new in 0.4.1.post5 (`server_args.py:253`, choices at `:667-669`).",
        fix="Use flashinfer (the default where it is installed), or SGLang 0.4.3 or later; an MLA target needs the "
        "upgrade.",
        fix_safety="Unsafe: another attention kernel runs.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE, ATTENTION, "triton"), sglang_version="0.4.2.post4"
    ),
    good=Example(argv=(*LLAMA31_8B_EAGLE, ATTENTION, "triton"), sglang_version="0.4.3"),
    sources=(
        "sglang 0.4.1.post3: python/sglang/srt/speculative/ (no EAGLE worker)",
        "sglang 0.4.1.post5: python/sglang/srt/layers/attention/triton_backend.py:86-93; python/sglang/srt/model_executor/cuda_graph_runner.py:157-166; python/sglang/srt/model_executor/model_runner.py:98-103",
        "sglang 0.4.2.post4: python/sglang/srt/layers/attention/triton_backend.py:151-163; python/sglang/srt/model_executor/cuda_graph_runner.py:170-179; python/sglang/srt/model_executor/model_runner.py:107-121",
        "sglang 0.4.3: python/sglang/srt/layers/attention/triton_backend.py:227-275",
    ),
    sglang_versions=">=0.4.1.post5,<0.4.3",
    log_signatures=(r"AssertionError: Not supported",),
)
