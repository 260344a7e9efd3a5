"""HY020 mamba-no-buffer-radix-speculative."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of
from specguard.rules.hybrid._hybrid import (
    STRATEGY_FLAGS,
    is_mamba_radix_target,
    mamba_strategy,
    strategy_flag,
)
from specguard.sglang_facts.changes import MAMBA_NO_BUFFER_ROCM_FALLBACK


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or not is_mamba_radix_target(ctx) or ctx.spec.has("--disable-radix-cache"):
        return
    # 'auto' resolves to no_buffer in these releases (0.5.10 server_args.py:964-967).
    if mamba_strategy(ctx) not in ("auto", "no_buffer"):
        return
    arch = ctx.target.architecture  # type: ignore[union-attr]
    strategy = strategy_flag(ctx)
    radix = ctx.flag("--disable-radix-cache")
    gpu = ctx.env.gpu
    if gpu is not None and gpu.platform == "rocm" and ctx.version >= MAMBA_NO_BUFFER_ROCM_FALLBACK.release:
        yield RULE.finding(
            f"{arch} with speculative decoding and the mamba no_buffer strategy: on ROCm SGLang {ctx.version} "
            f"switches the radix cache off (extra_buffer needs CUDA), so no prefix is reused. Add {radix} to say so",
            flags=("--disable-radix-cache",),
            severity=Severity.INFO,
        )
        return
    yield RULE.finding(
        f"{arch} keeps its mamba state in SGLang's MambaRadixCache, and SGLang {ctx.version} refuses speculative "
        f"decoding with the radix cache under the no_buffer strategy ({strategy} no_buffer, which 'auto' resolves "
        f"to): ValueError 'Speculative decoding for {arch} is not compatible with radix cache when using "
        f"--mamba-scheduler-strategy no_buffer' at startup. Add {radix}, or use {strategy} extra_buffer with "
        "SGLANG_ENABLE_SPEC_V2=1 (Qwen3-Next and Qwen3.5 only)",
        flags=("--disable-radix-cache", *(f for f in STRATEGY_FLAGS if ctx.spec.has(f))),
        fix=fix_of("disable the radix cache", Applicability.UNSAFE, Edit(name="--disable-radix-cache", value=True)),
    )


RULE = Rule(
    check=check,
    code="HY020",
    category=Category.START,
    name="mamba-no-buffer-radix-speculative",
    summary="Speculative decoding on a hybrid mamba target with the radix cache under no_buffer (0.5.10rc0-0.5.13)",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="A hybrid linear-attention target (Qwen3-Next, Qwen3.5, Nemotron-H, Falcon-H1, Jet-Nemotron, LFM2) "
        "with any speculative algorithm, the radix cache on, and `--mamba-scheduler-strategy` no_buffer or auto "
        "(which resolves to no_buffer in these releases), in SGLang 0.5.10rc0-0.5.13.",
        why="PR 19391 (first shipped in 0.5.10rc0) turned the silent 'disabling radix cache' of 0.5.9 "
        "(server_args.py:1760-1764) into a ValueError in `_handle_mamba_radix_cache` (0.5.10rc0 "
        "server_args.py:2168-2173; 0.5.10 :2203-2209; 0.5.13 :2754-2757), raised at argument time. From 0.5.11 ROCm gets the old "
        "fallback instead (PR 22908). 0.5.14 rewrote the resolution (`auto` picks extra_buffer when overlap is on) "
        "and dropped the error. A PD decode server hits it too, because the check ran before PD disabled the radix "
        "cache (PR 25116).",
        fix="Add `--disable-radix-cache`, or use `--mamba-scheduler-strategy extra_buffer` with "
        "`SGLANG_ENABLE_SPEC_V2=1` (supported for Qwen3-Next and Qwen3.5).",
        fix_safety="Unsafe: without the radix cache no prefix is reused.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen3.5-397B-A17B", "--speculative-algorithm", "EAGLE",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"),
        target={"architectures": ("Qwen3_5MoeForConditionalGeneration",)},
        gpu="H100",
        sglang_version="0.5.10",
    ),
    good=Example(
        argv=("--model-path", "Qwen/Qwen3.5-397B-A17B", "--speculative-algorithm", "EAGLE",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
              "--disable-radix-cache"),
        target={"architectures": ("Qwen3_5MoeForConditionalGeneration",)},
        gpu="H100",
        sglang_version="0.5.10",
    ),
    sources=(
        "https://github.com/QwenLM/Qwen3.8/issues/108",
        "https://github.com/sgl-project/sglang/pull/19391",
        "https://github.com/sgl-project/sglang/pull/22908",
        "https://github.com/sgl-project/sglang/pull/25116",
        "sglang 0.5.9: python/sglang/srt/server_args.py:1746-1764 (radix cache silently disabled)",
        "sglang 0.5.10rc0: python/sglang/srt/server_args.py:945-949, 2154-2173",
        "sglang 0.5.10: python/sglang/srt/server_args.py:964-967, 2190-2209",
        "sglang 0.5.11: python/sglang/srt/server_args.py:2441-2456 (ROCm: radix cache switched off)",
        "sglang 0.5.13: python/sglang/srt/server_args.py:2743-2757",
        "sglang 0.5.14: python/sglang/srt/server_args.py:4380-4399 (error gone)",
    ),
    sglang_versions=">=0.5.10rc0,<0.5.14",
)
