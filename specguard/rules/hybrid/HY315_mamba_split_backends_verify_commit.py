"""HY315 mamba-split-backends-verify-commit."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.architectures import GDN_ARCHITECTURES

# The targets whose `ModelRunner.mamba2_config` is set in 0.5.9 and 0.5.13 (model_runner.py:1592-1606;
# :2172-2190): FalconH1, NemotronH (and its Nano VL wrapper), LFM2 and LFM2-MoE.
MAMBA2_ARCHITECTURES = frozenset(
    {
        "NemotronHForCausalLM",
        "FalconH1ForCausalLM",
        "NemotronH_Nano_VL_V2",
        "Lfm2ForCausalLM",
        "Lfm2MoeForCausalLM",
    }
)


def split_backends(ctx: CheckContext) -> tuple[str, str] | None:
    """(prefill, decode) as SGLang's get_attention_backends reads them (each side's own flag, else
    --attention-backend), when both are typed and differ; None otherwise (SGLang's default fills an
    untyped side)."""
    base = ctx.spec.get("attention_backend")
    prefill = ctx.spec.get("prefill_attention_backend") or base
    decode = ctx.spec.get("decode_attention_backend") or base
    if prefill is None or decode is None or prefill == decode:
        return None
    return prefill, decode


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.target is None:
        return
    architecture = ctx.target.architecture
    if (
        architecture not in GDN_ARCHITECTURES
        and architecture not in MAMBA2_ARCHITECTURES
    ):
        return
    backends = split_backends(ctx)
    if backends is None:
        return
    prefill, decode = backends
    yield RULE.finding(
        f"{architecture} with {ctx.algorithm}, prefill attention on {prefill} and decode on {decode} in SGLang "
        f"{ctx.version}: the two backends are wrapped in HybridAttnBackend, which lacks the mamba-state commit the "
        'speculative worker calls after every verify, so the first request dies with "AttributeError: '
        "'HybridAttnBackend' object has no attribute 'update_mamba_state_after_mtp_verify'\". Use one attention "
        "backend for prefill and decode, or SGLang 0.5.14 or later",
        flags=tuple(
            flag
            for flag in (
                "--attention-backend",
                "--prefill-attention-backend",
                "--decode-attention-backend",
            )
            if ctx.spec.has(flag)
        ),
    )


QWEN35_MTP_SPLIT = (
    "--model-path",
    "Qwen/Qwen3.5-397B-A17B",
    "--speculative-algorithm",
    "NEXTN",
    "--prefill-attention-backend",
    "fa3",
    "--decode-attention-backend",
    "flashinfer",
)
QWEN35_FACTS = {"architectures": ("Qwen3_5MoeForConditionalGeneration",)}

RULE = Rule(
    check=check,
    code="HY315",
    category=Category.CRASH,
    name="mamba-split-backends-verify-commit",
    summary="A hybrid GDN/Mamba2 target with EAGLE and different prefill and decode attention backends dies after its first verify (0.5.9 to 0.5.13)",
    severity=Severity.ERROR,
    sglang_versions=">=0.5.9,<=0.5.13",
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN, MTP) or STANDALONE on a gated-delta-net target (Qwen3-Next, Qwen3.5, Jet-Nemotron, "
        "InternS2-Preview) or a Mamba2 target (Nemotron-H, Falcon-H1, LFM2), with `--prefill-attention-backend` and "
        "`--decode-attention-backend` (each falling back to `--attention-backend`) typed to different backends, "
        "SGLang 0.5.9 to 0.5.13.",
        why="With different prefill and decode backends the model runner wraps them in `HybridAttnBackend` "
        "(0.5.9 model_executor/model_runner.py:1755-1770; 0.5.13 :2329-2343), each side built through "
        "`attn_backend_wrapper`, so the mamba-aware `HybridLinearAttnBackend` sits inside it (0.5.9 :1792-1799). "
        "After every verify of a target with `hybrid_gdn_config` or `mamba2_config`, the EAGLE worker calls "
        "`attn_backend.update_mamba_state_after_mtp_verify` on the outer backend (0.5.9 speculative/eagle_worker.py:"
        "763-770, 855; 0.5.13 speculative/eagle_worker_v2.py:1273-1278, 1378), and `HybridAttnBackend` has no such "
        'method in 0.5.9-0.5.13 (layers/attention/hybrid_attn_backend.py), so it raises "AttributeError: '
        "'HybridAttnBackend' object has no attribute 'update_mamba_state_after_mtp_verify'\" at the first request. "
        "0.5.14 adds the method, forwarding to the backend `speculative_attention_mode` names "
        "(hybrid_attn_backend.py:142-147). Releases before 0.5.9 were not read. DFLASH checks for the method and "
        "skips the commit instead, which is not this rule.",
        fix="Type one attention backend (`--attention-backend`) for both phases, or upgrade to SGLang 0.5.14.",
        fix_safety="No fix: which backend to keep is the user's choice.",
    ),
    bad=Example(
        argv=QWEN35_MTP_SPLIT, target=QWEN35_FACTS, gpu="H200", sglang_version="0.5.13"
    ),
    good=Example(
        argv=QWEN35_MTP_SPLIT, target=QWEN35_FACTS, gpu="H200", sglang_version="0.5.14"
    ),
    sources=(
        (
            "sglang 0.5.9: python/sglang/srt/model_executor/model_runner.py:1592-1606,1755-1770,1792-1799; "
            "speculative/eagle_worker.py:763-770,855; layers/attention/hybrid_attn_backend.py (no "
            "update_mamba_state_after_mtp_verify)"
        ),
        (
            "sglang 0.5.13: python/sglang/srt/model_executor/model_runner.py:2157-2190,2329-2343; "
            "speculative/eagle_worker_v2.py:1273-1278,1378; layers/attention/hybrid_attn_backend.py (no "
            "update_mamba_state_after_mtp_verify)"
        ),
        "sglang 0.5.14: python/sglang/srt/layers/attention/hybrid_attn_backend.py:142-147",
    ),
    log_signatures=(
        r"'HybridAttnBackend' object has no attribute 'update_mamba_state_after_mtp_verify'",
    ),
)
