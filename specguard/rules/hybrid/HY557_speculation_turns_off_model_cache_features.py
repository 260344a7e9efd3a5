"""HY557 speculation-turns-off-model-cache-features."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import GPT_OSS, SGLANG_DIALECTS
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.sglang_facts.changes import Change

# What 0.5.8 ServerArgs._handle_model_specific_adjustments logs (server_args.py:1290-1293, 1438-1442):
#   "Disable hybrid SWA memory for GPT-OSS model with speculative decoding."
#   "Disabling radix cache since speculative decoding for NemotronHForCausalLM is not supported with radix cache yet."
# 0.5.9 logs the second from _handle_mamba_radix_cache as an f-string of the architecture (server_args.py:1760-1764).
NEMOTRON_H = "NemotronHForCausalLM"
NO_RADIX = "--disable-radix-cache"
NO_HYBRID_SWA = "--disable-hybrid-swa-memory"
# gpt-oss's default backend on SM100 (is_sm100_supported: compute capability 10.x) is trtllm_mha, which turns
# hybrid SWA memory off by itself (0.5.8 server_args.py:1258-1286), speculation or not.
TRTLLM_MHA = "trtllm_mha"
SM100_MAJOR = 10
# NemotronH keeps losing its radix cache in 0.5.9, through the shared mamba no_buffer path; 0.5.10rc0 refuses the
# launch instead (HY020). GPT-OSS's line alone is gone in 0.5.9.
GPT_OSS_KEEPS_SWA_WITH_SPEC = Change(
    "0.5.9",
    "0.5.9 server_args.py:1333-1362 GptOss block turns hybrid SWA memory off for trtllm_mha only (0.5.8.post1 :1288-1293 also for speculation)",
)


def _gpt_oss_keeps_hybrid_swa(ctx: CheckContext) -> bool | None:
    """Whether a GPT-OSS launch would keep hybrid SWA memory without speculation: not typed off and no
    trtllm_mha phase; None when the backend is SGLang's choice and the GPU is unknown."""
    if ctx.spec.has(NO_HYBRID_SWA):
        return False
    typed = [
        ctx.spec.last_value(flag)
        for flag in (
            "--attention-backend",
            "--prefill-attention-backend",
            "--decode-attention-backend",
        )
    ]
    if TRTLLM_MHA in typed:
        return False
    if ctx.spec.last_value("--attention-backend") is not None:
        return True
    gpu = ctx.env.gpu
    if gpu is None or (gpu.platform == "cuda" and gpu.compute_capability is None):
        return None
    return not (
        gpu.platform == "cuda"
        and gpu.compute_capability is not None
        and gpu.compute_capability[0] == SM100_MAJOR
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or ctx.target is None:
        return
    architecture = ctx.target.architecture
    # A typed trtllm_mha costs NemotronH its radix cache with or without speculation (0.5.8 server_args.py:1449-1461).
    if (
        architecture == NEMOTRON_H
        and not ctx.spec.has(NO_RADIX)
        and ctx.spec.last_value("--attention-backend") != TRTLLM_MHA
    ):
        yield RULE.finding(
            f"{NEMOTRON_H} with {ctx.algorithm} in SGLang {ctx.version}: SGLang turns the radix cache off at argument "
            "time (a warning only), so no prompt prefix is reused and every request prefills in full. Add "
            f"{ctx.flag(NO_RADIX)} to say what runs, or serve without speculation where prefix reuse matters",
            flags=("--speculative-algorithm", NO_RADIX),
            fix=fix_of(
                f"add {NO_RADIX} (what SGLang runs)",
                Applicability.SAFE,
                Edit(name=NO_RADIX, value=True),
            ),
        )
    elif (
        architecture == GPT_OSS
        and not GPT_OSS_KEEPS_SWA_WITH_SPEC.present_in(ctx.version)
        and _gpt_oss_keeps_hybrid_swa(ctx)
    ):
        yield RULE.finding(
            f"{GPT_OSS} with {ctx.algorithm} in SGLang {ctx.version}: SGLang turns hybrid SWA memory off at argument "
            "time (a warning only), so the sliding-window layers keep full-length KV and the KV pool holds fewer "
            f"tokens than without speculation. Add {ctx.flag(NO_HYBRID_SWA)} to say what runs, or use 0.5.9, which "
            "keeps it",
            flags=("--speculative-algorithm", NO_HYBRID_SWA),
            fix=fix_of(
                f"add {NO_HYBRID_SWA} (what SGLang runs)",
                Applicability.SAFE,
                Edit(name=NO_HYBRID_SWA, value=True),
            ),
        )


NEMOTRON_H_MTP = (
    "--model-path",
    "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8",
    "--tp",
    "8",
    "--speculative-algorithm",
    "EAGLE",
)
NEMOTRON_H_FACTS = {"architectures": (NEMOTRON_H,)}

RULE = Rule(
    check=check,
    code="HY557",
    category=Category.PERF,
    name="speculation-turns-off-model-cache-features",
    summary="Speculation turns off NemotronH's radix cache (0.5.8-0.5.9) and GPT-OSS's hybrid SWA memory (0.5.8-0.5.8.post1)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="Any speculative algorithm with a NemotronHForCausalLM target and the radix cache on (SGLang 0.5.8 "
        "through 0.5.9), or a GptOssForCausalLM target whose hybrid SWA memory would otherwise stay on (not "
        "`--disable-hybrid-swa-memory`, no trtllm_mha phase, typed or SGLang's SM100 default; 0.5.8 and "
        "0.5.8.post1).",
        why="`_handle_model_specific_adjustments` runs before the speculative handler and, when "
        "`speculative_algorithm` is set, sets `disable_hybrid_swa_memory = True` for GPT-OSS ('TODO: fix spec with "
        "SWA memory cache', 0.5.8 server_args.py:1288-1293, in the GptOss block from :1257) and "
        "`disable_radix_cache = True` for NemotronH (:1438-1442), each with a warning. Without hybrid SWA memory "
        "the sliding-window layers get full-length KV (fewer tokens in the same memory); without the radix cache "
        "no prefix is reused. Both lines are in 0.5.8.post1 (server_args.py:1292, 1440). 0.5.7 has neither: it turned "
        "hybrid SWA memory off for every GPT-OSS launch (server_args.py:1214) and kept NemotronH's radix cache with "
        "speculation (:1309-1335); "
        "0.5.9 drops both model-specific lines: GPT-OSS keeps hybrid SWA memory (server_args.py:1333-1362), but "
        "NemotronH calls `_handle_mamba_radix_cache` with no extra buffer (:1548-1553), whose no_buffer branch "
        "still turns the radix cache off with speculation and the same warning (:1746-1764). 0.5.10rc0 raises "
        "there instead (server_args.py:2171, HY020).",
        fix="Add the flag SGLang sets (`--disable-radix-cache` / `--disable-hybrid-swa-memory`), so the launch says "
        "what runs; serve without speculation where the cache matters.",
        fix_safety="Safe: SGLang sets the same flag on this launch itself.",
    ),
    bad=Example(argv=NEMOTRON_H_MTP, target=NEMOTRON_H_FACTS, sglang_version="0.5.8"),
    good=Example(
        argv=(*NEMOTRON_H_MTP, NO_RADIX),
        target=NEMOTRON_H_FACTS,
        sglang_version="0.5.8",
    ),
    sources=(
        "sglang 0.5.7: python/sglang/srt/server_args.py:1163-1214 (GPT-OSS always without hybrid SWA memory), 1309-1335 (NemotronH keeps the radix cache)",
        "sglang 0.5.8: python/sglang/srt/server_args.py:1257-1293,1416-1442",
        "sglang 0.5.8.post1: python/sglang/srt/server_args.py:1292,1440",
        "sglang 0.5.9: python/sglang/srt/server_args.py:1333-1362 (GPT-OSS line gone), 1548-1553,1746-1764 (NemotronH radix off via the mamba no_buffer path)",
        "sglang 0.5.10rc0: python/sglang/srt/server_args.py:2171 (ValueError instead, HY020)",
    ),
    sglang_versions=">=0.5.8,<0.5.10rc0",
    log_signatures=(
        r"Disable hybrid SWA memory for GPT-OSS model with speculative decoding\.",
        r"Disabling radix cache since speculative decoding for NemotronHForCausalLM is not supported with radix cache yet\.",
    ),
)
