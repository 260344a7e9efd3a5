"""HY564 kda-verify-intermediate-states-not-written."""

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
from specguard.sglang_facts.architectures import KDA_ARCHITECTURES


def check(ctx: CheckContext) -> Iterator[Finding]:
    target = ctx.target
    if (
        ctx.algorithm is None
        or target is None
        or target.architecture not in KDA_ARCHITECTURES
    ):
        return
    yield RULE.finding(
        f"{ctx.algorithm} on a KDA linear-attention target ({target.architecture}) in SGLang {ctx.version}: target "
        "verify runs the plain KDA extend kernel, which advances the request's linear-attention state through every "
        "draft token, rejected ones included, and writes none of the per-draft intermediate SSM states; no correct "
        "state is restored after verify (before 0.5.14 no rollback runs for KDA; from 0.5.14 the rollback copies the "
        "accepted step out of the never-written, zero-initialised intermediate buffer), so later tokens are computed "
        "from a wrong linear-attention state. SGLang 0.5.16 verifies KDA with its own kernel: upgrade, or serve "
        "without speculative decoding",
        flags=("--speculative-algorithm",),
    )


KIMI_LINEAR_EAGLE3 = (
    "--model-path",
    "moonshotai/Kimi-Linear-48B-A3B-Instruct",
    "--tp",
    "4",
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    "/ckpt/kimi-linear-eagle3",
)
KIMI_LINEAR_FACTS = {"architectures": ("KimiLinearForCausalLM",)}

RULE = Rule(
    check=check,
    code="HY564",
    category=Category.WRONG_OUTPUT,
    name="kda-verify-intermediate-states-not-written",
    summary="Speculative decoding on a KDA (Kimi Linear) target restores linear-attention state the verify never "
    "wrote, corrupting generation (0.5.4.post3 to 0.5.15.post1)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="Any `--speculative-algorithm` on a target whose config.json `architectures[0]` is a KDA linear-attention "
        "model (KimiLinearForCausalLM), SGLang 0.5.4.post3 (the first release with Kimi Linear) to 0.5.15.post1.",
        why="KDA's verify falls through to the plain extend kernel, which runs every draft token (rejected ones "
        "too) into the request's SSM state in place and writes no per-draft intermediate state (0.5.4.post3 "
        "hybrid_linear_attn_backend.py:399-510, chunk_kda, `ssm_states[cache_indices] = last_recurrent_state`; 0.5.10 "
        "to 0.5.15.post1 layers/attention/linear/kda_backend.py forward_extend, 0.5.15.post1 :365-385, which says "
        "target_verify 'also reach[es] forward_extend'). Before 0.5.14 the post-verify rollback "
        "`update_mamba_state_after_mtp_verify` runs only for GDN/Mamba2 (and Lightning) targets (0.5.4.post3 "
        "speculative/eagle_worker.py:706,743, `hybrid_gdn_config`; 0.5.13 eagle_worker_v2.py:1275-1280), so a KDA "
        "request keeps the state of its rejected drafts. From 0.5.14 the shared commit runs for every `mambaish_config` "
        "target, KDA included (0.5.15.post1 speculative/spec_utils.py:598-672), and copies the accepted step out of the "
        "`intermediate_ssm` scratch (0.5.15.post1 hybrid_linear_attn_backend.py:1008-1045), which is allocated zeroed "
        "(mem_cache/memory_pool.py:489-510) and which the KDA verify never writes. 0.5.16 routes KDA verify to "
        "`_forward_target_verify`, which fills the intermediate states and conv windows the rollback reads "
        "(kda_backend.py:393-396, :489-567).",
        fix="Use SGLang 0.5.16 or later, or serve without speculative decoding. No automatic fix.",
        fix_safety="No fix.",
    ),
    bad=Example(
        argv=KIMI_LINEAR_EAGLE3,
        target=KIMI_LINEAR_FACTS,
        gpu="H200",
        sglang_version="0.5.15.post1",
    ),
    good=Example(
        argv=KIMI_LINEAR_EAGLE3,
        target=KIMI_LINEAR_FACTS,
        gpu="H200",
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.4.post1: python/sglang/srt/models (no kimi_linear.py)",
        "sglang 0.5.4.post3: python/sglang/srt/layers/attention/hybrid_linear_attn_backend.py:302,399-510,967-990",
        "sglang 0.5.4.post3: python/sglang/srt/speculative/eagle_worker.py:706,743",
        "sglang 0.5.13: python/sglang/srt/speculative/eagle_worker_v2.py:1275-1280",
        "sglang 0.5.15.post1: python/sglang/srt/speculative/spec_utils.py:598-672",
        "sglang 0.5.10: python/sglang/srt/layers/attention/linear/kda_backend.py:178-250",
        "sglang 0.5.15.post1: python/sglang/srt/layers/attention/linear/kda_backend.py:365-385",
        (
            "sglang 0.5.15.post1: python/sglang/srt/layers/attention/hybrid_linear_attn_backend.py:1008-1045; "
            "mem_cache/memory_pool.py:489-510"
        ),
        "sglang 0.5.16: python/sglang/srt/layers/attention/linear/kda_backend.py:393-396,489-567",
    ),
    sglang_versions=">=0.5.4.post3,<0.5.16",
)
