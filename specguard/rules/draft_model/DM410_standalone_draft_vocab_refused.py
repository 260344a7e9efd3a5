"""DM410 standalone-draft-vocab-refused."""

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
from specguard.rules.examples import LLAMA31_8B
from specguard.sglang_facts.changes import STANDALONE_VOCAB_CHECKED


def refuses_vocab(ctx: CheckContext) -> bool:
    """SGLang refuses this STANDALONE launch for its draft's vocab_size: both are known and differ."""
    if ctx.algorithm != "STANDALONE" or ctx.target is None or ctx.draft is None:
        return False
    if ctx.spec.get(
        "speculative_draft_model_path"
    ) is None or not STANDALONE_VOCAB_CHECKED.present_in(ctx.version):
        return False
    target_vocab, draft_vocab = ctx.target.vocab_size, ctx.draft.vocab_size
    return (
        target_vocab is not None
        and draft_vocab is not None
        and target_vocab != draft_vocab
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not refuses_vocab(ctx):
        return
    assert ctx.target is not None and ctx.draft is not None  # refuses_vocab read both
    yield RULE.finding(
        f"the STANDALONE draft's vocab_size is {ctx.draft.vocab_size} and the target's {ctx.target.vocab_size}: SGLang "
        f"{ctx.version} compares them when the draft worker starts, after both models have loaded, and raises "
        '"STANDALONE speculative decoding requires the draft model to share the same vocabulary as the target model" '
        "(even when the two differ only by embedding padding). Use a draft whose config.json has the target's vocab_size",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM410",
    category=Category.START,
    name="standalone-draft-vocab-refused",
    summary="STANDALONE with a draft whose vocab_size differs from the target's is refused at start (0.5.15+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm STANDALONE` with a `--speculative-draft-model-path` whose config.json "
        "`vocab_size` (text config for multimodal wrappers) differs from the target's, SGLang 0.5.15 or later.",
        why="0.5.15 added `StandaloneWorkerV2._validate_vocab_compatibility` (speculative/standalone_worker_v2.py:199-202, "
        "215-231): it compares the target's and the draft's `model_config.vocab_size` (`hf_text_config.vocab_size`, "
        "configs/model_config.py:940) and raises a ValueError when they differ; from 0.5.14 every STANDALONE launch "
        "runs this V2 worker (speculative/spec_info.py:216-234). The same check stands in 0.5.23 "
        "(standalone_worker_v2.py:169-172, 185-201). Padding differences count: Qwen2.5-7B (152064) with "
        "Qwen2.5-0.5B (151936) is refused. 0.5.14 has no such check (standalone_worker_v2.py:153-200) and runs the "
        "mismatched pair, which DM003 covers. The same function also refuses equal sizes whose tokenizers map "
        "tokens differently, which config.json does not show.",
        fix="Use a draft with the target's vocabulary (same tokenizer and vocab_size), or EAGLE/EAGLE3 heads "
        "trained for the target. No automatic fix.",
        fix_safety="No fix: the draft checkpoint is the user's choice.",
    ),
    bad=Example(
        argv=(
            *LLAMA31_8B,
            "--speculative-algorithm",
            "STANDALONE",
            "--speculative-draft-model-path",
            "Qwen/Qwen2.5-0.5B-Instruct",
        ),
        target={"vocab_size": 128256, "model_type": "llama"},
        draft={"vocab_size": 151936, "model_type": "qwen2"},
        sglang_version="0.5.15",
    ),
    good=Example(
        argv=(
            *LLAMA31_8B,
            "--speculative-algorithm",
            "STANDALONE",
            "--speculative-draft-model-path",
            "meta-llama/Llama-3.2-1B-Instruct",
        ),
        target={"vocab_size": 128256, "model_type": "llama"},
        draft={"vocab_size": 128256, "model_type": "llama"},
        sglang_version="0.5.15",
    ),
    sources=(
        "sglang 0.5.14: python/sglang/srt/speculative/standalone_worker_v2.py:153-200 (no vocabulary check)",
        "sglang 0.5.14: python/sglang/srt/speculative/spec_info.py:216-234 (STANDALONE always StandaloneWorkerV2)",
        "sglang 0.5.15: python/sglang/srt/speculative/standalone_worker_v2.py:199-202,215-231 (_validate_vocab_compatibility)",
        "sglang 0.5.15: python/sglang/srt/configs/model_config.py:940 (vocab_size = hf_text_config.vocab_size)",
        "sglang 0.5.23: python/sglang/srt/speculative/standalone_worker_v2.py:169-172,185-201",
    ),
    sglang_versions=">=0.5.15",
    log_signatures=(
        r"STANDALONE speculative decoding requires the draft model to share the same vocabulary as the target model",
    ),
)
