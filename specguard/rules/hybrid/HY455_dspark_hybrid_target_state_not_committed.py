"""HY455 dspark-hybrid-target-state-not-committed."""

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

# The hybrid GDN (linear-attention) targets whose 0.5.16 model classes carry the DFLASH/DSpark capture hook that
# DSPARK needs (models/qwen3_next.py:1283, qwen3_5.py:1278 via qwen3_vl.py:1439); a hybrid target without the hook
# is refused after it loads (model_runner_components/attention_backend_setup.py:55-65), so it never serves wrongly.
HOOKED_GDN_TARGETS = frozenset(
    {
        "Qwen3NextForCausalLM",
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForConditionalGeneration",
    }
)

LAUNCH = (
    "--model-path", "Qwen/Qwen3-Next-80B-A3B-Instruct", "--speculative-algorithm", "DSPARK",
    "--speculative-draft-model-path", "/ckpt/qwen3-next-dspark",
)  # fmt: skip


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "DSPARK"
        or ctx.target is None
        or ctx.target.architecture not in HOOKED_GDN_TARGETS
    ):
        return
    yield RULE.finding(
        f"DSPARK on {ctx.target.architecture}, a hybrid linear-attention (GDN) target, in SGLang {ctx.version}: "
        "the target's verify writes each step's linear-attention state aside, and the 0.5.16 DSpark worker never "
        "copies the accepted step's state back into the target's cache, so the recurrent state does not take the "
        "accepted tokens and every later token is computed from a stale state (wrong output, low acceptance). "
        "Upgrade to 0.5.17, whose DSpark worker commits it, or use another algorithm on 0.5.16",
        flags=("--model-path", "--speculative-algorithm"),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="HY455",
    category=Category.WRONG_OUTPUT,
    name="dspark-hybrid-target-state-not-committed",
    summary="DSPARK on a Qwen3-Next / Qwen3.5 (GDN hybrid) target never commits the verified linear-attention "
    "state (0.5.16)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` on a target whose config.json architecture is Qwen3NextForCausalLM, "
        "Qwen3_5ForConditionalGeneration or Qwen3_5MoeForConditionalGeneration (hybrid GDN targets with the "
        "capture hook DSPARK needs), SGLang 0.5.16.",
        why="In target verify the GDN backend reads the persistent SSM state and writes each draft step's state "
        "into the speculative intermediate buffers (layers/attention/linear/gdn_backend.py:457-475, 600-623); the "
        "accepted step is copied back by `update_mamba_state_after_mtp_verify`, which 0.5.16 calls only from the "
        "EAGLE family and NGRAM (speculative/spec_utils.py:678-830 `commit_mamba_states_after_verify`, used by "
        "eagle_worker_common.py:604 and ngram_worker.py:434) and DFLASH (dflash_worker_v2.py:1277). The 0.5.16 DSpark "
        "worker has no mamba commit at all (speculative/dspark_components/ never mentions it), so the target's "
        "linear-attention state stays at the prefill's end while tokens are accepted. 0.5.17 arms "
        "`_commit_target_mamba_states_after_verify` for a mamba-ish target (dspark_worker_v2.py:313-320, 678, "
        "740-785; 0.5.23 :574, 1277, 1413). 0.5.15.post1 has no DSPARK.",
        fix="Upgrade to 0.5.17 or later, or serve this target with another speculative algorithm on 0.5.16. No "
        "automatic fix.",
        fix_safety="No fix: the release and the algorithm are the user's choice.",
    ),
    bad=Example(
        argv=LAUNCH,
        target={"architectures": ("Qwen3NextForCausalLM",)},
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=LAUNCH,
        target={"architectures": ("Qwen3NextForCausalLM",)},
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/speculative/spec_info.py:28-41 (no DSPARK algorithm)",
        "sglang 0.5.16: python/sglang/srt/layers/attention/linear/gdn_backend.py:457-475,600-623",
        "sglang 0.5.16: python/sglang/srt/speculative/spec_utils.py:678-830; eagle_worker_common.py:604; ngram_worker.py:434",
        "sglang 0.5.16: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py (no mamba commit)",
        "sglang 0.5.16: python/sglang/srt/models/qwen3_next.py:1283; qwen3_5.py:1278; qwen3_vl.py:1439",
        "sglang 0.5.16: python/sglang/srt/model_executor/model_runner_components/attention_backend_setup.py:55-65",
        "sglang 0.5.17: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:313-320,678,740-785",
        "sglang 0.5.23: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:574,1277,1413",
    ),
    sglang_versions="==0.5.16",
)
