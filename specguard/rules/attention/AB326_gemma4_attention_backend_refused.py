"""AB326 gemma4-attention-backend-refused."""

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
from specguard.sglang_facts.changes import GEMMA4_ATTENTION_BACKENDS, as_of

GEMMA4_TARGETS = frozenset(
    {
        "Gemma4ForConditionalGeneration",
        "Gemma4ForCausalLM",
        "Gemma4UnifiedForConditionalGeneration",
    }
)
BACKEND = "--attention-backend"
PREFILL = "--prefill-attention-backend"
DECODE = "--decode-attention-backend"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm is None
        or ctx.target is None
        or ctx.target.architecture not in GEMMA4_TARGETS
    ):
        return
    accepted = as_of(GEMMA4_ATTENTION_BACKENDS, ctx.version, before=None)
    if accepted is None:
        return
    spec = ctx.spec
    both = spec.last_value(BACKEND)
    # Each side falls back to --attention-backend; a side left unset gets SGLang's Gemma 4 default.
    sides = {
        PREFILL: spec.last_value(PREFILL) or both,
        DECODE: spec.last_value(DECODE) or both,
    }
    refused = {
        side: value
        for side, value in sides.items()
        if value is not None and value not in accepted
    }
    if not refused:
        return
    written = tuple(
        f
        for f in (BACKEND, PREFILL, DECODE)
        if spec.has(f) and spec.last_value(f) in refused.values()
    )
    got = ", ".join(
        f"{'prefill' if side == PREFILL else 'decode'} {value}"
        for side, value in refused.items()
    )
    yield RULE.finding(
        f"a Gemma 4 target ({ctx.target.architecture}) with {got} attention in SGLang {ctx.env.sglang_version}: SGLang "
        "refuses it while it resolves the arguments (AssertionError 'Gemma4 only supports ... attention backend'); "
        f"this release accepts {', '.join(accepted)}. Drop {' '.join(ctx.flag(f) for f in written)} (SGLang's Gemma 4 "
        "default is trtllm_mha on Blackwell, triton elsewhere) or choose one of those",
        flags=written,
        fix=fix_of(
            "drop the refused attention backend (SGLang's Gemma 4 default runs)",
            Applicability.UNSAFE,
            *(Edit(name=f, value=None) for f in written),
        ),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own argument checks
    check=check,
    code="AB326",
    category=Category.START,
    name="gemma4-attention-backend-refused",
    summary="A Gemma 4 target refuses attention backends outside its release's list, e.g. fa3 or flashinfer (0.5.13+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="A speculative launch on a `Gemma4ForConditionalGeneration`, `Gemma4ForCausalLM` or "
        "`Gemma4UnifiedForConditionalGeneration` target whose prefill or decode attention backend, as written "
        "(`--prefill-attention-backend` / `--decode-attention-backend`, each falling back to `--attention-backend`), "
        "is not one the release accepts for Gemma 4, SGLang 0.5.13 or later.",
        why="From 0.5.13 SGLang asserts the Gemma 4 backends while it resolves the arguments: `Gemma4 only supports "
        "trtllm_mha, triton, or intel_xpu attention backend, got prefill=..., decode=...` (0.5.13 "
        "server_args.py:2394-2402). The list grows: ascend in 0.5.14 (server_args.py:4078-4085), intel_amx in 0.5.18 "
        "(:5672-5685), aiter in 0.5.20 (arg_groups/model_hook.py:546-559; 0.5.19 :482-497 without it), fa4 in 0.5.22 "
        "(model_hook.py:640-654); 0.5.23 keeps that list (:646-660). fa3 and flashinfer are refused in every one of "
        "them. A side left unset gets the Gemma 4 default (trtllm_mha on SM100 unless the MoE is ModelOpt FP4, "
        "otherwise triton: 0.5.13 server_args.py:2377-2393; 0.5.23 arg_groups/model_overrides/gemma4.py:30-44), so only a "
        "backend that is written can be refused. 0.5.11 and 0.5.12, which register Gemma 4, have no such check.",
        fix="Drop the refused backend flag (SGLang's Gemma 4 default runs), or pick one from the list.",
        fix_safety="Unsafe: it changes the attention kernels.",
    ),
    bad=Example(
        argv=(
            "--model-path",
            "./gemma-4",
            "--speculative-algorithm",
            "EAGLE3",
            "--speculative-draft-model-path",
            "./gemma-4-eagle3",
            BACKEND,
            "fa3",
        ),
        target={"architectures": ("Gemma4ForConditionalGeneration",)},
        sglang_version="0.5.13",
    ),
    good=Example(
        argv=(
            "--model-path",
            "./gemma-4",
            "--speculative-algorithm",
            "EAGLE3",
            "--speculative-draft-model-path",
            "./gemma-4-eagle3",
            BACKEND,
            "triton",
        ),
        target={"architectures": ("Gemma4ForConditionalGeneration",)},
        sglang_version="0.5.13",
    ),
    sources=(
        "sglang 0.5.12: python/sglang/srt/server_args.py (no Gemma 4 attention-backend assert)",
        "sglang 0.5.13: python/sglang/srt/server_args.py:2377-2402",
        "sglang 0.5.14 / 0.5.18: python/sglang/srt/server_args.py:4078-4085 / :5672-5685",
        "sglang 0.5.19 / 0.5.20: python/sglang/srt/arg_groups/model_hook.py:482-497 / :546-559",
        "sglang 0.5.22: python/sglang/srt/arg_groups/model_hook.py:630-654",
        "sglang 0.5.23: python/sglang/srt/arg_groups/model_hook.py:646-660; arg_groups/model_overrides/gemma4.py:23-44",
    ),
    sglang_versions=">=0.5.13",
    log_signatures=(r"Gemma4 only supports [a-z0-9_, ]+ attention backend",),
)
