"""PL005 lora-unsupported-algorithm."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B
from specguard.rules.spec_params._ragged_verify import RAGGED, unset_ragged
from specguard.sglang_facts.algorithms import LORA_ALGORITHMS
from specguard.sglang_facts.changes import LORA_WITH_EAGLE_DFLASH, LORA_WITH_NGRAM

# Before 0.5.5.post3 no speculative algorithm ran with LoRA: the server started, then failed (sglang#12726,
# NGRAM on 0.5.4.post3) or decoded wrongly, since LoRA assumed one token per decode step; sglang#12903
# made NGRAM work and added the check (0.5.5.post3 server_args.py:3876-3881; 0.5.5 has neither).
# From then to 0.5.18 LoRA allowed only NGRAM (0.5.18 server_args.py:9371-9373); 0.5.19 added the EAGLE
# family, DFLASH and DSPARK (arg_groups/lora_hook.py:170-190), without adaptive (0.5.23 lora_hook.py:238-300).
LORA_FLAGS = ("--enable-lora", "--lora-paths")
PLAN_STREAM = "SGLANG_ENABLE_OVERLAP_PLAN_STREAM"
TRTLLM_RUNNER = "experimental_sgl_trtllm"
# The target's runner, and the draft's (which inherits the target's when unset).
MOE_RUNNER_FLAGS = ("--moe-runner-backend", "--speculative-moe-runner-backend")


def allowed(version: Version) -> tuple[str, ...]:
    if version >= LORA_WITH_EAGLE_DFLASH.release:
        return LORA_ALGORITHMS
    return ("NGRAM",) if version >= LORA_WITH_NGRAM.release else ()


def check(ctx: CheckContext) -> Iterator[Finding]:
    lora = tuple(f for f in LORA_FLAGS if ctx.spec.has(f))
    if ctx.algorithm is None or not lora:
        return
    names = allowed(ctx.version)
    if not names:
        yield RULE.finding(
            f"LoRA ({', '.join(ctx.flag(f) for f in lora)}) in SGLang {ctx.version} works with no speculative "
            f"algorithm ({ctx.algorithm} included): the server fails at startup or decodes wrongly (LoRA assumed one "
            "token per decode step until sglang#12903, in 0.5.5.post3)",
            flags=lora,
        )
        return
    if ctx.algorithm not in names:
        yield RULE.finding(
            f"LoRA ({', '.join(ctx.flag(f) for f in lora)}) in SGLang {ctx.version} works only with "
            f"{', '.join(names)} speculative decoding, not {ctx.algorithm}: SGLang raises a ValueError in check_server_args",
            flags=lora,
        )
        return
    if ctx.version >= LORA_WITH_EAGLE_DFLASH.release and ctx.algorithm != "NGRAM":
        yield from _unsupported_with_speculative_lora(ctx)


def _unsupported_with_speculative_lora(ctx: CheckContext) -> Iterator[Finding]:
    """The settings check_lora_speculative_compatibility refuses beside an allowed non-NGRAM algorithm
    (0.5.19 arg_groups/lora_hook.py:192-227; the same four in 0.5.23 :266-305)."""
    if ctx.spec.has("--speculative-adaptive"):
        yield RULE.finding(
            f"LoRA with {ctx.algorithm} does not support {ctx.flag('--speculative-adaptive')}: SGLang raises a ValueError",
            flags=("--speculative-adaptive",),
            fix=fix_of("drop --speculative-adaptive", Applicability.UNSAFE, Edit(name="--speculative-adaptive", value=None)),
        )
    ragged = ctx.spec.env_value(RAGGED)
    if ctx.algorithm == "DSPARK" and ragged is not None and ragged != "static":
        yield RULE.finding(
            f"LoRA with DSPARK does not support {RAGGED}={ragged!r}: its per-request verify lengths break LoRA's "
            f"uniform-width segment layout, so SGLang raises a ValueError at argument time. Unset {RAGGED} (static is "
            "the default)",
            flags=("--speculative-algorithm",),
            fix=unset_ragged(),
        )
    runners = tuple(f for f in MOE_RUNNER_FLAGS if ctx.spec.last_value(f) == TRTLLM_RUNNER)
    if runners:
        yield RULE.finding(
            f"LoRA with {ctx.algorithm} does not support the {TRTLLM_RUNNER} MoE runner "
            f"({', '.join(ctx.flag(f) for f in runners)}): its TopK reads the LoRA config per forward, so SGLang raises "
            "a ValueError at argument time. Pick another MoE runner",
            flags=runners,
        )
    if ctx.spec.env_flag(PLAN_STREAM):
        yield RULE.finding(
            f"LoRA with {ctx.algorithm} does not support {PLAN_STREAM}=1: LoRA batch preparation would run on the "
            f"plan stream, unordered against in-flight forwards, so SGLang raises a ValueError at argument time. "
            f"Unset {PLAN_STREAM}",
            flags=("--speculative-algorithm",),
            fix=fix_of(f"unset {PLAN_STREAM}", Applicability.UNSAFE, Edit(target="env", name=PLAN_STREAM, value=None)),
        )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own code path; sgl-jax has its own
    check=check,
    code="PL005",
    category=Category.START,
    name="lora-unsupported-algorithm",
    summary="LoRA with a speculative algorithm that release does not support",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="With `--enable-lora` or `--lora-paths`, checks the speculative algorithm against the release.",
        why="Before 0.5.5.post3 no algorithm worked with LoRA: the server failed at startup (sglang#12726, NGRAM "
        "on 0.5.4.post3) or decoded wrongly, until sglang#12903 made NGRAM work. Up to 0.5.18 only NGRAM was allowed with LoRA ('Currently LoRA is only compatible with NGRAM "
        "speculative decoding', 0.5.18 server_args.py:9371-9373); from 0.5.19 NGRAM, EAGLE/NEXTN, EAGLE3, "
        "DFLASH and DSPARK, and not with `--speculative-adaptive` (catalogue P50; 0.5.23 lora_hook.py:238-300). "
        "From 0.5.19 the same check also refuses, beside a non-NGRAM algorithm: DSPARK with SGLANG_RAGGED_VERIFY_MODE "
        "other than static, the experimental_sgl_trtllm MoE runner on the target or the draft, and "
        "SGLANG_ENABLE_OVERLAP_PLAN_STREAM=1 (0.5.19 lora_hook.py:192-227, called from check_lora_server_args :56 "
        "whenever LoRA is on; unchanged in 0.5.23 lora_hook.py:266-305). A runner SGLang picks itself is not judged.",
        fix="Use a supported algorithm, or serve the adapters without speculation.",
        fix_safety="Dropping adaptive is unsafe: it changes how drafting is tuned. Unsetting the ragged verify mode or "
        "the plan stream is unsafe: verify and scheduling run another way.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, "--enable-lora", "--lora-paths", "a=/lora/a", "--speculative-algorithm", "STANDALONE",
              "--speculative-draft-model-path", "meta-llama/Llama-3.2-1B-Instruct"),
    ),
    good=Example(
        argv=(*LLAMA31_8B, "--enable-lora", "--lora-paths", "a=/lora/a", "--speculative-algorithm", "NGRAM"),
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/arg_groups/lora_hook.py:238-300",
        "sglang 0.5.18: python/sglang/srt/server_args.py:9371-9373",
        "sglang 0.5.19: python/sglang/srt/arg_groups/lora_hook.py:170-190",
        "sglang 0.5.19: python/sglang/srt/arg_groups/lora_hook.py:56,166-227 (ragged verify, experimental_sgl_trtllm, plan stream)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/lora_hook.py:73,240-305",
        "sglang 0.5.5.post3: python/sglang/srt/server_args.py:3876-3881 (absent in 0.5.5)",
        "https://github.com/sgl-project/sglang/issues/12726",
        "https://github.com/sgl-project/sglang/pull/12903",
        "catalogue: shared/design/sglang-spec-checks.md P50",
    ),
    log_signatures=(r"LoRA with EAGLE/NEXTN/EAGLE3 speculative decoding does not support", r"LoRA is only compatible with"),
)
