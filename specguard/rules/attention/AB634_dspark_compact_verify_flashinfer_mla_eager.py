"""AB634 dspark-compact-verify-flashinfer-mla-eager."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.AB520_dspark_compact_verify_graph_backend import (
    EARLIER_REFUSALS,
    decode_graphs_captured,
)
from specguard.rules.attention.AB632_dspark_compact_verify_trtllm_mla_dense_view import (
    compact_dspark_on_mla_target,
)
from specguard.rules.attention.backends import SGLANG_DIALECTS, verify_backend
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import DEEPSEEK_V3_MLA_FACTS, DEEPSEEK_V3_TP8_DSPARK
from specguard.rules.spec_params._ragged_verify import RAGGED, unset_ragged


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not compact_dspark_on_mla_target(ctx):
        return
    if not decode_graphs_captured(ctx) or any(
        ctx.spec.has(f) for f in EARLIER_REFUSALS
    ):
        return  # eager anyway, or refused by the graph runner first
    backend, flag = verify_backend(ctx)
    if backend != "flashinfer":
        return
    where = (
        f"{ctx.flag(flag)} flashinfer"
        if flag is not None
        else "flashinfer (SGLang's default here)"
    )
    yield RULE.finding(
        f"DSPARK with {RAGGED}=compact on an MLA target whose target verify runs on {where}, SGLang "
        f"{ctx.version}: the FlashInfer MLA backend does not declare ragged-verify CUDA-graph support in this "
        "release, so the graph runner captures the token-tier verify graphs but sends every compact verify batch "
        f"to eager mode: target verify never replays a CUDA graph. Unset {RAGGED} (static verify replays its "
        "graphs), or use SGLang 0.5.17, where FlashInfer MLA replays ragged verify graphs",
        flags=(flag, "--speculative-algorithm")
        if flag is not None
        else ("--speculative-algorithm",),
        fix=unset_ragged(),
    )


_DSV3_DSPARK = (*DEEPSEEK_V3_TP8_DSPARK, "--attention-backend", "flashinfer")

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB634",
    category=Category.PERF,
    name="dspark-compact-verify-flashinfer-mla-eager",
    summary="DSPARK with SGLANG_RAGGED_VERIFY_MODE=compact verifying an MLA target on flashinfer runs every verify "
    "eagerly (0.5.16)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` with `SGLANG_RAGGED_VERIFY_MODE=compact` on an MLA target "
        "(config.json carries kv_lora_rank; not DeepSeek-V4, not a DSA class, no index_topk) whose target "
        "verify runs on flashinfer (typed for the verify phase, or SGLang's default), with decode CUDA graphs "
        "on, SGLang 0.5.16.",
        why="In compact mode every verify batch carries a ragged layout (speculative/dspark_components/"
        "dspark_planner.py:421-457) and the decode graph runner captures target verify by token tier "
        "(model_executor/runner/decode_cuda_graph_runner.py:283-292, :413-416). At replay, "
        "`_can_run_ragged_verify_graph` returns False for a backend whose `supports_ragged_verify_graph` is "
        "unset (:593-595), so the batch runs eagerly. In 0.5.16 only fa3, trtllm_mha and DeepSeek-V4 set it "
        "(flashattention_backend.py:137, trtllm_mha_backend.py:90, deepseek_v4_backend.py:489); "
        "`FlashInferMLAAttnBackend` (what flashinfer is on an MLA model, attention_registry.py:41-65) does not, "
        "though its eager verify reads the ragged layout (speculative/dflash_info.py:96-122). 0.5.17 sets it "
        "and keys its verify graphs by token tier (layers/attention/flashinfer_mla_backend.py:211-213, "
        ":467-474). An MHA target on flashinfer fails capture instead (AB520).",
        fix="Unset `SGLANG_RAGGED_VERIFY_MODE` (static verify), or upgrade to SGLang 0.5.17.",
        fix_safety="Unsafe: the verify schedule changes.",
    ),
    bad=Example(
        argv=_DSV3_DSPARK,
        target=DEEPSEEK_V3_MLA_FACTS,
        env={RAGGED: "compact"},
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=_DSV3_DSPARK,
        target=DEEPSEEK_V3_MLA_FACTS,
        env={RAGGED: "compact"},
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/speculative/ (no DSPARK, no ragged verify)",
        "sglang 0.5.16: python/sglang/srt/model_executor/runner/decode_cuda_graph_runner.py:283-292,413-416,593-595",
        "sglang 0.5.16: python/sglang/srt/layers/attention/base_attn_backend.py:45",
        "sglang 0.5.16: python/sglang/srt/layers/attention/attention_registry.py:41-65",
        "sglang 0.5.16: python/sglang/srt/speculative/dflash_info.py:96-122",
        "sglang 0.5.17: python/sglang/srt/layers/attention/flashinfer_mla_backend.py:211-213,467-474",
    ),
    sglang_versions="==0.5.16",
)
