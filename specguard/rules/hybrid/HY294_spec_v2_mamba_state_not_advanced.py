"""HY294 spec-v2-mamba-state-not-advanced."""

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
from specguard.rules.hybrid._hybrid import is_mamba_radix_target
from specguard.rules.spec_params._spec_v2 import (
    ENV,
    back_to_v1,
    runs_overlapped_spec_v2,
    v2_switch,
)
from specguard.sglang_facts.changes import SPEC_V2_TOPK_CHECKED


def eagle3_overlap_kept_off(ctx: CheckContext) -> bool:
    """Before 0.5.7 the SpecV2 branch forces the overlap scheduler on for EAGLE only (0.5.6.post2
    server_args.py:1745-1758); EAGLE3 keeps what the model adjustments left, and those turn it off
    for a hybrid target whose radix cache stays on (:1291-1295, :1331-1342). 0.5.7 forces it on for
    both in the same branch that started checking topk (SPEC_V2_TOPK_CHECKED, :2000-2007)."""
    return (
        ctx.algorithm == "EAGLE3"
        and not SPEC_V2_TOPK_CHECKED.present_in(ctx.version)
        and not ctx.spec.has("--disable-radix-cache")
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        not is_mamba_radix_target(ctx)
        or not runs_overlapped_spec_v2(ctx)
        or eagle3_overlap_kept_off(ctx)
    ):
        return
    assert ctx.target is not None  # is_mamba_radix_target
    chosen = v2_switch(ctx)
    yield RULE.finding(
        f"{ctx.target.architecture} (a mamba/linear-attention hybrid) with {ctx.algorithm} on the SpecV2 worker "
        f"({chosen}) in SGLang {ctx.version}: the target verify runs the recurrent layers without writing their state, "
        "and only the V1 worker copies the accepted step's state back, so on V2 the mamba/GDN state never advances past "
        "the prefill and every decoded token is computed from a stale state (wrong output, low acceptance). Fixed in "
        "0.5.10rc0; otherwise run the V1 worker",
        flags=("--model-path", "--speculative-algorithm"),
        fix=back_to_v1(ctx),
    )


_QWEN3_NEXT_MTP = (
    "--model-path",
    "Qwen/Qwen3-Next-80B-A3B-Instruct",
    "--tp",
    "4",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)
_QWEN3_NEXT_FACTS = {
    "architectures": ("Qwen3NextForCausalLM",),
    "num_nextn_predict_layers": 1,
}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="HY294",
    category=Category.WRONG_OUTPUT,
    name="spec-v2-mamba-state-not-advanced",
    summary="A mamba/GDN hybrid target on the SpecV2 overlap worker before 0.5.10rc0: the recurrent state is never advanced after verify",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="A hybrid linear-attention target (config.json `architectures[0]` Qwen3-Next, Qwen3.5, Nemotron-H, "
        "Falcon-H1, Jet-Nemotron, LFM2) with EAGLE, EAGLE3 or NEXTN on the SpecV2 worker with the overlap scheduler on "
        "(`--enable-beta-spec` in 0.5.3.post2-0.5.4, `SGLANG_ENABLE_SPEC_V2=1` from 0.5.5), up to SGLang 0.5.9.",
        why="The hybrid backend runs the target verify with `disable_state_update=True` (0.5.9 "
        "layers/attention/hybrid_linear_attn_backend.py:1027; 0.5.4 :422) and keeps the per-step states aside; the V1 "
        "`EAGLEWorker.verify` then calls `update_mamba_state_after_mtp_verify` with the accepted step (0.5.3.post2 "
        "speculative/eagle_worker.py:711; 0.5.9 :855). `EAGLEWorkerV2` has no such call: no wheel from 0.5.3.post2 to "
        "0.5.9 names mamba in speculative/eagle_worker_v2.py, so the recurrent state stays where the prefill left it. "
        "0.5.10rc0 adds `_mamba_verify_update`, called from `verify` when the target has a GDN or mamba2 config "
        "(eagle_worker_v2.py:829-836, 937-997; PR 18808). The architectures are those whose model runner reports "
        "`hybrid_gdn_config` or `mamba2_config` (0.5.9 model_executor/model_runner.py:1578-1605).",
        fix="Upgrade to 0.5.10rc0 or later, or run the V1 worker (drop `--enable-beta-spec` / unset `SGLANG_ENABLE_SPEC_V2`).",
        fix_safety="Unsafe: the V1 worker runs without the overlap scheduler (slower).",
    ),
    bad=Example(
        argv=_QWEN3_NEXT_MTP,
        target=_QWEN3_NEXT_FACTS,
        env={ENV: "1"},
        sglang_version="0.5.9",
    ),
    good=Example(
        argv=_QWEN3_NEXT_MTP,
        target=_QWEN3_NEXT_FACTS,
        env={ENV: "1"},
        sglang_version="0.5.10rc0",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/pull/18808 ([Spec V2] Support specV2 for qwen3next)",
        "sglang 0.5.3.post2: python/sglang/srt/speculative/eagle_worker.py:711 (V1 advances the state)",
        "sglang 0.5.4: python/sglang/srt/layers/attention/hybrid_linear_attn_backend.py:422",
        "sglang 0.5.6.post2: python/sglang/srt/server_args.py:1291-1295,1331-1342,1745-1758",
        "sglang 0.5.9: python/sglang/srt/speculative/eagle_worker.py:855",
        "sglang 0.5.9: python/sglang/srt/layers/attention/hybrid_linear_attn_backend.py:1027",
        "sglang 0.5.9: python/sglang/srt/model_executor/model_runner.py:1578-1605",
        "sglang 0.5.10rc0: python/sglang/srt/speculative/eagle_worker_v2.py:829-836,937-997",
    ),
    sglang_versions=">=0.5.3.post2,<=0.5.9",
)
