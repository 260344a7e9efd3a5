"""Which attention backend SGLang will run, and which one to propose instead.

Shared by the AB and VB families. The default backend (P38) is predicted in
``specguard.resolution.default_backend``, with its version boundaries. Here:
- topk > 1 with page_size > 1 (P21): no check up to 0.5.1; only flashinfer in 0.5.2-0.5.5
  (0.5.2 ``server_args.py:784-791``); flashinfer or fa3 in 0.5.6-0.5.12 (0.5.6
  ``server_args.py:1752-1759``); flashinfer, fa3 or triton from 0.5.13 (0.5.13
  ``arg_groups/speculative_hook.py:376``; 0.5.23 ``:1271-1282``). NGRAM: flashinfer only
  (0.5.3 ``server_args.py:1147-1153``; 0.5.23 ``speculative_hook.py:1355-1366``).
"""

from __future__ import annotations

from specguard.models import ModelFacts
from specguard.resolution import default_backend as resolution_default_backend
from specguard.rules.base import (  # noqa: F401  (SGLANG_DIALECTS re-exported: the AB and VB rules speak of SGLang itself)
    SGLANG_DIALECTS,
    CheckContext,
)
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import (
    DRAFT_GRAPH_PADDED_REPLAY_FIX,
    NGRAM_PAGE_TREE_FLASHINFER_ONLY,
    PAGE_TREE_FA3,
    PAGE_TREE_FLASHINFER_ONLY,
    PAGE_TREE_TRITON,
    Change,
    as_of,
)

# P21/P67: the backends SGLang accepts for a tree (topk > 1) with page_size > 1, newest first;
# no check before the oldest change. NGRAM has its own check, flashinfer only throughout.
PAGE_TREE_BACKENDS: tuple[tuple[Change, tuple[str, ...]], ...] = (
    (PAGE_TREE_TRITON, ("flashinfer", "fa3", "triton")),
    (PAGE_TREE_FA3, ("flashinfer", "fa3")),
    (PAGE_TREE_FLASHINFER_ONLY, ("flashinfer",)),
)
NGRAM_PAGE_TREE_BACKENDS: tuple[tuple[Change, tuple[str, ...]], ...] = (
    (NGRAM_PAGE_TREE_FLASHINFER_ONLY, ("flashinfer",)),
)

# gpt-oss's own default when no backend is typed: fa3 on Hopper (0.5.1.post3 server_args.py:2231-2238;
# 0.5.6 :1062-1071; 0.5.23 arg_groups/model_overrides/gpt_oss.py:28-33).
GPT_OSS = "GptOssForCausalLM"
HOPPER = 9
BACKEND_FLAGS = (
    "--attention-backend",
    "--prefill-attention-backend",
    "--decode-attention-backend",
)


def is_mla_target(ctx: CheckContext) -> bool:
    return ctx.target is not None and ctx.target.kv_lora_rank is not None


def effective_topk(ctx: CheckContext) -> int | None:
    """The topk SGLang runs with (auto-chosen, NGRAM breadth, DFLASH 1), else what was typed."""
    topk = ctx.resolution.eagle_topk
    return topk if topk is not None else ctx.spec.get("speculative_eagle_topk")


def topk_origin(ctx: CheckContext, topk: int) -> str:
    """How a message names where ``topk`` came from: nothing when typed, else SGLang's automatic choice."""
    return "" if ctx.spec.get("speculative_eagle_topk") == topk else " (SGLang's automatic choice)"


def page_size(ctx: CheckContext) -> int:
    """The page size SGLang runs with: typed, or forced by the backend (trtllm 64, fa4 128)."""
    return ctx.resolution.page_size or ctx.spec.get("page_size") or 1


def default_backend(ctx: CheckContext) -> str | None:
    """SGLang's own choice when ``--attention-backend`` is unset (``specguard.resolution``)."""
    return resolution_default_backend(ctx.spec, ctx.target, ctx.env, resolved_topk=effective_topk(ctx))


def attention_backend(ctx: CheckContext) -> tuple[str | None, bool]:
    """(backend, given): ``--attention-backend`` as typed, else SGLang's predicted default."""
    given = ctx.spec.get("attention_backend")
    if given is not None:
        return given, True
    return default_backend(ctx), False


def runtime_backends(ctx: CheckContext) -> set[str]:
    """Every backend the target's prefill and decode will run (split flags win)."""
    backend, _ = attention_backend(ctx)
    prefill = ctx.spec.get("prefill_attention_backend") or backend
    decode = ctx.spec.get("decode_attention_backend") or backend
    return {b for b in (prefill, decode) if b is not None}


def page_tree_backends(ctx: CheckContext) -> tuple[str, ...] | None:
    """P21/P67: the backends SGLang accepts for topk > 1 with page_size > 1; None: no check."""
    ladder = NGRAM_PAGE_TREE_BACKENDS if ctx.algorithm == "NGRAM" else PAGE_TREE_BACKENDS
    return as_of(ladder, ctx.version, before=None)


def flashinfer_padding_bug(ctx: CheckContext, backend: str) -> bool:
    """VB001's condition for one backend: flashinfer, EAGLE CUDA graphs on, before 0.5.3."""
    return (
        backend == "flashinfer"
        and ctx.version < DRAFT_GRAPH_PADDED_REPLAY_FIX.release
        and ctx.algorithm in EAGLE_WORKER_ALGORITHMS
        and not ctx.spec.get("disable_cuda_graph")
    )


def backend_works(ctx: CheckContext, backend: str) -> bool:
    """Whether ``backend`` passes every AB/VB check for this configuration and GPU."""
    gpu = ctx.env.gpu
    major = gpu.compute_capability[0] if gpu and gpu.compute_capability else None
    topk = effective_topk(ctx) or 1
    if backend == "fa3" and not (major == 9 or (major == 8 and not is_mla_target(ctx))):
        return False
    if backend == "trtllm_mha" and (topk > 1 or major not in (9, 10, 12)):
        return False
    allowed = page_tree_backends(ctx)
    if topk > 1 and page_size(ctx) > 1 and allowed is not None and backend not in allowed:
        return False
    return not flashinfer_padding_bug(ctx, backend)


def proposed_backend(ctx: CheckContext, *, avoid: frozenset[str] = frozenset()) -> str | None:
    """The backend specguard proposes: Hopper fa3, else flashinfer, else triton; None if none fits."""
    gpu = ctx.env.gpu
    if gpu is None or gpu.platform not in ("cuda", "rocm"):
        return None
    order: tuple[str, ...]
    if gpu.platform == "rocm":
        order = ("aiter", "triton")
    elif gpu.is_hopper:
        order = ("fa3", "flashinfer", "triton")
    else:
        order = ("flashinfer", "triton")
    for backend in order:
        if backend not in avoid and backend_works(ctx, backend):
            return backend
    return None


def typed_phase_backend(ctx: CheckContext, *first: str) -> tuple[str | None, str | None]:
    """(backend, flag) as typed: the first of ``first`` that is set, else the phase backend
    --speculative-attention-mode names (prefill unless it says decode), else --attention-backend;
    (None, None) when none is typed (0.5.6 layers/attention/hybrid_attn_backend.py:42-51; 0.5.7
    speculative/draft_utils.py:21-36, 62-87 reads the draft's own flag first)."""
    phase = (
        "--decode-attention-backend"
        if ctx.spec.last_value("--speculative-attention-mode") == "decode"
        else "--prefill-attention-backend"
    )
    for flag in (*first, phase, "--attention-backend"):
        value = ctx.spec.last_value(flag)
        if value is not None:
            return value, flag
    return None, None


def draft_decode_backend(ctx: CheckContext) -> str | None:
    """The backend the draft's decode steps run on: --speculative-draft-attention-backend, else the
    target's decode backend, else the target's backend as resolved."""
    return (
        ctx.spec.get("speculative_draft_attention_backend")
        or ctx.spec.get("decode_attention_backend")
        or ctx.resolution.attention_backend
    )


def mla_of(facts: ModelFacts | None) -> bool | None:
    """Whether a model is MLA from its config.json (MLA configs carry kv_lora_rank); None when unknown."""
    if facts is None:
        return None
    if facts.kv_lora_rank is not None:
        return True
    return False if facts.architectures else None


def verify_backend(ctx: CheckContext) -> tuple[str | None, str | None]:
    """(backend, flag) that runs target verify: the phase backend speculative_attention_mode names, else
    --attention-backend, else SGLang's default (0.5.6 layers/attention/hybrid_attn_backend.py:42-51)."""
    backend, flag = typed_phase_backend(ctx)
    if backend is not None:
        return backend, flag
    gpu, target = ctx.env.gpu, ctx.target
    if (
        target is not None
        and target.architecture == GPT_OSS
        and gpu is not None
        and gpu.platform == "cuda"
        and gpu.compute_capability is not None
        and gpu.compute_capability[0] == HOPPER
        and not any(ctx.spec.has(flag) for flag in BACKEND_FLAGS)
    ):
        return "fa3", None
    backend, _ = attention_backend(ctx)  # not typed (read above): SGLang's default
    return backend, None
