"""AB583 qwen-qsa-verify-chain-within-compress-ratio."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import effective_topk
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

# The one model class that builds Qwen sparse attention (0.5.20 models/qwen4_exp.py:2181, the hybrid GDN backend
# giving its full-attention layers QwenSparseAttnBackend when the config has a QSA profile,
# layers/attention/attention_registry.py:452-461).
QSA_ARCHITECTURES = frozenset({"Qwen4ExpForConditionalGeneration"})

# What SGLang raises (0.5.20 layers/attention/qwen_sparse_attn_backend.py:231-243):
#   NotImplementedError: Qwen QSA target verification supports only speculative_eagle_topk=1
#   NotImplementedError: Qwen QSA requires speculative_num_draft_tokens <= the QSA compress ratio (4): the pending
#   index-key ring holds one group; got 8


def _qsa_ratio(ctx: CheckContext) -> int | None:
    """The QSA compress ratio when the target runs QSA (parse_qsa_profile needs indexer_n_heads), else None."""
    target = ctx.target
    if (
        target is None
        or target.architecture not in QSA_ARCHITECTURES
        or target.indexer_n_heads is None
    ):
        return None
    return target.indexer_compress_ratio


def _draft_tokens(ctx: CheckContext) -> int | None:
    resolved = ctx.resolution.num_draft_tokens
    return (
        resolved
        if resolved is not None
        else ctx.spec.get("speculative_num_draft_tokens")
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    ratio = _qsa_ratio(ctx)
    if ctx.algorithm is None or ratio is None:
        return
    topk = effective_topk(ctx) if ctx.algorithm in EAGLE_WORKER_ALGORITHMS else 1
    tokens = _draft_tokens(ctx)
    problems = []
    if topk is not None and topk != 1:
        problems.append(f"topk {topk} (only a chain, topk 1, is verified)")
    if tokens is not None and tokens > ratio:
        problems.append(f"{tokens} draft tokens (at most the compress ratio, {ratio})")
    if not problems:
        return
    steps = min(
        ctx.resolution.num_steps or ctx.spec.get("speculative_num_steps") or 3,
        ratio - 1,
    )
    fix = None
    if ctx.algorithm in EAGLE_WORKER_ALGORITHMS:
        fix = set_flags(
            f"draft a chain of {steps} steps",
            Applicability.UNSAFE,
            speculative_num_steps=steps,
            speculative_eagle_topk=1,
            speculative_num_draft_tokens=steps + 1,
        )
    yield RULE.finding(
        f"{ctx.algorithm} on a Qwen sparse-attention target ({ctx.target.architecture if ctx.target else ''}, "
        f"indexer_compress_ratio {ratio}) with {' and '.join(problems)} in SGLang {ctx.version}: the QSA backend "
        "refuses such a verify window with NotImplementedError, at the verify CUDA-graph capture during start (or the "
        f"first verify without graphs). Draft a chain: {ctx.flag('--speculative-eagle-topk')} 1 and "
        f"{ctx.flag('--speculative-num-draft-tokens')} at most {ratio}",
        flags=("--speculative-eagle-topk", "--speculative-num-draft-tokens"),
        fix=fix,
    )


QWEN4_EXP_MTP = (
    "--model-path",
    "/ckpt/qwen4-exp",
    "--tp",
    "8",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-num-draft-tokens",
    "4",
)
QSA_FACTS = {
    "architectures": ("Qwen4ExpForConditionalGeneration",),
    "indexer_n_heads": 32,
    "indexer_compress_ratio": 4,
}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB583",
    category=Category.START,
    name="qwen-qsa-verify-chain-within-compress-ratio",
    summary="Speculation on a Qwen sparse-attention (QSA) target verifies only a chain no wider than the QSA compress ratio (0.5.20+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.SOMETIMES,
    docs=RuleDocs(
        what="Any `--speculative-algorithm` on a Qwen4-Exp target (`Qwen4ExpForConditionalGeneration`) whose config "
        "has a QSA profile (`indexer_n_heads`, read from the text config), with an EAGLE-family topk (typed or "
        "SGLang's automatic choice) other than 1, or more draft tokens per verify than config.json's "
        "`indexer_compress_ratio`; SGLang 0.5.20 or later.",
        why="0.5.20 adds QwenSparseAttnBackend, which the hybrid GDN backend uses for the full-attention layers of a "
        "config with a QSA profile (layers/attention/attention_registry.py:452-461; qsa/config.py:36-37, 80-88). Its "
        "`_require_chain_speculation` raises NotImplementedError on a target-verify batch whose spec_info.topk is not "
        "1 or whose draft_token_num exceeds the compress ratio, because the pending index-key ring keys state by "
        "position % ratio (qwen_sparse_attn_backend.py:228-243); it runs for every verify's metadata (:541) and for "
        "the verify CUDA-graph capture and replay (:838, :924). NGRAM and DFLASH verify inputs carry no tree topk, so "
        "only their draft-token count counts. The same in 0.5.21 (:230-244), 0.5.22 (:266-280) and 0.5.23 (:284-298). "
        "0.5.19 has no QSA backend.",
        fix="Draft a chain: `--speculative-eagle-topk 1` and `--speculative-num-draft-tokens` at most the compress ratio.",
        fix_safety="Unsafe: a shorter chain changes how many tokens each verify can accept.",
    ),
    bad=Example(
        argv=(
            *QWEN4_EXP_MTP,
            "--speculative-eagle-topk",
            "4",
            "--speculative-num-draft-tokens",
            "8",
        ),
        target=QSA_FACTS,
        gpu="B200",
        sglang_version="0.5.20",
    ),
    good=Example(
        argv=(*QWEN4_EXP_MTP, "--speculative-eagle-topk", "1"),
        target=QSA_FACTS,
        gpu="B200",
        sglang_version="0.5.20",
    ),
    sources=(
        "sglang 0.5.19: python/sglang/srt/layers/attention (no qwen_sparse_attn_backend.py)",
        "sglang 0.5.20: python/sglang/srt/layers/attention/qwen_sparse_attn_backend.py:228-243,541,838,924",
        "sglang 0.5.20: python/sglang/srt/layers/attention/qsa/config.py:9-15,36-37,80-88; attention_registry.py:452-461",
        "sglang 0.5.23: python/sglang/srt/layers/attention/qwen_sparse_attn_backend.py:284-298",
    ),
    sglang_versions=">=0.5.20",
    log_signatures=(
        r"Qwen QSA target verification supports only speculative_eagle_topk=1",
        r"Qwen QSA requires speculative_num_draft_tokens <= the QSA compress ratio",
    ),
)
