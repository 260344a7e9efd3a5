"""The GPU memory budget of one launch, per GPU, before it runs: pure Python over frozen data.

How SGLang 0.5.23 spends a GPU (``mem_cache/kv_cache_configurator.py``
``_profile_available_bytes``): it measures the free memory before loading (``pre``), loads the
target and draft weights, then gives the KV pool ``free_after_load - pre * (1 - mem_fraction_static)``.
So ``pre * mem_fraction_static`` holds weights + KV pool, and ``pre * (1 - mem_fraction_static)``
is left for CUDA graphs, their buffers, the draft tree's tensors and activations. Under
speculative decoding the KV cell includes the draft's layers (``pool_configurator.py``
``DefaultPoolConfigurator``), so target and draft share one token count. Before 0.5.14
(``DRAFT_IN_STATIC_BUDGET``) the target sized its pool before the EAGLE/STANDALONE draft loaded: the pool's cell is
the target's, and the draft's weights and KV pool take memory outside the static budget; and the default fraction
kept a draft reserve back (``SPEC_MEM_RESERVE_MIB``).

Each line of ``MemoryBudget`` carries the assumption it rests on; the MM rules quote them.
"""

from __future__ import annotations

from typing import NamedTuple

from packaging.version import Version

from specguard.memory.params import (
    ParamCount,
    count_draft,
    count_target,
    draft_kind,
    draft_shaped_like_target,
    kv_bytes_per_token,
)
from specguard.models import Environment, GpuSpec, ModelFacts
from specguard.records import Record
from specguard.resolution import Resolution
from specguard.resolution.cuda_graph import (
    VISIBLE_FRACTION,
    captured_graph_bs,
    configured_graph_bs,
    default_chunked_prefill,
    default_mem_fraction,
    gpu_visible_mib,
)
from specguard.sglang_facts.changes import DRAFT_IN_STATIC_BUDGET, as_of
from specguard.sglang_facts.defaults import (
    GRAPH_MIB_PER_BS,
    SPEC_MEM_RESERVE_MIB,
    SPEC_MEM_RESERVE_MIB_BEFORE,
)
from specguard.spec import LaunchSpec

GIB = 1 << 30
MIB = 1 << 20

# Assumptions, stated once and quoted by the budget lines and the rule docs.
CUDA_CONTEXT_GIB = 0.6  # H100 logs: 79.19 GiB visible, "Load weight begin. avail mem=78.58 GB"
NCCL_GIB_PER_TP = 0.5  # extra per process when tp > 1 (NCCL/custom all-reduce buffers), rough

# Every dtype a config.json (config_values.CONFIG_DTYPES) or --dtype choice names has a width here.
_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4, "float64": 8, "fp8": 1}
# Every --kv-cache-dtype choice of the release history; 4-bit formats count their elements only.
_KV_DTYPE_BYTES = {
    "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8": 1, "fp8_e4m3fn": 1, "mxfp8": 1,
    "fp4_e2m1": 0.5, "nvfp4": 0.5, "fp4_mx_block16": 0.5, "bfloat16": 2, "bf16": 2, "float16": 2, "fp16": 2, "float32": 4, "float64": 8,
}
# Bytes per quantized linear parameter (weights only; per-block/group scales added below).
_QUANT_BYTES = {
    "fp8": 1.0, "w8a8_fp8": 1.0, "w8a8_int8": 1.0, "fbgemm_fp8": 1.0, "modelopt_fp8": 1.0,
    "awq": 0.5, "awq_marlin": 0.5, "gptq": 0.5, "gptq_marlin": 0.5, "modelopt_fp4": 0.5, "mxfp4": 0.5,
}
# fp8 block-wise scales: one float32 per 128x128 block (DeepSeek-V3 weight_block_size [128, 128]);
# int4 group scales: one fp16 per 128 weights.
_SCALE_BYTES = {1.0: 4 / (128 * 128), 0.5: 2 / 128}


class BudgetLine(Record):
    name: str
    bytes: int
    assumption: str
    detail: str = ""

    @property
    def gib(self) -> float:
        return self.bytes / GIB


class MemoryBudget(Record):
    """One GPU's memory, line by line. Bytes are per GPU (after tp sharding)."""

    gpu: str
    gpu_memory: BudgetLine  # what the GPU table says
    usable: BudgetLine  # free before weights load ("pre")
    mem_fraction_static: float
    mem_fraction_origin: str
    tp_size: int
    dtype: str
    # What the target's weights are stored in: the model dtype, or a quantization's linear layers
    # with the embeddings, head and norms in the model dtype (DeepSeek-V3: fp8 and bfloat16).
    weights_dtype: str
    kv_dtype: str
    target_weights: BudgetLine
    draft_weights: BudgetLine
    static_budget: BudgetLine  # usable * mem_fraction_static
    kv_pool: BudgetLine  # static_budget - weights (may be negative: does not fit)
    kv_bytes_per_token_target: int
    kv_bytes_per_token_draft: int
    kv_pool_tokens: int
    kv_pool_bytes_per_token: int  # the pool's cell: target + draft layers (before 0.5.14 but DFLASH, the target's)
    context_len: int
    max_running_requests: int
    tokens_needed: int  # what the requested context and concurrency need
    tree: BudgetLine  # speculative tensors at the largest graph batch, from headroom
    tree_per_request: int
    graph_bs: tuple[int, ...]
    graphs: BudgetLine  # CUDA graph pools and their fixed buffers
    activations: BudgetLine
    # Before 0.5.14: the EAGLE/STANDALONE draft's weights and KV pool, loaded after the target sized its pool.
    draft_outside_static: BudgetLine
    headroom: BudgetLine  # usable * (1 - mem_fraction_static)
    spare: BudgetLine  # headroom - tree - graphs - activations - draft outside the static budget

    @property
    def weights_fit(self) -> bool:
        return self.kv_pool.bytes > 0

    @property
    def runtime_fits(self) -> bool:
        return self.spare.bytes >= 0

    @property
    def fits(self) -> bool:
        return self.weights_fit and self.runtime_fits

    @property
    def kv_short(self) -> bool:
        return self.kv_pool_tokens < self.tokens_needed

    def lines(self) -> tuple[BudgetLine, ...]:
        return (
            self.gpu_memory, self.usable, self.target_weights, self.draft_weights, self.static_budget, self.kv_pool,
            self.headroom, self.tree, self.graphs, self.activations, self.draft_outside_static, self.spare,
        )

    def as_json(self) -> dict:
        return {
            "gpu": self.gpu,
            "tp_size": self.tp_size,
            "mem_fraction_static": self.mem_fraction_static,
            "mem_fraction_origin": self.mem_fraction_origin,
            "dtype": self.dtype,
            "weights_dtype": self.weights_dtype,
            "kv_dtype": self.kv_dtype,
            "lines": {
                line.name: {"bytes": line.bytes, "gib": round(line.gib, 3), "detail": line.detail, "assumption": line.assumption}
                for line in self.lines()
            },
            "kv_bytes_per_token": {"target": self.kv_bytes_per_token_target, "draft": self.kv_bytes_per_token_draft},
            "kv_pool_tokens": self.kv_pool_tokens,
            "context_len": self.context_len,
            "max_running_requests": self.max_running_requests,
            "tokens_needed": self.tokens_needed,
            "tree_bytes_per_request": self.tree_per_request,
            "cuda_graph_bs": list(self.graph_bs),
            "fits": self.fits,
            "weights_fit": self.weights_fit,
            "runtime_fits": self.runtime_fits,
            "kv_short": self.kv_short,
        }


# --------------------------------------------------------------------------------------------
# The dtypes the memory is counted in


def model_dtype(spec: LaunchSpec, target: ModelFacts) -> str:
    given = spec.get("dtype")
    if given not in (None, "auto"):
        return {"bf16": "bfloat16", "fp16": "float16", "half": "float16", "float": "float32"}.get(given, given)
    dtype = target.dtype or "bfloat16"
    # SGLang (model_config._get_and_verify_dtype) serves float32 checkpoints in bfloat16.
    return "bfloat16" if dtype == "float32" else dtype


def kv_dtype(spec: LaunchSpec, dtype: str) -> str:
    given = spec.get("kv_cache_dtype")
    return dtype if given in (None, "auto") else given



# --------------------------------------------------------------------------------------------
# Bytes


def weight_bytes(count: ParamCount, dtype_bytes: float, quant: str | None, tp: int) -> tuple[int, str]:
    """Bytes per GPU: quantized linear weights at their width plus scales, everything else in
    the model dtype; everything split over tp except MLA's replicated down-projections."""
    linear_bytes = dtype_bytes
    note = f"{dtype_bytes:g} B/param"
    if quant:
        width = _QUANT_BYTES.get(quant)
        if width is None:
            note += f"; quantization {quant!r} not modeled, counted at the model dtype"
        else:
            linear_bytes = width + _SCALE_BYTES.get(width, 0)
            note = f"linear {width:g} B/param + scales ({quant}), embed/head/norms {dtype_bytes:g} B"
    sharded_linear = count.linear - count.replicated
    per_gpu = (
        sharded_linear * linear_bytes / tp
        + count.replicated * linear_bytes
        + (count.embed + count.lm_head) * dtype_bytes / tp
        + count.other * dtype_bytes
    )
    return int(per_gpu), note


def weights_dtype(quant: str | None, dtype: str) -> str:
    """The weights' storage as ``weight_bytes`` counts it: a modeled quantization's linear layers,
    the rest in the model dtype; an unmodeled one is counted (and named) at the model dtype."""
    if quant and quant in _QUANT_BYTES:
        return f"{quant} (embed/head/norms {dtype})"
    return dtype


def _quant(spec: LaunchSpec, facts: ModelFacts | None) -> str | None:
    given = spec.get("quantization")
    if given:
        return given
    return facts.quantization if facts else None


def served_context(spec: LaunchSpec, target: ModelFacts) -> int | None:
    return spec.get("context_length") or target.max_position_embeddings


def draft_layers_for_kv(kind: str | None, draft: ModelFacts | None, target: ModelFacts) -> int:
    if kind in (None, "dflash"):
        return 0
    if kind == "mtp":
        return target.num_nextn_predict_layers or (draft.num_nextn_predict_layers if draft else 0) or 0
    return (draft.num_hidden_layers or 0) if draft else 0


class _Weights(NamedTuple):
    draft_kind: str | None
    target: BudgetLine
    draft: BudgetLine


# Drafts loaded from their own checkpoint, whose config.json describes their own layers (an MTP draft's
# describes the target's).
_OWN_POOL_KINDS = frozenset({"eagle", "eagle3", "standalone"})


class _KvCell(NamedTuple):
    target: int
    draft: int  # the draft's layers sized like the target's, as the shared pool's cell holds them from 0.5.14
    # The draft's own pool's cell (its config's layers, KV heads and head size), as its own ModelRunner sized
    # it before 0.5.14 (0.5.13 model_runner_kv_cache_mixin.py:292, :464 self.model_config); ``draft`` when unknown.
    draft_own: int

    @property
    def total(self) -> int:
        return self.target + self.draft


class _Tree(NamedTuple):
    line: BudgetLine
    per_request: int  # the tensors' bytes per request
    draft_slots: int  # the draft tokens' KV bytes per request, taken from the pool


def _weight_lines(
    spec: LaunchSpec, target: ModelFacts, draft: ModelFacts | None, algorithm: str | None, target_count: ParamCount, dtype_bytes: int, tp: int,
    *, assumed: bool = False,
) -> _Weights:
    t_bytes, t_note = weight_bytes(target_count, dtype_bytes, _quant(spec, target), tp)
    kind = draft_kind(algorithm, draft, target)
    draft_count = count_draft(kind, draft, target)
    if draft_count is not None:
        d_quant = _quant(spec, target) if kind == "mtp" else (draft.quantization if draft else None)
        d_bytes, d_note = weight_bytes(draft_count, dtype_bytes, d_quant, tp)
        d_note = f"{kind} draft, {draft_count.total + draft_count.mtp - draft_count.embed:,} params resident; {d_note}"
        if assumed:
            d_note += "; its shape is not stated: sized as one decoder layer of the target's shape"
    else:
        d_bytes, d_note = 0, "no draft weights (no draft model, NGRAM, or unknown draft shape)"
    return _Weights(
        draft_kind=kind,
        target=BudgetLine(
            name="target weights", bytes=t_bytes, detail=f"{target.architecture or 'target'}, {target_count.total:,} params / tp {tp}; {t_note}",
            assumption="parameters counted from config.json (attention, MLP or experts, MLA, embeddings, head)",
        ),
        draft=BudgetLine(
            name="draft weights", bytes=d_bytes, detail=d_note,
            assumption="EAGLE heads share the target's embeddings (and EAGLE-1 its head); MTP layers share both",
        ),
    )


def _kv_cell(kind: str | None, target: ModelFacts, draft: ModelFacts | None, kv_size: float, tp: int) -> _KvCell:
    """SGLang sizes the draft's layers like the target's (pool_configurator.py); a DFLASH draft has its own."""
    t_cell = kv_bytes_per_token(target, kv_size, tp) or 0
    draft_layers = draft_layers_for_kv(kind, draft, target)
    d_cell = int(t_cell * draft_layers / target.num_hidden_layers) if draft_layers and target.num_hidden_layers else 0
    if kind == "dflash" and draft is not None:
        d_cell = kv_bytes_per_token(draft, kv_size, tp) or 0
    own = kv_bytes_per_token(draft, kv_size, tp) if kind in _OWN_POOL_KINDS and draft is not None else None
    return _KvCell(t_cell, d_cell, own or d_cell)


def _tree(resolution: Resolution, target: ModelFacts, draft: ModelFacts | None, dtype_bytes: int, cell: int, max_bs: int) -> _Tree:
    """The speculative tensors at the largest batch the graphs capture."""
    algorithm = resolution.algorithm
    steps = resolution.num_steps or 0
    topk = resolution.eagle_topk or 0
    ndt = resolution.num_draft_tokens or 0
    vocab = target.vocab_size or 0
    draft_vocab = (draft.draft_vocab_size or draft.vocab_size or vocab) if draft else vocab
    h = target.hidden_size or 0
    if algorithm is not None and ndt:
        logits = ndt * vocab * 4 + topk * draft_vocab * 4  # float32 verify logits + draft top-k logits
        hidden = (ndt + steps * topk) * h * dtype_bytes * 3  # hidden states the draft reads (3 layers for EAGLE3)
        per_request = logits + hidden
        draft_slots = steps * topk * cell  # draft tokens' KV slots, taken from the pool
    else:
        per_request, draft_slots = 0, 0
    batch = max(max_bs, 1) if algorithm is not None else 0
    line = BudgetLine(
        name="tree",
        bytes=per_request * batch,
        detail=(
            f"{per_request / MIB:.1f} MiB/request x {batch} (steps {steps}, topk {topk}, draft tokens {ndt}); "
            f"plus {steps * topk} draft KV slots/request from the pool"
            if algorithm is not None
            else "no speculative decoding"
        ),
        assumption="verify logits ndt x vocab and draft logits topk x draft vocab in float32, plus the hidden "
        "states the draft reads, at the largest captured batch; the logits are transient but peak during verify",
    )
    return _Tree(line, per_request, draft_slots)


def _graphs_line(resolution: Resolution, graph_bs: list[int], context: int) -> BudgetLine:
    """The CUDA graph pools and the kv_indices buffers they keep, at the largest captured batch."""
    if graph_bs:
        max_bs = max(graph_bs)
        steps, topk = resolution.num_steps or 0, resolution.eagle_topk or 0
        speculative = resolution.algorithm is not None
        verify_tokens = max_bs * max(resolution.num_draft_tokens or 0, 1)
        idx = verify_tokens * context * 4  # target kv_indices (int32), flashinfer_backend.py:1106-1111
        if speculative and steps and topk:
            idx += steps * max_bs * topk * context * 4  # draft kv_indices, flashinfer_backend.py:2630-2641
        runners = 2 if speculative else 1
        pools = max_bs * GRAPH_MIB_PER_BS * MIB * runners
        graph_bytes = idx + pools
        graph_detail = (
            f"{len(graph_bs)} batch sizes up to {max_bs}; kv_indices buffers {idx / GIB:.2f} GiB "
            f"(context {context}), graph pools {pools / GIB:.2f} GiB"
        )
    else:
        graph_bytes, graph_detail = 0, "CUDA graphs disabled"
    return BudgetLine(
        name="cuda graphs",
        bytes=graph_bytes,
        detail=graph_detail,
        assumption="FlashInfer-style int32 kv_indices: target verify max_bs x draft tokens x context, draft "
        "decode steps x max_bs x topk x context (Triton uses int64, fa3 a smaller page table; in 0.5.16 alone fa3/fa4 "
        "and flashmla add a bool tree mask of max_bs x draft tokens x (context + draft tokens), which that int32 "
        "bound covers: flashattention_backend.py:2188-2198, flashmla_backend.py:288-295); graph pools "
        f"{GRAPH_MIB_PER_BS} MiB per batch size for the target and again for the draft (SGLang's own reserve)",
    )


def _activations_line(gpu_mib: float, target: ModelFacts, dtype_bytes: int, tp: int) -> BudgetLine:
    chunk = default_chunked_prefill(gpu_mib)
    h = target.hidden_size or 0
    inter = target.intermediate_size or 4 * h
    return BudgetLine(
        name="activations",
        bytes=int(chunk * (4 * h + 2 * inter) * dtype_bytes / tp) + 512 * MIB,
        detail=f"chunked prefill {chunk} tokens",
        assumption="one prefill chunk's hidden, attention and gated-MLP intermediates plus 512 MiB of backend "
        "metadata (SGLang's constant); a lower bound, SGLang's own default reserves 1.5 MiB per chunk token",
    )


def _gpu_lines(gpu: GpuSpec, gpu_mib: float, tp: int) -> tuple[BudgetLine, BudgetLine]:
    """The GPU's memory as torch sees it, and what is free before the weights load."""
    total = int(gpu_mib * MIB)
    usable = int(total - (CUDA_CONTEXT_GIB + (NCCL_GIB_PER_TP if tp > 1 else 0)) * GIB)
    return (
        BudgetLine(
            name="gpu memory", bytes=total, detail=f"{gpu.name} {gpu.memory_gib:g} GiB x {VISIBLE_FRACTION}",
            assumption=f"the GPU table's size x {VISIBLE_FRACTION}, what torch sees (H100: 79.19 of 80)",
        ),
        BudgetLine(
            name="free before load", bytes=usable,
            detail=f"minus {CUDA_CONTEXT_GIB} GiB CUDA context" + (f" and {NCCL_GIB_PER_TP} GiB NCCL (tp {tp})" if tp > 1 else ""),
            assumption="SGLang's pre-load free memory, on which mem_fraction_static is applied",
        ),
    )


class _DraftPlacement(NamedTuple):
    """Whether the static budget holds the draft's weights, and its KV layers (in the pool's cell)."""

    weights: bool
    kv: bool


def draft_placement(kind: str | None, version: Version) -> _DraftPlacement:
    """From 0.5.14 (``DRAFT_IN_STATIC_BUDGET``) the draft loads before the pool is sized and its layers are in the
    cell; before, every draft loaded after the target's pool, and only DFLASH's cell counted its draft layers."""
    if kind is None or DRAFT_IN_STATIC_BUDGET.present_in(version):
        return _DraftPlacement(weights=True, kv=True)
    return _DraftPlacement(weights=False, kv=kind == "dflash")


def spec_reserve_mib(algorithm: str | None, version: Version) -> int:
    """The draft reserve the default --mem-fraction-static set aside in this release (``SPEC_MEM_RESERVE_MIB``)."""
    if algorithm is None or algorithm == "NGRAM":
        return 0
    standalone, other = as_of(SPEC_MEM_RESERVE_MIB, version, before=SPEC_MEM_RESERVE_MIB_BEFORE)
    return standalone if algorithm == "STANDALONE" else other


def _default_fraction(spec: LaunchSpec, env: Environment, configured: list[int], algorithm: str | None, gpu_mib: float) -> tuple[float, str]:
    """SGLang's default --mem-fraction-static: the 0.5.23 formula, less the draft reserve of releases before 0.5.14
    (taken off the rounded fraction: within 0.001 of SGLang's own rounding)."""
    fraction = default_mem_fraction(spec, env, max(configured) if configured else 0)
    reserve = spec_reserve_mib(algorithm, env.version)
    if not reserve:
        return fraction, "SGLang's default"
    return round(fraction - reserve / gpu_mib, 3), f"SGLang's default, less its {reserve / 1024:g} GiB draft reserve"


def _static_lines(
    usable: BudgetLine, mfs: float, origin: str, weights: _Weights, cell: _KvCell, kvd: str, placed: _DraftPlacement,
) -> tuple[BudgetLine, BudgetLine, int, int]:
    """What mem_fraction_static holds (weights + KV), the KV pool left of it, its tokens and its bytes per token."""
    static = int(usable.bytes * mfs)
    pool = static - weights.target.bytes - (weights.draft.bytes if placed.weights else 0)
    per_token = cell.total if placed.kv else cell.target
    tokens = max(pool, 0) // per_token if per_token else 0
    static_line = BudgetLine(
        name="static (weights + KV)", bytes=static, detail=f"mem_fraction_static {mfs} ({origin})",
        assumption="pre-load free memory x mem_fraction_static",
    )
    pool_line = BudgetLine(
        name="KV pool", bytes=pool,
        detail=f"{tokens:,} tokens at {per_token:,} B/token (target {cell.target:,}"
        + (f" + draft {cell.draft:,}, {kvd})" if placed.kv else f", {kvd}; the draft's {cell.draft:,} B/token outside)"),
        assumption="static budget minus weights; from 0.5.14 the cell holds the draft layers, sized like the target's; "
        "before, the target's alone",
    )
    return static_line, pool_line, tokens, per_token


def _draft_outside_line(weights: _Weights, cell: _KvCell, tokens: int, placed: _DraftPlacement) -> BudgetLine:
    """Before 0.5.14 the draft's weights, and but for DFLASH its KV pool (the target's token count), take memory
    outside the static budget."""
    weights_out = 0 if placed.weights else weights.draft.bytes
    kv_out = 0 if placed.kv else tokens * cell.draft_own
    return BudgetLine(
        name="draft outside static", bytes=weights_out + kv_out,
        detail="none: the static budget holds the draft" if placed.weights and placed.kv
        else f"draft weights {weights_out / GIB:.2f} GiB" + ("" if placed.kv else f" + KV {tokens:,} tokens x {cell.draft_own:,} B"),
        assumption="before 0.5.14 the target sized its pool before the draft loaded (0.5.13 model_runner.py:784); "
        "the draft's pool has the target's token count, each token at the draft's own layers, KV heads and head size",
    )


def _tokens_needed(spec: LaunchSpec, context: int, mrr: int) -> int:
    """The requested context for every running request when the user sized either; else one request."""
    explicit = spec.get("max_running_requests") is not None or spec.get("context_length") is not None
    return context * (mrr or 1) if explicit else context


def estimate(
    spec: LaunchSpec,
    target: ModelFacts | None,
    draft: ModelFacts | None,
    env: Environment,
    resolution: Resolution,
) -> MemoryBudget | None:
    """The budget, or None when the GPU's memory or the target's shape is unknown."""
    gpu_mib = gpu_visible_mib(env)
    if gpu_mib is None or target is None or env.gpu is None:
        return None
    target_count = count_target(target)
    context = served_context(spec, target)
    if target_count is None or context is None:
        return None
    tp = spec.get("tp_size") or 1
    dtype = model_dtype(spec, target)
    dtype_bytes = _DTYPE_BYTES.get(dtype, 2)
    kvd = kv_dtype(spec, dtype)
    shaped = draft_shaped_like_target(draft_kind(resolution.algorithm, draft, target), draft, target)
    weights = _weight_lines(spec, target, shaped or draft, resolution.algorithm, target_count, dtype_bytes, tp, assumed=shaped is not None)
    draft = shaped or draft
    cell = _kv_cell(weights.draft_kind, target, draft, _KV_DTYPE_BYTES.get(kvd, dtype_bytes), tp)
    gpu_memory, usable = _gpu_lines(env.gpu, gpu_mib, tp)

    mrr = resolution.max_running_requests or spec.get("max_running_requests") or 0
    configured = configured_graph_bs(spec, env)
    mfs = spec.get("mem_fraction_static")
    origin = "given"
    if mfs is None:
        mfs, origin = _default_fraction(spec, env, configured, resolution.algorithm, gpu_mib)
    placed = draft_placement(weights.draft_kind, env.version)
    static, pool, tokens, per_token = _static_lines(usable, mfs, origin, weights, cell, kvd, placed)
    draft_outside = _draft_outside_line(weights, cell, tokens, placed)

    graph_bs = captured_graph_bs(configured, mrr) if mrr else configured
    tree = _tree(resolution, target, draft, dtype_bytes, cell.total, max(graph_bs) if graph_bs else 0)
    graphs = _graphs_line(resolution, graph_bs, context)
    activations = _activations_line(gpu_mib, target, dtype_bytes, tp)
    headroom = usable.bytes - static.bytes
    return MemoryBudget(
        gpu=env.gpu.name, gpu_memory=gpu_memory, usable=usable,
        mem_fraction_static=mfs, mem_fraction_origin=origin, tp_size=tp, dtype=dtype, weights_dtype=weights_dtype(_quant(spec, target), dtype), kv_dtype=kvd,
        target_weights=weights.target, draft_weights=weights.draft,
        static_budget=static, kv_pool=pool,
        kv_bytes_per_token_target=cell.target, kv_bytes_per_token_draft=cell.draft, kv_pool_tokens=tokens,
        kv_pool_bytes_per_token=per_token,
        context_len=context, max_running_requests=mrr, tokens_needed=_tokens_needed(spec, context, mrr),
        tree=tree.line, tree_per_request=tree.per_request + tree.draft_slots,
        graph_bs=tuple(graph_bs), graphs=graphs, activations=activations, draft_outside_static=draft_outside,
        headroom=BudgetLine(
            name="headroom", bytes=headroom, detail=f"(1 - {mfs}) of the free memory",
            assumption="what mem_fraction_static leaves for graphs, tree tensors and activations",
        ),
        spare=BudgetLine(
            name="spare", bytes=headroom - tree.line.bytes - graphs.bytes - activations.bytes - draft_outside.bytes,
            detail="headroom - tree - cuda graphs - activations - draft outside static",
            assumption="negative: expect an out-of-memory during CUDA graph capture or the first large batch",
        ),
    )


def estimate_for(ctx) -> MemoryBudget | None:  # ctx: specguard.rules.base.CheckContext
    return estimate(ctx.spec, ctx.target, ctx.draft, ctx.env, ctx.resolution)
