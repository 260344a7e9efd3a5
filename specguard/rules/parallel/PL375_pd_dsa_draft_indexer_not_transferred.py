"""PL375 pd-dsa-draft-indexer-not-transferred."""

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
from specguard.rules.examples import GLM52_FACTS, GLM52_FP8_TP8
from specguard.sglang_facts.architectures import DSA_ARCHITECTURES

PD_MODES = ("prefill", "decode")


def check(ctx: CheckContext) -> Iterator[Finding]:
    # The built-in MTP draft is the EAGLE worker's (NEXTN and MTP alias EAGLE); a separate EAGLE3 head has no
    # DSA indexer pool.
    if (
        ctx.algorithm != "EAGLE"
        or ctx.target is None
        or ctx.target.architecture not in DSA_ARCHITECTURES
    ):
        return
    mode = ctx.spec.get("disaggregation_mode")
    if mode not in PD_MODES:
        return
    yield RULE.finding(
        f"{ctx.flag('--disaggregation-mode')} {mode} with the MTP draft of {ctx.target.architecture} in SGLang "
        f"{ctx.version}: the KV transfer sends the target's DSA indexer keys but not the draft's, so on the decode "
        "server the draft selects its sparse top-k for the prompt from indexer keys that were never filled. "
        "Output stays correct (the target verifies), but the accept length drops. Upgrade to SGLang 0.5.11 or "
        "later (both servers)",
        flags=("--disaggregation-mode", "--speculative-algorithm"),
    )


RULE = Rule(
    check=check,
    code="PL375",
    category=Category.PERF,
    name="pd-dsa-draft-indexer-not-transferred",
    summary="PD disaggregation with the MTP draft of a DSA model leaves the draft's indexer keys behind (0.5.4 to 0.5.10.post1)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    sglang_versions=">=0.5.4,<0.5.11",
    docs=RuleDocs(
        what="`--disaggregation-mode prefill` or `decode` with EAGLE/NEXTN (the built-in MTP draft) on a DSA target "
        "(DeepSeek-V3.2 `DeepseekV32ForCausalLM`, GLM-5 `GlmMoeDsaForCausalLM`), SGLang 0.5.4 to 0.5.10.post1.",
        why="Both PD queues register the draft's KV buffers for transfer (`draft_token_to_kv_pool."
        "get_contiguous_buf_infos()`), and from 0.5.3.post3 mark a DSA target's state as `nsa` and send the "
        "target pool's `get_state_buf_infos()` (its indexer-key buffers), but not the draft pool's "
        "(0.5.3.post3 disaggregation/decode.py:246, 260-273; 0.5.9 decode.py:299-317, prefill.py:173-191; 0.5.10.post1 "
        "decode.py:326-366). 0.5.11 appends the draft `NSATokenToKVPool.get_state_buf_infos()` to the transfer on "
        "both sides (0.5.11 disaggregation/decode.py:387-400, prefill.py:197-208). The decode-side draft therefore "
        "runs its indexer over keys that were never written for the prompt; the target still verifies every "
        "token, so the loss is acceptance, not output. The MTP draft has an indexer only from 0.5.4, where "
        "`is_deepseek_nsa` takes the draft's DeepseekV3ForCausalLMNextN name (0.5.4 configs/model_config.py:56-61); "
        "in 0.5.3.post3 it does not (:52-58), so the draft attends densely on an MLA pool and has no indexer keys "
        "to leave behind (models/deepseek_v2.py:1082, model_executor/model_runner.py:1724-1754). 0.5.3.post2 and "
        "earlier transfer no indexer state at all, the target's included, which is not a speculative matter.",
        fix="Upgrade both servers to SGLang 0.5.11 or later. No automatic fix.",
        fix_safety="No fix: it needs another release.",
    ),
    bad=Example(
        argv=(
            *GLM52_FP8_TP8,
            "--speculative-algorithm",
            "EAGLE",
            "--disaggregation-mode",
            "decode",
        ),
        target=GLM52_FACTS,
        sglang_version="0.5.10.post1",
    ),
    good=Example(
        argv=(
            *GLM52_FP8_TP8,
            "--speculative-algorithm",
            "EAGLE",
            "--disaggregation-mode",
            "decode",
        ),
        target=GLM52_FACTS,
        sglang_version="0.5.11",
    ),
    sources=(
        "sglang 0.5.3.post2: python/sglang/srt/disaggregation/decode.py (no 'nsa' state type)",
        "sglang 0.5.3.post3: python/sglang/srt/disaggregation/decode.py:246, 260-273 ('nsa' state: the target's indexer buffers only)",
        "sglang 0.5.3.post3: python/sglang/srt/configs/model_config.py:52-58, 226-232 (the NextN draft is not NSA: no draft indexer)",
        "sglang 0.5.4: python/sglang/srt/configs/model_config.py:52-62 (DeepseekV3ForCausalLMNextN is NSA); disaggregation/decode.py:238-269",
        "sglang 0.5.9: python/sglang/srt/disaggregation/decode.py:299-317; disaggregation/prefill.py:173-191",
        "sglang 0.5.10.post1: python/sglang/srt/disaggregation/decode.py:326-366",
        "sglang 0.5.11: python/sglang/srt/disaggregation/decode.py:387-400; disaggregation/prefill.py:197-208 (draft indexer buffers appended)",
    ),
)
