"""AB582 cpu-fp8-kv-cache-needs-amx-mha."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import BACKEND_FLAGS, mla_of
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

KV_DTYPE = "--kv-cache-dtype"
# The spelling SGLang turns into torch.float8_e4m3fn, the dtype the CPU check tests.
FP8_E4M3 = "fp8_e4m3"
AMX = "intel_amx"

# What SGLang raises (0.5.20 mem_cache/kv_cache_configurator.py:313-323; 0.5.23 :459-469):
#   ValueError: CPU FP8 KV cache is only supported for MHA.
#   ValueError: CPU FP8 KV cache requires Intel AMX support.
#   ValueError: CPU FP8 KV cache requires the intel_amx attention backend.


def _refusal(ctx: CheckContext) -> tuple[str, tuple[str, ...]] | None:
    """(what SGLang refuses, the flags that say it), from what the launch shows; None when nothing is."""
    if mla_of(ctx.target):
        return "CPU FP8 KV cache is only supported for MHA.", ("--model-path",)
    others = [
        flag for flag in BACKEND_FLAGS if ctx.spec.last_value(flag) not in (None, AMX)
    ]
    if others:
        return "CPU FP8 KV cache requires the intel_amx attention backend.", tuple(
            others
        )
    return None  # the host's AMX support (and an Arm host's torch_native default) is not visible here


def check(ctx: CheckContext) -> Iterator[Finding]:
    # The raise does not depend on speculation; specguard judges speculative launches, so it is reported for them.
    if (
        ctx.algorithm is None
        or ctx.spec.get("device") != "cpu"
        or ctx.spec.get("kv_cache_dtype") != FP8_E4M3
    ):
        return
    refusal = _refusal(ctx)
    if refusal is None:
        return
    message, flags = refusal
    yield RULE.finding(
        f"{ctx.flag('--device')} cpu with {ctx.flag(KV_DTYPE)} {FP8_E4M3} in SGLang {ctx.version}: the CPU FP8 KV "
        "cache runs on MHA models with the intel_amx backend on an AMX host only, so configuring the KV pool raises "
        f"'ValueError: {message}' once the weights load. Drop {ctx.flag(KV_DTYPE)} (bf16 KV cache)"
        + (
            ""
            if mla_of(ctx.target)
            else f", or run {ctx.flag('--attention-backend')} {AMX}"
        ),
        flags=(KV_DTYPE, *flags),
        fix=fix_of(
            f"drop {KV_DTYPE}", Applicability.UNSAFE, Edit(name=KV_DTYPE, value=None)
        ),
    )


CPU_EAGLE3 = (*LLAMA31_8B_EAGLE3, "--device", "cpu", KV_DTYPE, FP8_E4M3)

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB582",
    category=Category.START,
    name="cpu-fp8-kv-cache-needs-amx-mha",
    summary="--device cpu with --kv-cache-dtype fp8_e4m3 needs an MHA model and only the intel_amx backend (0.5.20+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--device cpu` with `--kv-cache-dtype fp8_e4m3` and an MLA model (config.json `kv_lora_rank`), or any "
        "of `--attention-backend`/`--prefill-attention-backend`/`--decode-attention-backend` other than intel_amx; "
        "SGLang 0.5.20 or later, in a speculative launch (the same launch without speculation fails the same way; "
        "specguard judges speculative launches, so it stays quiet there). A host without AMX (and an Arm host, whose CPU default "
        "is torch_native) fails the same way; specguard cannot see the host and stays quiet there.",
        why="0.5.20 adds a CPU FP8 KV cache method (mem_cache/kv_cache_configurator.py:306-309) and guards it in "
        "`KVCacheConfigurator.configure`: on CPU with a float8_e4m3fn KV cache it raises ValueError for an MLA "
        "backend, a CPU without AMX, or any configured attention backend other than intel_amx "
        "(kv_cache_configurator.py:311-323; `attention_backends()` is the prefill/decode pair with the split flags "
        "falling back to --attention-backend, arg_groups/model_override_base.py:164-178). `--device cpu` without a "
        "backend gets intel_amx on x86 (arg_groups/platform_hook.py:159-168). 0.5.19's `configure` has no CPU check "
        "(kv_cache_configurator.py:296). 0.5.23 keeps the guard (:457-469).",
        fix="Drop `--kv-cache-dtype fp8_e4m3`; for an MHA model, or keep it with only `--attention-backend intel_amx`.",
        fix_safety="Unsafe: a bf16 KV cache holds half the tokens in the same memory.",
    ),
    bad=Example(
        argv=(*CPU_EAGLE3, "--attention-backend", "torch_native"),
        gpu="cpu",
        sglang_version="0.5.20",
    ),
    good=Example(
        argv=(*CPU_EAGLE3, "--attention-backend", AMX),
        gpu="cpu",
        sglang_version="0.5.20",
    ),
    sources=(
        "sglang 0.5.19: python/sglang/srt/mem_cache/kv_cache_configurator.py:296 (configure, no CPU FP8 check)",
        "sglang 0.5.20: python/sglang/srt/mem_cache/kv_cache_configurator.py:306-323",
        "sglang 0.5.20: python/sglang/srt/arg_groups/model_override_base.py:164-178; arg_groups/platform_hook.py:159-168",
        "sglang 0.5.23: python/sglang/srt/mem_cache/kv_cache_configurator.py:457-469",
    ),
    sglang_versions=">=0.5.20",
    log_signatures=(
        r"CPU FP8 KV cache is only supported for MHA",
        r"CPU FP8 KV cache requires Intel AMX support",
        r"CPU FP8 KV cache requires the intel_amx attention backend",
    ),
)
