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
from specguard.sglang_facts.algorithms import LORA_ALGORITHMS
from specguard.sglang_facts.changes import LORA_WITH_EAGLE_DFLASH, LORA_WITH_NGRAM

# Before 0.5.5.post3 no speculative algorithm ran with LoRA: the server started, then failed (sglang#12726,
# NGRAM on 0.5.4.post3) or decoded wrongly, since LoRA assumed one token per decode step; sglang#12903
# made NGRAM work and added the check (0.5.5.post3 server_args.py:3876-3881; 0.5.5 has neither).
# From then to 0.5.18 LoRA allowed only NGRAM (0.5.18 server_args.py:9371-9373); 0.5.19 added the EAGLE
# family, DFLASH and DSPARK (arg_groups/lora_hook.py:170-190), without adaptive (0.5.23 lora_hook.py:238-300).
LORA_FLAGS = ("--enable-lora", "--lora-paths")


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
    if ctx.version >= LORA_WITH_EAGLE_DFLASH.release and ctx.algorithm != "NGRAM" and ctx.spec.has("--speculative-adaptive"):
        yield RULE.finding(
            f"LoRA with {ctx.algorithm} does not support {ctx.flag('--speculative-adaptive')}: SGLang raises a ValueError",
            flags=("--speculative-adaptive",),
            fix=fix_of("drop --speculative-adaptive", Applicability.UNSAFE, Edit(name="--speculative-adaptive", value=None)),
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
        "DFLASH and DSPARK, and not with `--speculative-adaptive` (catalogue P50; 0.5.23 lora_hook.py:238-300).",
        fix="Use a supported algorithm, or serve the adapters without speculation.",
        fix_safety="Dropping adaptive is unsafe: it changes how drafting is tuned.",
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
        "sglang 0.5.5.post3: python/sglang/srt/server_args.py:3876-3881 (absent in 0.5.5)",
        "https://github.com/sgl-project/sglang/issues/12726",
        "https://github.com/sgl-project/sglang/pull/12903",
        "catalogue: shared/design/sglang-spec-checks.md P50",
    ),
)
