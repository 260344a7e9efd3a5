"""AB001 fa3-unsupported-gpu."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import (
    BACKEND_FLAGS,
    SGLANG_DIALECTS,
    is_mla_target,
    proposed_backend,
)
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of
from specguard.rules.examples import LLAMA31_8B_EAGLE3_CHAIN

# The flags through which fa3 reaches a backend constructor.
_BACKEND_FLAGS = (*BACKEND_FLAGS, "--speculative-draft-attention-backend")


def check(ctx: CheckContext) -> Iterator[Finding]:
    gpu = ctx.env.gpu
    if gpu is None:
        return
    flags = [f for f in _BACKEND_FLAGS if (item := ctx.spec.item(f)) is not None and item.values == ("fa3",)]
    if not flags:
        return
    if gpu.platform != "cuda":
        reason = f"{gpu.name} is not a CUDA GPU"
    elif gpu.compute_capability is None:
        return
    else:
        major = gpu.compute_capability[0]
        if major == 9 or (major == 8 and not is_mla_target(ctx)):
            return
        reason = f"{gpu.name} is SM{gpu.sm}" + (" and the target uses MLA" if major == 8 else "")
    replacement = proposed_backend(ctx, avoid=frozenset({"fa3"}))
    fix = None
    if replacement is not None:
        edits = [Edit(name=f, value=replacement) for f in flags if f != "--speculative-draft-attention-backend"]
        if "--speculative-draft-attention-backend" in flags:
            edits.append(Edit(name="--speculative-draft-attention-backend", value=None))
        fix = fix_of(f"use {replacement} instead of fa3", Applicability.UNSAFE, *edits)
    spelled = ", ".join(ctx.flag(f) for f in flags)
    yield RULE.finding(
        f"{spelled} fa3 needs SM80-SM90 (SM80 only for non-MLA models) and {reason}: SGLang accepts "
        "the flag but asserts 'FlashAttention v3 Backend requires SM>=80 and SM<=90' when it builds "
        "the backend, after the weights have loaded"
        + (f"; use {replacement}" if replacement else ""),
        flags=tuple(flags),
        fix=fix,
    )


RULE = Rule(
    check=check,
    code="AB001",
    category=Category.START,
    name="fa3-unsupported-gpu",
    summary="fa3 is requested on a GPU that FlashAttention v3 does not run on",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="Looks for `fa3` in `--attention-backend`, `--prefill-attention-backend`, "
        "`--decode-attention-backend` and `--speculative-draft-attention-backend` and compares it "
        "with the GPU's compute capability. Stays quiet when the GPU is unknown.",
        why="SGLang checks nothing at argument time (catalogue P39). When the backend is created "
        "(`layers/attention/attention_registry.py:238-245` in 0.5.23) it asserts "
        "`(major == 8 and not MLA) or major == 9`, so a B200 (SM100), an MI300X or a TPU fails "
        "after the target weights are loaded. The seed's \"fa3 on a GPU that is not Hopper\" is "
        "stricter than SGLang: Ampere and Ada (SM80/86/89) pass the assert for MHA models, and FA3 "
        "runs there, but its kernels are tuned for Hopper and SGLang never picks it by default "
        "outside SM90; specguard does not flag Ampere for MHA models.",
        fix="Use flashinfer (SGLang's default outside Hopper), or triton where flashinfer is known "
        "to misbehave with this configuration (VB001) or is not accepted (AB002). For the draft "
        "backend the flag is dropped so the draft follows the target.",
        fix_safety="Unsafe: another attention kernel runs.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3_CHAIN, "--attention-backend", "fa3"),
        gpu="B200",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3_CHAIN, "--attention-backend", "fa3"),
        gpu="H100",
    ),
    sources=(
        "seed: slime-speculative-decoding.en.md (--sglang-attention-backend fa3)",
        "sglang 0.5.23: python/sglang/srt/layers/attention/attention_registry.py:238-245",
        "catalogue: shared/design/sglang-spec-checks.md P39",
    ),
    dialects=SGLANG_DIALECTS,
    log_signatures=(
        r"FlashAttention v3 Backend requires SM>=80 and SM<=90",
    ),
)
