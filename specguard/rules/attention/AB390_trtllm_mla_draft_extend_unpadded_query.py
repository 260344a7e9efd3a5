"""AB390 trtllm-mla-draft-extend-unpadded-query."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Fix, Severity
from specguard.rules.attention.backends import (
    BACKEND_FLAGS,
    SGLANG_DIALECTS,
    is_mla_target,
    typed_phase_backend,
)
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
    set_flags,
)
from specguard.rules.examples import DEEPSEEK_V3_MLA_FACTS
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import spec_v2_algorithms

# The targets ServerArgs gives trtllm_mla on SM100 when no backend is typed (and not DeepSeek NSA):
# 0.5.6.post1 server_args.py:959-963, 1040-1049; 0.5.7 :1023-1027, 1102-1111.
TRTLLM_MLA_DEFAULT_ARCHITECTURES = frozenset(
    {
        "DeepseekV3ForCausalLM",
        "MistralLarge3ForCausalLM",
        "PixtralForConditionalGeneration",
    }
)
# SGLang's max_running_requests for a speculative launch that sets none (0.5.6.post1 server_args.py:1706-1707).
SPEC_MAX_RUNNING_REQUESTS = 48
DRAFT = "--speculative-draft-attention-backend"


def default_trtllm_mla(ctx: CheckContext) -> bool:
    gpu, target = ctx.env.gpu, ctx.target
    if (
        gpu is None
        or gpu.platform != "cuda"
        or gpu.compute_capability is None
        or target is None
    ):
        return False
    return (
        gpu.compute_capability[0] == 10
        and target.architecture in TRTLLM_MLA_DEFAULT_ARCHITECTURES
        and target.index_topk is None
        and not any(ctx.spec.has(flag) for flag in BACKEND_FLAGS)
    )


def _eager_reason(ctx: CheckContext) -> str | None:
    """Why a draft extend of several requests runs outside its CUDA graph, if the launch shows it."""
    if ctx.spec.get("disable_cuda_graph"):
        return f"{ctx.flag('--disable-cuda-graph')} runs every draft extend eagerly"
    if ctx.spec.get("disable_cuda_graph_padding"):
        return f"{ctx.flag('--disable-cuda-graph-padding')} runs every batch size without a captured graph eagerly"
    graph_max = ctx.spec.get("cuda_graph_max_bs")
    running = ctx.spec.get("max_running_requests") or SPEC_MAX_RUNNING_REQUESTS
    if graph_max is not None and running > graph_max:
        return (
            f"batches above {ctx.flag('--cuda-graph-max-bs')} {graph_max} (up to {running} running requests) "
            "run the draft extend eagerly"
        )
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or not is_mla_target(ctx):
        return
    if ctx.spec.env_flag(
        "SGLANG_ENABLE_SPEC_V2"
    ) and ctx.algorithm in spec_v2_algorithms(ctx.version):
        return  # the V2 draft extend runs every draft token of every request: equal lengths
    backend, flag = typed_phase_backend(ctx, DRAFT)
    if backend is None and default_trtllm_mla(ctx):
        backend = "trtllm_mla"
    if backend != "trtllm_mla":
        return
    reason = _eager_reason(ctx)
    if reason is None:
        return
    how = (
        f"{ctx.flag(flag)} trtllm_mla"
        if flag
        else "SGLang's SM100 default for this target (trtllm_mla)"
    )
    yield RULE.finding(
        f"{how} runs the {ctx.algorithm} draft extend, and SGLang {ctx.env.sglang_version} views its query as "
        "(batch, -1, heads, dim) without padding each request's accepted tokens; "
        f"{reason}, where a batch whose accepted lengths do not add up to a multiple of its size raises "
        "RuntimeError \"shape '[bs, -1, heads, dim]' is invalid for input of size ...\" and the server stops. "
        "Use SGLang 0.5.8 or later, or keep the draft extend inside its CUDA graphs",
        flags=tuple(f for f in (flag, "--speculative-algorithm") if f),
        fix=_fix(ctx),
    )


def _fix(ctx: CheckContext) -> Fix:
    """Keep every draft extend inside a captured graph (what runs is the same kernel, padded)."""
    if ctx.spec.get("disable_cuda_graph"):
        return fix_of(
            "turn CUDA graphs back on",
            Applicability.UNSAFE,
            Edit(name="--disable-cuda-graph", value=None),
        )
    if ctx.spec.get("disable_cuda_graph_padding"):
        return fix_of(
            "pad batches into the captured graphs",
            Applicability.UNSAFE,
            Edit(name="--disable-cuda-graph-padding", value=None),
        )
    return set_flags(
        "cap the running requests at the graph size",
        Applicability.UNSAFE,
        max_running_requests=ctx.spec.get("cuda_graph_max_bs"),
    )


DEEPSEEK_V3_MTP = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
    "--tp",
    "8",
)

RULE = Rule(
    check=check,
    code="AB390",
    category=Category.CRASH,
    name="trtllm-mla-draft-extend-unpadded-query",
    summary="EAGLE/MTP draft extend on trtllm_mla outside its CUDA graphs in 0.5.6.post1-0.5.7, which views "
    "requests of different accepted lengths as one shape and crashes",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 or NEXTN on the V1 worker (no `SGLANG_ENABLE_SPEC_V2`) with an MLA target whose draft "
        "extend runs on trtllm_mla (`--speculative-draft-attention-backend` from 0.5.7, the prefill backend, or "
        "with `--speculative-attention-mode decode` the decode backend, else `--attention-backend`, else SGLang's "
        "SM100 default for DeepseekV3ForCausalLM, MistralLarge3ForCausalLM and PixtralForConditionalGeneration "
        "without DeepSeek sparse attention), on 0.5.6.post1-0.5.7, where the launch shows that the draft extend "
        "of several requests runs eagerly: `--disable-cuda-graph`, `--disable-cuda-graph-padding`, or "
        "`--max-running-requests` (48 when unset) above `--cuda-graph-max-bs`.",
        why="After each verify the V1 worker's draft extend runs accept_length + 1 tokens per request, packed "
        "(0.5.7 speculative/eagle_info.py:707), eagerly when the draft-extend graph runner cannot run the batch "
        "(speculative/eagle_worker.py:932-952). 0.5.6 "
        "`TRTLLMMLABackend.forward_extend` padded that query to (bs, max_seq_len_q) with pad_draft_extend_query and "
        "unpadded the output (layers/attention/trtllm_mla_backend.py:988-1009, 1027-1033). 0.5.6.post1 dropped both "
        "calls and views the packed query as `q.view(bs, -1, heads, head_dim)` (trtllm_mla_backend.py:977-1015; "
        "0.5.6.post2 the same; 0.5.7 :1012-1048), so a batch whose token count is not a multiple of bs raises, "
        "e.g. \"RuntimeError: shape '[2, -1, 128, 576]' is invalid for input of size 516096\", in the scheduler. "
        "0.5.8 pads again when the count is not a multiple of bs (trtllm_mla_backend.py:1049-1097). Inside a "
        "captured graph the query has its padded size bs x (steps + 1) and the view succeeds, so the rule needs "
        "the eager path. The V2 worker's draft extend runs every draft token (speculative/eagle_info_v2.py:199).",
        fix="Keep the draft extend inside its CUDA graphs (drop `--disable-cuda-graph`/`--disable-cuda-graph-padding`, "
        "or cap `--max-running-requests` at `--cuda-graph-max-bs`), or upgrade to 0.5.8.",
        fix_safety="Unsafe: CUDA graphs take memory, and a lower request cap queues requests.",
    ),
    bad=Example(
        argv=(*DEEPSEEK_V3_MTP, "--disable-cuda-graph"),
        target=DEEPSEEK_V3_MLA_FACTS,
        gpu="B200",
        sglang_version="0.5.6.post1",
    ),
    good=Example(
        argv=DEEPSEEK_V3_MTP,
        target=DEEPSEEK_V3_MLA_FACTS,
        gpu="B200",
        sglang_version="0.5.6.post1",
    ),
    sources=(
        "sglang 0.5.6: python/sglang/srt/layers/attention/trtllm_mla_backend.py:988-1009, 1027-1033 (padded)",
        "sglang 0.5.6.post1: python/sglang/srt/layers/attention/trtllm_mla_backend.py:977-1015; python/sglang/srt/server_args.py:959-963, 1040-1049, 1706-1707",
        "sglang 0.5.7: python/sglang/srt/layers/attention/trtllm_mla_backend.py:1012-1048; python/sglang/srt/speculative/eagle_info.py:707; python/sglang/srt/speculative/draft_utils.py:21-36",
        "sglang 0.5.8: python/sglang/srt/layers/attention/trtllm_mla_backend.py:1049-1097 (pads again)",
    ),
    sglang_versions=">=0.5.6.post1,<0.5.8",
    log_signatures=(r"shape '\[\d+, -1, \d+, \d+\]' is invalid for input of size \d+",),
)
