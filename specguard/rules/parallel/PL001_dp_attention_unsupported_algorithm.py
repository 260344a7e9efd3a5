"""PL001 dp-attention-unsupported-algorithm."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.examples import LLAMA31_8B
from specguard.rules.spec_params._shared import (
    attn_dp_enabled,
    attn_dp_flags,
    device,
    drop_attn_dp,
    int_flag,
)
from specguard.sglang_facts.algorithms import (
    DP_ATTENTION_CONDITIONAL_ALGORITHMS,
    DP_ATTENTION_REFUSED_ALGORITHMS,
)
from specguard.sglang_facts.changes import (
    DFLASH_DP_ATTENTION_CUDA,
    DFLASH_DP_ATTENTION_NPU,
)

# DFLASH with attention DP: always rejected 0.5.11-0.5.19, rejected off NPU 0.5.20-0.5.22, and
# from 0.5.23 allowed on CUDA with --enable-dp-lm-head, no context parallel, no DP spec/prefill
# coordination (speculative_hook.py:303-317).
COORDINATION = "SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in DP_ATTENTION_REFUSED_ALGORITHMS | DP_ATTENTION_CONDITIONAL_ALGORITHMS or not attn_dp_enabled(ctx):
        return
    flags = attn_dp_flags(ctx)
    written = " ".join(ctx.flag(f) for f in flags)
    drop = drop_attn_dp("turn attention DP off")
    if ctx.algorithm in DP_ATTENTION_REFUSED_ALGORITHMS:
        yield RULE.finding(
            f"{ctx.algorithm} does not support DP attention ({written}): SGLang raises 'Currently "
            f"{ctx.algorithm.lower()} speculative decoding does not support dp attention' at argument time",
            flags=flags,
            fix=drop,
        )
        return
    where = device(ctx)
    if where == "npu":
        return
    if ctx.version < DFLASH_DP_ATTENTION_CUDA.release:
        scope = " on non-NPU devices" if ctx.version >= DFLASH_DP_ATTENTION_NPU.release else ""
        yield RULE.finding(
            f"DFLASH does not support DP attention{scope} in SGLang {ctx.version} ({written}): it raises at "
            "argument time. 0.5.23 allows it on CUDA with --enable-dp-lm-head",
            flags=flags,
            fix=drop,
        )
        return
    if where is not None and where != "cuda":
        yield RULE.finding(f"DFLASH with DP attention requires CUDA or NPU, not {where!r}: SGLang raises", flags=flags, fix=drop)
        return
    if (int_flag(ctx, "--attn-cp-size") or 1) != 1:
        yield RULE.finding(
            "DFLASH with DP attention does not support context parallel (--attn-cp-size): SGLang raises",
            flags=("--attn-cp-size",),
            fix=drop,
        )
    if ctx.spec.env_flag(COORDINATION):
        yield RULE.finding(f"DFLASH with DP attention requires {COORDINATION}=0: SGLang raises", flags=flags, fix=drop)
    if not ctx.spec.get("enable_dp_lm_head"):
        yield RULE.finding(
            f"DFLASH with DP attention ({written}) requires {ctx.flag('--enable-dp-lm-head')}: SGLang raises "
            "'DFLASH with dp attention requires --enable-dp-lm-head.' at argument time",
            flags=("--enable-dp-lm-head",),
            fix=set_flags("add --enable-dp-lm-head", Applicability.UNSAFE, enable_dp_lm_head=True),
        )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own code path; sgl-jax has its own
    check=check,
    code="PL001",
    category=Category.START,
    name="dp-attention-unsupported-algorithm",
    summary="DP attention with STANDALONE, NGRAM, or DFLASH without its requirements",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="Checks attention DP (`--attn-dp-size` > 1, or the deprecated `--enable-dp-attention` with "
        "`--dp-size` > 1 from 0.5.22; the switch alone before) against the algorithm.",
        why="STANDALONE and NGRAM raise at argument time (catalogue P23, P68). DFLASH raised in every case "
        "from 0.5.11 to 0.5.19 and off NPU in 0.5.20-0.5.22 (0.5.22 speculative_hook.py:295-300); 0.5.23 "
        "allows it on CUDA with `--enable-dp-lm-head`, `--attn-cp-size 1` and no DP spec/prefill "
        "coordination (P71, speculative_hook.py:303-317). In 0.5.22+ `--enable-dp-attention` with "
        "`--dp-size 1` is no attention DP at all (parallel_hook.py:39-61).",
        fix="Turn attention DP off, or for DFLASH on 0.5.23 add `--enable-dp-lm-head`.",
        fix_safety="Unsafe: it changes the parallel layout.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, "--tp-size", "2", "--attn-dp-size", "2", "--speculative-algorithm", "STANDALONE",
              "--speculative-draft-model-path", "meta-llama/Llama-3.2-1B-Instruct"),
    ),
    good=Example(
        argv=(*LLAMA31_8B, "--tp-size", "2", "--speculative-algorithm", "STANDALONE",
              "--speculative-draft-model-path", "meta-llama/Llama-3.2-1B-Instruct"),
    ),
    sources=(
        "seed: sglang-speculative-decoding.md (Standalone: does not support --enable-dp-attention; Ngram notes)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1078-1084, 1367-1371, 303-317",
        "sglang 0.5.22: python/sglang/srt/arg_groups/speculative_hook.py:295-300",
        "sglang 0.5.23: python/sglang/srt/arg_groups/parallel_hook.py:39-61",
        "catalogue: shared/design/sglang-spec-checks.md P03, P23, P68, P71",
    ),
    log_signatures=(
        r"speculative decoding does not support dp attention",
    ),
)
