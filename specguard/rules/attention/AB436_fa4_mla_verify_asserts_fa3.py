"""AB436 fa4-mla-verify-asserts-fa3."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Fix, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS, is_mla_target
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import DEEPSEEK_V3_MLA_FACTS

# FlashAttentionBackend.forward_extend sends target verify and draft extend of an MLA model to the absorbed-MLA
# branch, which asserts (0.5.16 layers/attention/flashattention_backend.py:1538):
# assert self.fa_impl_ver == 3, "Only FA3 support here"
MODE = "--speculative-attention-mode"
FA4 = "fa4"


def verify_backend(ctx: CheckContext) -> tuple[str | None, str | None]:
    """(backend, flag) that runs target verify as typed: HybridAttnBackend gives verify and draft extend the
    decode backend in --speculative-attention-mode decode, else the prefill backend (0.5.12
    layers/attention/hybrid_attn_backend.py:42-51); each falls back to --attention-backend."""
    phase = (
        "--decode-attention-backend"
        if ctx.spec.last_value(MODE) == "decode"
        else "--prefill-attention-backend"
    )
    for flag in (phase, "--attention-backend"):
        value = ctx.spec.last_value(flag)
        if value is not None:
            return value, flag
    return None, None


def _fix(ctx: CheckContext) -> Fix | None:
    """Verify on the typed decode backend when that one is not fa4 (prefill keeps fa4)."""
    decode = ctx.spec.last_value("--decode-attention-backend")
    if ctx.spec.last_value(MODE) == "decode" or decode is None or decode == FA4:
        return None
    return fix_of(
        f"verify on the decode backend ({decode})",
        Applicability.UNSAFE,
        Edit(name=MODE, value="decode"),
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or not is_mla_target(ctx):
        return
    backend, flag = verify_backend(ctx)
    if backend != FA4 or flag is None:
        return
    yield RULE.finding(
        f"{ctx.flag(flag)} fa4 runs {ctx.algorithm}'s target verify on this MLA target in SGLang {ctx.version}, "
        "and FlashAttention's absorbed-MLA path, which every verify batch takes, asserts FA3 "
        "(AssertionError 'Only FA3 support here'): the scheduler dies at the first verify. Run verify on another "
        f"backend (e.g. {ctx.flag(MODE)} decode with a non-fa4 decode backend) or use SGLang 0.5.17 or later",
        flags=(flag, "--speculative-algorithm"),
        fix=_fix(ctx),
    )


_DEEPSEEK_V3_MTP = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3",
    "--tp",
    "8",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)

RULE = Rule(
    check=check,
    code="AB436",
    category=Category.CRASH,
    name="fa4-mla-verify-asserts-fa3",
    summary="Target verify on fa4 for an MLA target asserts 'Only FA3 support here' at the first verify (0.5.10-0.5.16)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.SOMETIMES,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="Any speculative algorithm on an MLA target (config.json kv_lora_rank) whose target verify runs on a "
        "typed fa4 backend: `--prefill-attention-backend` (else `--attention-backend`) fa4 in the default "
        "`--speculative-attention-mode prefill`, or `--decode-attention-backend` (else `--attention-backend`) fa4 in "
        "mode decode, SGLang 0.5.10 to 0.5.16.",
        why="HybridAttnBackend runs target verify and draft extend on the prefill backend unless the speculative "
        "attention mode is decode (0.5.12 layers/attention/hybrid_attn_backend.py:42-51). In "
        "FlashAttentionBackend.forward_extend an MLA batch takes the chunked-prefix MHA branch only when it is not "
        "a target verify or draft extend (0.5.10 flashattention_backend.py:765-767; 0.5.16 :1473-1477); the other "
        "branch, absorbed MLA, asserts `self.fa_impl_ver == 3` (0.5.10 :825, 0.5.16 :1538), and fa4 builds the "
        "backend with fa_impl_ver=4 (0.5.16 attention_registry.py:222-228). 0.5.17 accepts 3 or 4 "
        "(flashattention_backend.py:1575, 'Only FA3/FA4 support here'). Before 0.5.10 the EAGLE draft factory has "
        "no fa4 entry and the launch is refused at start (AB330); 0.5.10 adds it (speculative/draft_utils.py:58, 83).",
        fix="Verify on a backend other than fa4 (`--speculative-attention-mode decode` with a non-fa4 decode backend, "
        "or another prefill backend), or upgrade to 0.5.17.",
        fix_safety="Unsafe: verify runs on another attention kernel.",
    ),
    bad=Example(
        argv=(
            *_DEEPSEEK_V3_MTP,
            "--prefill-attention-backend",
            FA4,
            "--decode-attention-backend",
            "trtllm_mla",
        ),
        target=DEEPSEEK_V3_MLA_FACTS,
        gpu="B200",
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=(
            *_DEEPSEEK_V3_MTP,
            "--prefill-attention-backend",
            FA4,
            "--decode-attention-backend",
            "trtllm_mla",
            MODE,
            "decode",
        ),
        target=DEEPSEEK_V3_MLA_FACTS,
        gpu="B200",
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.10rc0: python/sglang/srt/speculative/draft_utils.py (no fa4 entry; AB330)",
        "sglang 0.5.10: python/sglang/srt/layers/attention/flashattention_backend.py:765-767, 825; python/sglang/srt/speculative/draft_utils.py:58, 83",
        "sglang 0.5.12: python/sglang/srt/layers/attention/hybrid_attn_backend.py:42-51",
        "sglang 0.5.16: python/sglang/srt/layers/attention/flashattention_backend.py:1473-1477, 1538; python/sglang/srt/layers/attention/attention_registry.py:222-228",
        "sglang 0.5.17: python/sglang/srt/layers/attention/flashattention_backend.py:1575",
    ),
    sglang_versions=">=0.5.10,<0.5.17",
    log_signatures=(r"Only FA3 support here",),
)
