"""HY311 gdn-tree-draft-verified-as-chain."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS, effective_topk
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

# The one target `ModelRunner.hybrid_gdn_config` accepts in these releases (0.5.4.post1
# model_runner.py:1334-1339: Qwen3NextConfig only; Qwen3-Next arrives in 0.5.2).
GDN_ARCHITECTURES_THEN = frozenset({"Qwen3NextForCausalLM"})


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.target is None:
        return
    if ctx.target.architecture not in GDN_ARCHITECTURES_THEN:
        return
    topk = effective_topk(ctx)
    if topk is None or topk <= 1:
        return
    steps = ctx.resolution.num_steps or ctx.spec.get("speculative_num_steps")
    chain = {
        "speculative_eagle_topk": 1,
        **({"speculative_num_draft_tokens": steps + 1} if steps else {}),
    }
    yield RULE.finding(
        f"{ctx.flag('--speculative-eagle-topk')} {topk} on {ctx.target.architecture} with SGLang {ctx.version}: its "
        "gated-delta-net layers verify the draft tree as if it were a chain (each token's conv and recurrent state "
        "follows the token before it, not its parent) and keep the state of step accepted_length-1, not the accepted "
        "node, so verify judges drafts against the wrong context and later tokens are wrong. Draft a chain "
        f"({ctx.flag('--speculative-eagle-topk')} 1) or use SGLang 0.5.4.post3 or later",
        flags=("--speculative-eagle-topk",),
        fix=set_flags("draft a chain (topk 1)", Applicability.UNSAFE, **chain),
    )


QWEN3_NEXT_MTP_TREE = (
    "--model-path",
    "Qwen/Qwen3-Next-80B-A3B-Instruct",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "4",
    "--speculative-num-draft-tokens",
    "8",
)
QWEN3_NEXT_FACTS = {
    "architectures": ("Qwen3NextForCausalLM",),
    "num_nextn_predict_layers": 1,
}

RULE = Rule(
    check=check,
    code="HY311",
    category=Category.WRONG_OUTPUT,
    name="gdn-tree-draft-verified-as-chain",
    summary="Qwen3-Next with an EAGLE tree draft (topk > 1) verifies it as a chain, corrupting its state (0.5.2 to 0.5.4.post1)",
    severity=Severity.WARNING,
    sglang_versions=">=0.5.2,<=0.5.4.post1",
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN, MTP) or STANDALONE with a topk above 1 on a `Qwen3NextForCausalLM` target, "
        "SGLang 0.5.2 (where Qwen3-Next arrives) to 0.5.4.post1.",
        why="In these releases the hybrid linear-attention backend runs target verify as a chain: "
        "`causal_conv1d_update` and `fused_recurrent_gated_delta_rule_update` advance each draft token from the "
        "one before it (0.5.2 layers/attention/hybrid_linear_attn_backend.py:273-360; 0.5.4.post1 :333-420), and "
        "after verify `update_mamba_state_after_mtp_verify` keeps the state at step `accepted_length - 1` "
        "(0.5.2 :529-551; 0.5.4.post1 :671-704), called from eagle_worker.py (0.5.2 :832-842; 0.5.4.post1 "
        ":690-700). With a tree the token before is a sibling or another branch, so the target's verify logits "
        "and the kept state are those of a wrong context, and the output drifts after the first accepted branch "
        "point. No release refuses it. 0.5.4.post3 builds tree metadata for topk > 1 (hybrid_linear_attn_backend.py:"
        "214-224, 275-290), its conv kernel follows parents, and eagle_worker.py:706-743 keeps the accepted node's "
        "state.",
        fix="Draft a chain (`--speculative-eagle-topk 1`, draft tokens = steps + 1) or upgrade to SGLang 0.5.4.post3.",
        fix_safety="Unsafe: a chain drafts fewer candidates, which changes the acceptance rate.",
    ),
    bad=Example(
        argv=QWEN3_NEXT_MTP_TREE,
        target=QWEN3_NEXT_FACTS,
        gpu="H100",
        sglang_version="0.5.4.post1",
    ),
    good=Example(
        argv=QWEN3_NEXT_MTP_TREE,
        target=QWEN3_NEXT_FACTS,
        gpu="H100",
        sglang_version="0.5.4.post3",
    ),
    sources=(
        "sglang 0.5.2rc2: python/sglang/srt/models (no qwen3_next.py)",
        (
            "sglang 0.5.2: python/sglang/srt/layers/attention/hybrid_linear_attn_backend.py:273-360,529-551; "
            "speculative/eagle_worker.py:832-842"
        ),
        (
            "sglang 0.5.4.post1: python/sglang/srt/layers/attention/hybrid_linear_attn_backend.py:333-420,671-704; "
            "speculative/eagle_worker.py:690-700; model_executor/model_runner.py:1334-1339"
        ),
        (
            "sglang 0.5.4.post3: python/sglang/srt/layers/attention/hybrid_linear_attn_backend.py:214-224,275-290; "
            "speculative/eagle_worker.py:706-743"
        ),
    ),
)
