"""AB632 dspark-compact-verify-trtllm-mla-dense-view."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    is_mla_target,
    verify_backend,
)
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import DEEPSEEK_V3_MLA_FACTS, DEEPSEEK_V3_TP8_DSPARK
from specguard.rules.spec_params._ragged_verify import RAGGED, unset_ragged
from specguard.sglang_facts.architectures import DSA_ARCHITECTURES, DSV4_ARCHITECTURES

# The registry's TRTLLMMLABackend entries: tokenspeed_mla subclasses it and overrides only the decode
# kernel, cutedsl_mla is the class itself (0.5.16 layers/attention/attention_registry.py:68-94,
# tokenspeed_mla_backend.py:89, :274).
TRTLLM_MLA_CLASS_BACKENDS = frozenset({"trtllm_mla", "tokenspeed_mla", "cutedsl_mla"})


def compact_dspark_on_mla_target(ctx: CheckContext) -> bool:
    """DSPARK in compact ragged-verify mode on an MLA target that verifies on a generic MLA backend."""
    if ctx.algorithm != "DSPARK" or ctx.spec.env_value(RAGGED) != "compact":
        return False
    target = ctx.target
    if target is None or not is_mla_target(ctx):
        return False
    # DeepSeek-V4 and the sparse-indexer (NSA/DSA) targets verify on their own backends.
    return (
        target.architecture not in DSV4_ARCHITECTURES
        and target.architecture not in DSA_ARCHITECTURES
        and target.index_topk is None
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not compact_dspark_on_mla_target(ctx):
        return
    backend, flag = verify_backend(ctx)
    if backend not in TRTLLM_MLA_CLASS_BACKENDS:
        return
    where = (
        f"{ctx.flag(flag)} {backend}"
        if flag is not None
        else f"{backend} (SGLang's default here)"
    )
    yield RULE.finding(
        f"DSPARK with {RAGGED}=compact on an MLA target whose target verify runs on {where}, SGLang "
        f"{ctx.version}: compact mode hands every verify batch a ragged layout (per-request verify lengths, "
        "padded to a token tier), but this release's TRT-LLM MLA backend ignores it and reshapes the query as "
        "[batch, tokens / batch] with every request's KV length grown by the full draft width. A tier that the "
        "batch does not divide fails that view (CUDA-graph capture of target verify already builds such tiers), "
        "and any other ragged batch attends with rows of the wrong requests. 0.5.17 pads the ragged rows; on "
        f"0.5.16 unset {RAGGED} (static verify)",
        flags=(flag, "--speculative-algorithm")
        if flag is not None
        else ("--speculative-algorithm",),
        fix=unset_ragged(),
    )


_DSV3_DSPARK = (*DEEPSEEK_V3_TP8_DSPARK, "--attention-backend", "trtllm_mla")

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB632",
    category=Category.CRASH,
    name="dspark-compact-verify-trtllm-mla-dense-view",
    summary="DSPARK with SGLANG_RAGGED_VERIFY_MODE=compact verifying an MLA target on trtllm_mla reshapes ragged "
    "verify batches as dense ones (0.5.16)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` with `SGLANG_RAGGED_VERIFY_MODE=compact` on an MLA target "
        "(config.json carries kv_lora_rank; not DeepSeek-V4, not a DSA class, no index_topk) whose target "
        "verify runs on trtllm_mla, tokenspeed_mla or cutedsl_mla (typed for the verify phase, or SGLang's "
        "default), SGLang 0.5.16.",
        why="0.5.16 added DSPARK and ragged verify. In compact mode the planner builds a ragged layout for every "
        "verify (speculative/dspark_components/dspark_planner.py:421-457), the verify ids are laid out per "
        "request and padded to a token tier (dspark_verify.py:315-345), and the decode CUDA-graph runner "
        "captures target verify at token tiers `bs * draft_tokens` over `min(tokens, max_bs)` requests "
        "(model_executor/runner/decode_cuda_graph_runner.py:283-292, :413-416, :476-499, :1356). "
        "`TRTLLMMLABackend.forward_extend` never reads the layout: it sets every request's KV length to "
        "`seq_len + num_draft_tokens` (layers/attention/trtllm_mla_backend.py:530-533) and views the query as "
        "`q.view(bs, -1, heads, head_dim)` 'for target_verify, all sequences have the same number of draft "
        "tokens' (:907-914), a shape error for a tier the batch does not divide and rows of the wrong requests "
        "otherwise. 0.5.17 reads `spec_info.ragged_verify_layout`, pads each request's rows into the dense query "
        "and unpads with the uncovered rows zeroed (0.5.17 trtllm_mla_backend.py:1287-1323), and declares "
        "`supports_ragged_verify_graph` (:193); 0.5.23 keeps it. Cap-accept builds ragged layouts only when its "
        "budget schedules one and captures uniform graphs, so only compact is claimed.",
        fix="Unset `SGLANG_RAGGED_VERIFY_MODE` (static verify), or upgrade to SGLang 0.5.17.",
        fix_safety="Unsafe: the verify schedule changes.",
    ),
    bad=Example(
        argv=_DSV3_DSPARK,
        target=DEEPSEEK_V3_MLA_FACTS,
        env={RAGGED: "compact"},
        gpu="B200",
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=_DSV3_DSPARK,
        target=DEEPSEEK_V3_MLA_FACTS,
        env={RAGGED: "static"},
        gpu="B200",
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/speculative/ (no DSPARK, no ragged verify)",
        "sglang 0.5.16: python/sglang/srt/layers/attention/trtllm_mla_backend.py:530-533,907-914",
        "sglang 0.5.16: python/sglang/srt/layers/attention/attention_registry.py:68-94",
        "sglang 0.5.16: python/sglang/srt/model_executor/runner/decode_cuda_graph_runner.py:283-292,413-416,476-499,1356",
        "sglang 0.5.16: python/sglang/srt/speculative/dspark_components/dspark_planner.py:421-457",
        "sglang 0.5.17: python/sglang/srt/layers/attention/trtllm_mla_backend.py:193,1287-1323",
    ),
    sglang_versions="==0.5.16",
)
