"""DM422 eagle3-aux-count-draft-extend-graph."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.AB295_triton_spec_v2_draft_extend_graph_prefix import (
    draft_extend_backend,
)
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.draft_model._common import eagle3_fc_layout
from specguard.rules.examples import LLAMA31_8B_EAGLE3_CHAIN
from specguard.sglang_facts.changes import SPEC_V2_ALWAYS, Change, as_of

EAGLE3_HEAD = "LlamaForCausalLMEagle3"
# The aux count the draft-extend graph buffer assumes: the target's config never names the head's aux layers.
BUFFER_AUX_COUNT = 3

# The draft-extend backends whose CUDA graph the V2 worker captures on CUDA, newest first (the class
# isinstance check in speculative/eagle_worker_v2.py init_cuda_graphs, by the backend name that builds it).
V2_GRAPHED_BACKENDS = (
    (
        Change(
            "0.5.14",
            "0.5.14 speculative/eagle_worker_v2.py:427-439 adds FlashInferAttnBackend",
        ),
        frozenset(
            {"triton", "trtllm_mla", "trtllm_mha", "tokenspeed_mla", "flashinfer"}
        ),
    ),
    (
        Change(
            "0.5.13",
            "0.5.13 speculative/eagle_worker_v2.py:369-377 adds TRTLLMHAAttnBackend, TokenspeedMLABackend",
        ),
        frozenset({"triton", "trtllm_mla", "trtllm_mha", "tokenspeed_mla"}),
    ),
)
# 0.5.10 to 0.5.12.post1 (0.5.10 eagle_worker_v2.py:296-299; 0.5.12 :313-316); earlier V2 releases chose the
# draft-extend graph by other conditions.
V2_GRAPHED_BACKENDS_FROM_0_5_10 = frozenset({"triton", "trtllm_mla"})
# The V1 worker captures the draft extend for every backend with a draft-extend backend; flashmla has none
# (0.5.12 speculative/draft_utils.py:312-316, eagle_worker.py:299).
V1_UNGRAPHED_BACKENDS = frozenset({"flashmla"})


def captures_draft_extend_graph_on_cuda(ctx: CheckContext) -> bool:
    """CUDA graphs on, on CUDA (the NPU and ROCm draft-extend graphs are other runners, not read here)."""
    if ctx.spec.get("disable_cuda_graph"):
        return False
    gpu = ctx.env.gpu
    return (gpu is None or gpu.platform == "cuda") and ctx.spec.get("device") in (
        None,
        "cuda",
    )


def v2_graphs_draft_extend(ctx: CheckContext, backend: str) -> bool:
    """Whether the V2 worker (0.5.10 on) captures a draft extend on ``backend`` in a CUDA graph."""
    return backend in as_of(
        V2_GRAPHED_BACKENDS, ctx.version, before=V2_GRAPHED_BACKENDS_FROM_0_5_10
    )


def _captures_draft_extend_graph(ctx: CheckContext) -> bool:
    backend = draft_extend_backend(ctx)
    if backend is None or not captures_draft_extend_graph_on_cuda(ctx):
        return False
    if (
        not SPEC_V2_ALWAYS.present_in(ctx.version)
        and ctx.resolution.disable_overlap_schedule
    ):
        return (
            backend not in V1_UNGRAPHED_BACKENDS
        )  # 0.5.12.x without overlap: the V1 EAGLEWorker
    return v2_graphs_draft_extend(ctx, backend)


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.draft
    if ctx.algorithm != "EAGLE3" or draft is None or draft.architecture != EAGLE3_HEAD:
        return
    if draft.eagle_use_aux_hidden_state is False:
        return  # the head takes the target's last hidden state: the buffer is spec_hidden_size wide
    layout = eagle3_fc_layout(draft, ctx.version)
    if (
        layout is None
        or layout[1] == BUFFER_AUX_COUNT
        or not _captures_draft_extend_graph(ctx)
    ):
        return
    width, count = layout
    yield RULE.finding(
        f"the EAGLE3 head's config names {count} aux hidden states, so SGLang {ctx.version} builds its fc for "
        f"{width * count} inputs, but the draft-extend CUDA graph sizes its hidden-state buffer from the target's "
        f"config, which names no aux layers: {BUFFER_AUX_COUNT} x the target's hidden size. Capturing that graph "
        "runs fc on the wrong width and the server fails at start. Use "
        f"{ctx.flag('--disable-cuda-graph')} or SGLang 0.5.15, which reads the width from the draft's config",
        flags=("--speculative-draft-model-path",),
        fix=set_flags(
            "turn CUDA graphs off", Applicability.UNSAFE, disable_cuda_graph=True
        ),
    )


DRAFT = {
    "architectures": (EAGLE3_HEAD,),
    "hidden_size": 4096,
    "eagle_aux_hidden_state_layer_ids": (1, 8, 15, 22, 29),
}

RULE = Rule(
    check=check,
    code="DM422",
    category=Category.START,
    name="eagle3-aux-count-draft-extend-graph",
    summary="An EAGLE3 head with other than 3 aux states breaks the draft-extend CUDA graph (0.5.12-0.5.14)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm EAGLE3` with a `LlamaForCausalLMEagle3` head whose config names an aux count "
        "other than 3 (`num_aux_hidden_states`, else the length of `eagle_config.eagle_aux_hidden_state_layer_ids`), "
        "CUDA graphs on, and a draft extend that SGLang captures in a CUDA graph: on the V2 worker a draft-extend "
        "backend of triton or trtllm_mla (0.5.12), plus trtllm_mha and tokenspeed_mla (0.5.13), plus flashinfer "
        "(0.5.14); on 0.5.12.x's V1 worker (overlap off) every backend but flashmla. SGLang 0.5.12 to 0.5.14, on CUDA.",
        why="From 0.5.12 the head sizes fc from its own config: `target_hidden_size` times `num_aux_hidden_states`, "
        "else the number of aux layer ids, else 3 (0.5.12 models/llama_eagle3.py:148-163). The draft-extend graph "
        "runner sizes its hidden-state buffer with `EagleDraftExtendInput.hidden_size_for` "
        "(0.5.12 speculative/eagle_draft_extend_cuda_graph_runner.py:135; 0.5.14 :155), which reads "
        "`num_aux_hidden_states` and `eagle_config` from the TARGET's hf_config (0.5.12 speculative/eagle_info.py:"
        "877-901; 0.5.14 :356-380), where an EAGLE3 head's aux layers never are, so the buffer is 3 x hidden and the "
        "captured forward runs fc (llama_eagle3.py:217-225) on the wrong width. The V2 worker captures that graph "
        "for the backends above (0.5.12 eagle_worker_v2.py:313-316; 0.5.13 :369-377; 0.5.14 :427-439), the V1 "
        "worker whenever a draft-extend backend exists (0.5.12 eagle_worker.py:299). 0.5.15 reads the width from the "
        "draft runner's config (speculative/eagle_utils.py:407-446, eagle_draft_extend_cuda_graph_runner.py:168). "
        "0.5.11 and earlier build fc for 3 aux states whatever the config says (DM101).",
        fix="Turn CUDA graphs off (`--disable-cuda-graph`), pick a draft-extend backend whose graph is not captured, "
        "or upgrade to SGLang 0.5.15.",
        fix_safety="Unsafe: without CUDA graphs decoding is slower.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3_CHAIN, "--attention-backend", "triton"),
        draft=DRAFT,
        gpu="H100",
        sglang_version="0.5.14",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3_CHAIN, "--attention-backend", "triton"),
        draft=DRAFT,
        gpu="H100",
        sglang_version="0.5.15",
    ),
    sources=(
        "sglang 0.5.11: python/sglang/srt/models/llama_eagle3.py:139 (fc for 3 aux states)",
        "sglang 0.5.12: python/sglang/srt/models/llama_eagle3.py:148-163,217-225",
        "sglang 0.5.12: python/sglang/srt/speculative/eagle_info.py:877-901",
        "sglang 0.5.12: python/sglang/srt/speculative/eagle_draft_extend_cuda_graph_runner.py:135",
        "sglang 0.5.12: python/sglang/srt/speculative/eagle_worker_v2.py:313-316",
        "sglang 0.5.12: python/sglang/srt/speculative/eagle_worker.py:273,299",
        "sglang 0.5.12: python/sglang/srt/speculative/draft_utils.py:312-316",
        "sglang 0.5.13: python/sglang/srt/speculative/eagle_worker_v2.py:369-377",
        "sglang 0.5.14: python/sglang/srt/speculative/eagle_info.py:356-380",
        "sglang 0.5.14: python/sglang/srt/speculative/eagle_worker_v2.py:427-439",
        "sglang 0.5.15: python/sglang/srt/speculative/eagle_utils.py:407-446",
        "sglang 0.5.15: python/sglang/srt/speculative/eagle_draft_extend_cuda_graph_runner.py:168",
    ),
    sglang_versions=">=0.5.12,<=0.5.14",
    dialects=SGLANG_DIALECTS,
)
