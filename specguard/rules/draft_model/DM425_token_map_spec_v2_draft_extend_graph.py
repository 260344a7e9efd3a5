"""DM425 token-map-spec-v2-draft-extend-graph."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
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
    fix_of,
)
from specguard.rules.draft_model._common import draft_config
from specguard.rules.draft_model.DM422_eagle3_aux_count_draft_extend_graph import (
    captures_draft_extend_graph_on_cuda,
    v2_graphs_draft_extend,
)
from specguard.rules.examples import LLAMA31_8B
from specguard.sglang_facts.changes import SPEC_V2_ALWAYS

TOKEN_MAP = "--speculative-token-map"


def _runs_v2_worker(ctx: CheckContext) -> bool:
    """0.5.13 builds the V2 worker always; 0.5.10-0.5.12.post1 when the overlap scheduler stays on."""
    return (
        SPEC_V2_ALWAYS.present_in(ctx.version)
        or ctx.resolution.disable_overlap_schedule is False
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "EAGLE"
        or not ctx.spec.has(TOKEN_MAP)
        or ctx.spec.has("--enable-multi-layer-eagle")
    ):
        return
    draft = draft_config(ctx)
    if draft is None or draft.draft_vocab_size is not None:
        return  # unknown, or a draft_vocab_size the buffer takes instead of the full vocabulary
    backend = draft_extend_backend(ctx)
    if (
        backend is None
        or not captures_draft_extend_graph_on_cuda(ctx)
        or not _runs_v2_worker(ctx)
    ):
        return
    if not v2_graphs_draft_extend(ctx, backend):
        return
    yield RULE.finding(
        f"{ctx.flag(TOKEN_MAP)} with EAGLE on SGLang {ctx.version}'s SpecV2 worker, draft extend on {backend} with "
        "CUDA graphs: the V2 draft worker applies the token map only after it has built the draft, so the "
        "draft-extend CUDA graph sizes its logits buffer for the full vocabulary while the draft's head scores only "
        "the hot tokens, and copying the logits into that buffer fails with a shape error when the graph is "
        f"captured at start. Drop {ctx.flag(TOKEN_MAP)}, use {ctx.flag('--disable-cuda-graph')}, or SGLang 0.5.14",
        flags=(TOKEN_MAP, "--speculative-algorithm"),
        fix=fix_of(
            f"drop {TOKEN_MAP}", Applicability.UNSAFE, Edit(name=TOKEN_MAP, value=None)
        ),
    )


EAGLE_TOKEN_MAP = (
    *LLAMA31_8B,
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-draft-model-path",
    "lmsys/sglang-EAGLE-LLaMA3-Instruct-8B",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
    TOKEN_MAP,
    "thunlp/LLaMA3-Instruct-8B-FR-Spec/freq_32768.pt",
    "--attention-backend",
    "triton",
)
EAGLE2_HEAD = {"architectures": ("LlamaForCausalLMEagle",), "vocab_size": 128256}

RULE = Rule(
    check=check,
    code="DM425",
    category=Category.START,
    name="token-map-spec-v2-draft-extend-graph",
    summary="EAGLE with --speculative-token-map on the SpecV2 worker breaks the draft-extend CUDA graph (0.5.10-0.5.13)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm EAGLE` (or NEXTN) with `--speculative-token-map`, a draft whose config has no "
        "`draft_vocab_size`, on the SpecV2 worker (0.5.13 always; 0.5.11-0.5.12.post1 by default, i.e. overlap on; "
        "0.5.10 with `SGLANG_ENABLE_SPEC_V2=1`) with CUDA graphs on, on CUDA, when that worker captures the draft "
        "extend in a graph: a draft-extend backend of triton or trtllm_mla, plus trtllm_mha and tokenspeed_mla in 0.5.13.",
        why="The V2 `EagleDraftWorker` builds the draft `TpModelWorker` before `init_token_map` sets "
        "`json_model_override_args` to the hot vocabulary (0.5.10 speculative/eagle_worker_v2.py:139, 165; 0.5.13 "
        ":171, 197, 253-265), so the draft's hf_config never gets `hot_vocab_size`, while `init_lm_head` cuts the "
        "head it shares with the target to the hot tokens (0.5.10 :219-225; 0.5.13 :289-295). The draft-extend graph "
        "runner sizes `next_token_logits_buffer` from `draft_vocab_size`, else `hot_vocab_size`, else the full "
        "`vocab_size` (0.5.10 eagle_draft_extend_cuda_graph_runner.py:176-186; 0.5.13 :185-195), and the logits "
        "processor copies the head's hot-token logits into it (0.5.10 layers/logits_processor.py:966-972; 0.5.13 "
        ":977-983): a shape error at capture. The V2 worker captures that graph for the backends above (0.5.10 "
        "eagle_worker_v2.py:296-299; 0.5.12 :313-316; 0.5.13 :369-377). 0.5.14 sizes the buffer by "
        "`len(hot_token_id)` (eagle_draft_extend_cuda_graph_runner.py:198-210). The V1 worker applies the map before "
        "building the draft. Earlier V2 releases (0.5.4.post1-0.5.10rc0) chose the draft-extend graph by other "
        "conditions and are not judged here. EAGLE3 ignores the token map (DM007).",
        fix="Drop `--speculative-token-map`, turn CUDA graphs off, or upgrade to SGLang 0.5.14.",
        fix_safety="Unsafe: the draft then scores the whole vocabulary (slower drafting); the output is unchanged.",
    ),
    bad=Example(
        argv=EAGLE_TOKEN_MAP, draft=EAGLE2_HEAD, gpu="H100", sglang_version="0.5.13"
    ),
    good=Example(
        argv=EAGLE_TOKEN_MAP, draft=EAGLE2_HEAD, gpu="H100", sglang_version="0.5.14"
    ),
    sources=(
        "sglang 0.5.10: python/sglang/srt/speculative/eagle_worker_v2.py:139,165,219-225,296-299",
        "sglang 0.5.10: python/sglang/srt/speculative/eagle_draft_extend_cuda_graph_runner.py:176-186",
        "sglang 0.5.10: python/sglang/srt/layers/logits_processor.py:966-972",
        "sglang 0.5.13: python/sglang/srt/speculative/eagle_worker_v2.py:171,197,253-265,289-295,369-377",
        "sglang 0.5.13: python/sglang/srt/speculative/eagle_draft_extend_cuda_graph_runner.py:185-195",
        "sglang 0.5.13: python/sglang/srt/layers/logits_processor.py:977-983",
        "sglang 0.5.14: python/sglang/srt/speculative/eagle_draft_extend_cuda_graph_runner.py:198-210",
    ),
    sglang_versions=">=0.5.10,<=0.5.13",
    dialects=SGLANG_DIALECTS,
)
