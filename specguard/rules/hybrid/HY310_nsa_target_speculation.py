"""HY310 nsa-target-speculation."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.architectures import NSA_ARCHITECTURES

ATTENTION_FLAGS = (
    "attention_backend",
    "prefill_attention_backend",
    "decode_attention_backend",
)


def runs_nsa_backend(ctx: CheckContext) -> bool:
    """SGLang picks nsa for an NSA target only when no attention-backend flag is typed
    (0.5.3.post3 server_args.py:940-947); a typed nsa runs it too."""
    typed = [ctx.spec.get(dest) for dest in ATTENTION_FLAGS]
    return all(value is None for value in typed) or "nsa" in typed


def check(ctx: CheckContext) -> Iterator[Finding]:
    target = ctx.target
    if (
        ctx.algorithm is None
        or target is None
        or target.architecture not in NSA_ARCHITECTURES
    ):
        return
    if target.index_topk is None or not runs_nsa_backend(ctx):
        return
    failure = (
        f'the {ctx.algorithm} draft worker raises "ValueError: EAGLE is not supported in attention backend nsa" '
        "while the server starts"
        if ctx.algorithm in EAGLE_WORKER_ALGORITHMS
        else 'the first verify dies on "Spec decoding is not supported for NSA backend now"'
    )
    yield RULE.finding(
        f"{target.architecture} with index_topk (DeepSeek sparse attention) runs the nsa attention backend, which "
        f"SGLang {ctx.version} cannot use for speculative decoding: {failure}. Serve this model without "
        f"{ctx.flag('--speculative-algorithm')}, or use SGLang 0.5.4 or later, whose nsa backend verifies drafts",
        flags=("--model-path", "--speculative-algorithm"),
    )


DEEPSEEK_V32_MTP = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3.2-Exp",
    "--tp",
    "8",
    "--speculative-algorithm",
    "EAGLE",
)
DEEPSEEK_V32_FACTS = {
    "architectures": ("DeepseekV32ForCausalLM",),
    "index_topk": 2048,
    "num_nextn_predict_layers": 1,
}

RULE = Rule(
    check=check,
    code="HY310",
    category=Category.START,
    name="nsa-target-speculation",
    summary="A DeepSeek NSA target (V3.2) on the nsa backend with any speculative algorithm (0.5.3rc2 to 0.5.3.post3)",
    severity=Severity.ERROR,
    sglang_versions=">=0.5.3rc2,<=0.5.3.post3",
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="A target whose config.json `architectures[0]` is `DeepseekV32ForCausalLM` or `DeepseekV3ForCausalLM` "
        "and that sets `index_topk` (DeepSeek-V3.2-Exp and its derivatives), on the nsa attention backend (SGLang's "
        "choice when no attention-backend flag is typed, or a typed `nsa`), with any `--speculative-algorithm`, "
        "SGLang 0.5.3rc2 to 0.5.3.post3.",
        why="0.5.3rc2 brings the NSA backend and picks it for such a target when no attention backend is typed "
        "(server_args.py:806-813; 0.5.3.post3 :940-947). That backend has no speculative path: "
        '`init_forward_metadata` asserts "Spec decoding is not supported for NSA backend now", the CUDA-graph '
        'hooks assert "Speculative decoding is not supported for NSA backend now" and `forward_extend` asserts '
        '"NSA backend doesn\'t support speculative decoding" (nsa_backend.py:212-214, 344-346, 416-418, 477-480 in '
        "both releases), and the EAGLE draft worker's backend map has no `nsa` entry, so building the draft backends "
        'raises "EAGLE is not supported in decode attention backend nsa" / "EAGLE is not supported in attention '
        'backend nsa" at start (0.5.3rc2 speculative/eagle_worker.py:202-259; 0.5.3.post3 '
        "speculative/draft_utils.py:22-82). 0.5.4 adds the verify and draft-extend paths and maps `nsa` in "
        "draft_utils.py:51,74. 0.5.3rc0 has no nsa backend.",
        fix="Serve the model without speculative decoding, or upgrade to SGLang 0.5.4 or later.",
        fix_safety="No fix: dropping speculation or changing the release is the user's choice.",
    ),
    bad=Example(
        argv=DEEPSEEK_V32_MTP,
        target=DEEPSEEK_V32_FACTS,
        gpu="H200",
        sglang_version="0.5.3.post3",
    ),
    good=Example(
        argv=DEEPSEEK_V32_MTP,
        target=DEEPSEEK_V32_FACTS,
        gpu="H200",
        sglang_version="0.5.4",
    ),
    sources=(
        "sglang 0.5.3rc0: python/sglang/srt/layers/attention (no nsa_backend.py)",
        (
            "sglang 0.5.3rc2: python/sglang/srt/configs/model_config.py:52-58; server_args.py:806-813; "
            "layers/attention/nsa_backend.py:212-214,344-346,416-418,477-480; speculative/eagle_worker.py:202-259"
        ),
        (
            "sglang 0.5.3.post3: python/sglang/srt/server_args.py:940-947; layers/attention/nsa_backend.py:212-214,"
            "344-346,416-418,477-480; speculative/draft_utils.py:22-82"
        ),
        (
            "sglang 0.5.4: python/sglang/srt/speculative/draft_utils.py:51,74 (nsa draft backends); "
            "layers/attention/nsa_backend.py:225,243 (target-verify branches)"
        ),
    ),
    log_signatures=(
        r"EAGLE is not supported in (decode )?attention backend nsa",
        r"Spec(ulative)? decoding is not supported for NSA backend now",
        r"NSA backend doesn't support speculative decoding",
    ),
)
