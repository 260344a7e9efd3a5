"""HY293 nsa-spec-v2-draft-extend-mode."""

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
from specguard.rules.hybrid.HY310_nsa_target_speculation import runs_nsa_backend
from specguard.rules.spec_params._spec_v2 import (
    ENV,
    back_to_v1,
    runs_overlapped_spec_v2,
    v2_switch,
)
from specguard.sglang_facts.architectures import NSA_ARCHITECTURES


def check(ctx: CheckContext) -> Iterator[Finding]:
    target = ctx.target
    if (
        target is None
        or target.architecture not in NSA_ARCHITECTURES
        or target.index_topk is None
    ):
        return
    if not runs_nsa_backend(ctx) or not runs_overlapped_spec_v2(ctx):
        return
    chosen = v2_switch(ctx)
    yield RULE.finding(
        f"{target.architecture} (DeepSeek sparse attention, nsa backend) with {ctx.algorithm} on the SpecV2 worker "
        f"({chosen}) in SGLang {ctx.version}: the V2 draft extend runs in the DRAFT_EXTEND_V2 mode, which the nsa "
        "backend's init_forward_metadata does not know, so the first decode step fails with \"AssertionError: "
        'Unsupported forward_batch.forward_mode = <ForwardMode.DRAFT_EXTEND_V2: 7>". Fixed in 0.5.7; otherwise run '
        "the V1 worker",
        flags=("--model-path", "--speculative-algorithm"),
        fix=back_to_v1(ctx),
    )


_DEEPSEEK_V32_MTP = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3.2-Exp",
    "--tp",
    "8",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)
_DEEPSEEK_V32_FACTS = {
    "architectures": ("DeepseekV32ForCausalLM",),
    "index_topk": 2048,
    "num_nextn_predict_layers": 1,
}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="HY293",
    category=Category.CRASH,
    name="nsa-spec-v2-draft-extend-mode",
    summary="A DeepSeek NSA target (V3.2) on the SpecV2 overlap worker before 0.5.7: the nsa backend asserts on the V2 draft extend",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="A target whose config.json `architectures[0]` is `DeepseekV32ForCausalLM` or `DeepseekV3ForCausalLM` "
        "and that sets `index_topk` (DeepSeek-V3.2), on the nsa attention backend, with EAGLE/NEXTN on the SpecV2 "
        "worker with the overlap scheduler on (`--enable-beta-spec` in 0.5.4, `SGLANG_ENABLE_SPEC_V2=1` from 0.5.5), "
        "SGLang 0.5.4 to 0.5.6.post2.",
        why="After each verify the V2 worker refills the draft KV cache in `ForwardMode.DRAFT_EXTEND_V2` and calls the "
        "draft backend's `init_forward_metadata` (0.5.4 speculative/eagle_info_v2.py:184-186; 0.5.6.post2 :196-204; "
        "CUDA keeps this step out of CUDA graphs, eagle_worker_v2.py:254-255). The nsa backend's "
        "`init_forward_metadata` branches on decode/idle, target verify, `is_draft_extend()` and `is_extend()`, none of "
        "which counts DRAFT_EXTEND_V2 without `include_v2` (model_executor/forward_batch_info.py:101-145), and ends in "
        '`assert False, f"Unsupported {forward_batch.forward_mode = }"` (0.5.4 layers/attention/nsa_backend.py:314; '
        '0.5.6.post2 :495), which prints "AssertionError: Unsupported forward_batch.forward_mode = '
        '<ForwardMode.DRAFT_EXTEND_V2: 7>". 0.5.7 handles the mode (nsa_backend.py:397 `is_draft_extend(include_v2=True)`, '
        ":430). Before 0.5.4 the nsa backend refuses speculation altogether (HY310).",
        fix="Upgrade to 0.5.7 or later, or run the V1 worker (drop `--enable-beta-spec` / unset `SGLANG_ENABLE_SPEC_V2`).",
        fix_safety="Unsafe: the V1 worker runs without the overlap scheduler (slower).",
    ),
    bad=Example(
        argv=_DEEPSEEK_V32_MTP,
        target=_DEEPSEEK_V32_FACTS,
        env={ENV: "1"},
        gpu="H200",
        sglang_version="0.5.6.post2",
    ),
    good=Example(
        argv=_DEEPSEEK_V32_MTP,
        target=_DEEPSEEK_V32_FACTS,
        env={ENV: "1"},
        gpu="H200",
        sglang_version="0.5.7",
    ),
    sources=(
        "sglang 0.5.4: python/sglang/srt/speculative/eagle_info_v2.py:184-186",
        "sglang 0.5.4: python/sglang/srt/layers/attention/nsa_backend.py:238-314",
        "sglang 0.5.6.post2: python/sglang/srt/speculative/eagle_info_v2.py:196-204",
        "sglang 0.5.6.post2: python/sglang/srt/speculative/eagle_worker_v2.py:254-255,509-521",
        "sglang 0.5.6.post2: python/sglang/srt/model_executor/forward_batch_info.py:101-145",
        "sglang 0.5.6.post2: python/sglang/srt/layers/attention/nsa_backend.py:353-495",
        "sglang 0.5.7: python/sglang/srt/layers/attention/nsa_backend.py:397,430",
    ),
    sglang_versions=">=0.5.4,<=0.5.6.post2",
    log_signatures=(
        r"Unsupported forward_batch\.forward_mode = <ForwardMode\.DRAFT_EXTEND_V2",
    ),
)
