"""HY481 replayssm-spec-ring-too-short."""

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
from specguard.rules.hybrid.HY360_kda_flashinfer_tree_verify import KDA_ARCHITECTURES
from specguard.rules.hybrid.HY480_replayssm_spec_tree_draft import (
    LINEAR_SPELLING_ADDED,
    replayssm_spec_switch,
)

CACHE_LEN = "--linear-replayssm-cache-len"
DEFAULT_CACHE_LEN = 16  # 0.5.16 server_args.py:2185-2188; 0.5.17 memory_pool.py:469


def _argument_time_refusal(length: int, draft_tokens: int | None) -> str | None:
    """0.5.16: what argument handling raises for this ring, or None when it passes."""
    if length & (length - 1) != 0:
        return f"--linear-replayssm-cache-len must be a power of two for the circular spec-verify ring, got {length}."
    if draft_tokens is not None and length < 2 * draft_tokens:
        return (
            "--linear-replayssm-cache-len must be >= 2 * the maximum speculative draft-token count for the "
            f"spec-verify ring (early-flush margin), got {length} < {2 * draft_tokens}."
        )
    return None


def _kda_pool_refusal(length: int, draft_tokens: int | None) -> str | None:
    """0.5.17+: what allocating a KDA target's mamba pool raises for this ring, or None when it passes."""
    if length & (length - 1) != 0:
        return f"spec-verify ring length must be a power of two, got {length}"
    if draft_tokens is not None and length < 2 * draft_tokens:
        return f"spec-verify ring too small: {length} < 2 * {draft_tokens} (early-flush margin)"
    return None


def _refusal(ctx: CheckContext, length: int, draft_tokens: int | None) -> str | None:
    """SGLang's error for this launch's ring, or None. 0.5.16 checks every target while parsing the
    arguments; from 0.5.17 a GDN window is sized from the draft count and only a KDA pool keeps the ring."""
    if not LINEAR_SPELLING_ADDED.present_in(ctx.version):
        refusal = _argument_time_refusal(length, draft_tokens)
        return (
            None
            if refusal is None
            else f"argument handling raises ValueError '{refusal}'"
        )
    architecture = ctx.target.architecture if ctx.target is not None else None
    refusal = (
        _kda_pool_refusal(length, draft_tokens)
        if architecture in KDA_ARCHITECTURES
        else None
    )
    return (
        None
        if refusal is None
        else f"allocating the KDA mamba pool raises ValueError '{refusal}'"
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    switch = replayssm_spec_switch(ctx)
    # An adaptive launch sizes the ring for its largest candidate, which is not resolved here.
    if switch is None or ctx.algorithm is None or ctx.resolution.adaptive:
        return
    written = ctx.spec.last_value(CACHE_LEN)
    if written is not None and not written.isdigit():
        return
    length = int(written) if written is not None else DEFAULT_CACHE_LEN
    draft_tokens = (
        ctx.spec.get("speculative_num_draft_tokens") or ctx.resolution.num_draft_tokens
    )
    refusal = _refusal(ctx, length, draft_tokens) if length > 0 else None
    if refusal is None:
        return
    needed = 1 << (max(length, 2 * (draft_tokens or 1)) - 1).bit_length()
    yield RULE.finding(
        f"{ctx.flag(switch)} with a {length}-entry spec-verify ring ({ctx.flag(CACHE_LEN)}) and "
        f"{draft_tokens} draft tokens in SGLang {ctx.version}: {refusal} before the server serves. "
        f"Set {ctx.flag(CACHE_LEN)} {needed} (a power of two, at least twice the draft tokens)",
        flags=(switch, CACHE_LEN),
        fix=fix_of(
            f"set {CACHE_LEN} {needed}",
            Applicability.UNSAFE,
            Edit(name=CACHE_LEN, value=str(needed)),
        ),
    )


QWEN3_NEXT_MTP_CHAIN = (
    "--model-path",
    "Qwen/Qwen3-Next-80B-A3B-Instruct",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
    "--enable-gdn-replayssm-spec",
)

RULE = Rule(
    check=check,
    code="HY481",
    category=Category.START,
    name="replayssm-spec-ring-too-short",
    summary="ReplaySSM speculative verify with a --linear-replayssm-cache-len that is not a power of two or "
    "shorter than twice the draft tokens (0.5.16 every target; KDA targets from 0.5.17)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--enable-gdn-replayssm-spec` (0.5.16) or `--enable-linear-replayssm-spec` with a speculative "
        "algorithm, when the spec-verify ring (`--linear-replayssm-cache-len`, 16 by default) is not a power of "
        "two or holds fewer than twice the draft tokens: on any target in 0.5.16, on a KDA target (Kimi Linear, "
        "Kimi-K3) from 0.5.17. Quiet under `--speculative-adaptive` (the ring must hold the largest candidate).",
        why="0.5.16 checks the ring at argument time: `_handle_linear_attn_backend` raises '--linear-replayssm-"
        "cache-len must be a power of two for the circular spec-verify ring' (server_args.py:5415-5420) and "
        "`_validate_gdn_replayssm_spec_ring`, after the speculative hook resolved the draft tokens, raises "
        "'--linear-replayssm-cache-len must be >= 2 * the maximum speculative draft-token count for the "
        "spec-verify ring (early-flush margin)' (:5445-5464); MambaPool re-checks (memory_pool.py:578-592). "
        "0.5.17 drops both argument checks: a GDN window is sized from the draft count, and only a KDA pool keeps "
        "the `--linear-replayssm-cache-len` ring and its checks, 'spec-verify ring length must be a power of two' "
        "and 'spec-verify ring too small: L < 2 * N (early-flush margin)' when the pool is allocated "
        "(0.5.17 memory_pool.py:580, 637-653; 0.5.23 :765, 818-834).",
        fix="Set `--linear-replayssm-cache-len` to a power of two at least twice the draft tokens.",
        fix_safety="Unsafe: a longer ring takes more memory per request slot.",
    ),
    bad=Example(
        argv=(*QWEN3_NEXT_MTP_CHAIN, CACHE_LEN, "4"),
        target={"architectures": ("Qwen3NextForCausalLM",)},
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=(*QWEN3_NEXT_MTP_CHAIN, CACHE_LEN, "8"),
        target={"architectures": ("Qwen3NextForCausalLM",)},
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/server_args.py (no enable_gdn_replayssm_spec)",
        "sglang 0.5.16: python/sglang/srt/server_args.py:2185-2188,3031-3034,5415-5420,5445-5464",
        "sglang 0.5.16: python/sglang/srt/mem_cache/memory_pool.py:578-592",
        "sglang 0.5.17: python/sglang/srt/mem_cache/memory_pool.py:580,637-653 (KDA only; no argument check)",
        "sglang 0.5.23: python/sglang/srt/mem_cache/memory_pool.py:765,818-834",
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(
        r"--linear-replayssm-cache-len must be a power of two for the circular spec-verify ring",
        r"--linear-replayssm-cache-len must be >= 2 \* the maximum speculative draft-token count",
        r"spec-verify ring length must be a power of two",
        r"spec-verify ring too small: \d+ < 2 \* \d+",
    ),
)
