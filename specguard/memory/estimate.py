"""The GPU memory budget of one launch, per GPU, before it runs: pure Python over frozen data.

How SGLang 0.5.23 spends a GPU (``mem_cache/kv_cache_configurator.py``
``_profile_available_bytes``): it measures the free memory before loading (``pre``), loads the
target and draft weights, then gives the KV pool ``free_after_load - pre * (1 - mem_fraction_static)``.
So ``pre * mem_fraction_static`` holds weights + KV pool, and ``pre * (1 - mem_fraction_static)``
is left for CUDA graphs, their buffers, the draft tree's tensors and activations. Under
speculative decoding the KV cell includes the draft's layers (``pool_configurator.py``
``DefaultPoolConfigurator``), so target and draft share one token count.

Each line of ``MemoryBudget`` carries the assumption it rests on; the MM rules quote them.
"""

from __future__ import annotations

from packaging.version import Version

from specguard.memory.params import (
    ParamCount,
    count_draft,
    count_target,
    draft_kind,
    kv_bytes_per_token,
)
from specguard.models import Environment, Frozen, ModelFacts
from specguard.resolution import Resolution
from specguard.spec import LaunchSpec

GIB = 1 << 30
MIB = 1 << 20

# Assumptions, stated once and quoted by the budget lines and the rule docs.
VISIBLE_FRACTION = 0.99  # H100 "80 GB": torch sees 79.19 GiB (81559 MiB)
CUDA_CONTEXT_GIB = 0.6  # H100 logs: 79.19 GiB visible, "Load weight begin. avail mem=78.58 GB"
NCCL_GIB_PER_TP = 0.5  # extra per process when tp > 1 (NCCL/custom all-reduce buffers), rough
GRAPH_MIB_PER_BS = 2  # SGLang's own reserve: decode max_bs * 2 MiB (memory_hook.reserve_for_graph_mb)

_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4, "fp8": 1}
_KV_DTYPE_BYTES = {
    "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8": 1, "fp8_e4m3fn": 1, "mxfp8": 1,
    "fp4_e2m1": 0.5, "nvfp4": 0.5, "bfloat16": 2, "bf16": 2, "float16": 2, "fp16": 2, "float32": 4,
}
# Bytes per quantized linear parameter (weights only; per-block/group scales added below).
_QUANT_BYTES = {
    "fp8": 1.0, "w8a8_fp8": 1.0, "w8a8_int8": 1.0, "fbgemm_fp8": 1.0, "modelopt_fp8": 1.0,
    "awq": 0.5, "awq_marlin": 0.5, "gptq": 0.5, "gptq_marlin": 0.5, "modelopt_fp4": 0.5, "mxfp4": 0.5,
}
# fp8 block-wise scales: one float32 per 128x128 block (DeepSeek-V3 weight_block_size [128, 128]);
# int4 group scales: one fp16 per 128 weights.
_SCALE_BYTES = {1.0: 4 / (128 * 128), 0.5: 2 / 128}

# Decode CUDA-graph max_bs defaults by GPU memory (SGLang 0.5.23 memory_hook.py:88-180).
DECODE_GRAPH_FLAG_SINCE = Version("0.5.14")  # --cuda-graph-max-bs-decode / --cuda-graph-bs-decode


class BudgetLine(Frozen):
    name: str
    bytes: int
    assumption: str
    detail: str = ""

    @property
    def gib(self) -> float:
        return self.bytes / GIB


class MemoryBudget(Frozen):
    """One GPU's memory, line by line. Bytes are per GPU (after tp sharding)."""

    gpu: str
    gpu_memory: BudgetLine  # what the GPU table says
    usable: BudgetLine  # free before weights load ("pre")
    mem_fraction_static: float
    mem_fraction_origin: str
    tp_size: int
    dtype: str
    kv_dtype: str
    target_weights: BudgetLine
    draft_weights: BudgetLine
    static_budget: BudgetLine  # usable * mem_fraction_static
    kv_pool: BudgetLine  # static_budget - weights (may be negative: does not fit)
    kv_bytes_per_token_target: int
    kv_bytes_per_token_draft: int
    kv_pool_tokens: int
    context_len: int
    max_running_requests: int
    tokens_needed: int  # what the requested context and concurrency need
    tree: BudgetLine  # speculative tensors at the largest graph batch, from headroom
    tree_per_request: int
    graph_bs: tuple[int, ...]
    graphs: BudgetLine  # CUDA graph pools and their fixed buffers
    activations: BudgetLine
    headroom: BudgetLine  # usable * (1 - mem_fraction_static)
    spare: BudgetLine  # headroom - tree - graphs - activations

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
            self.headroom, self.tree, self.graphs, self.activations, self.spare,
        )

    def as_json(self) -> dict:
        return {
            "gpu": self.gpu,
            "tp_size": self.tp_size,
            "mem_fraction_static": self.mem_fraction_static,
            "mem_fraction_origin": self.mem_fraction_origin,
            "dtype": self.dtype,
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
# Flags, the way SGLang resolves them


def graph_max_flag(version: Version) -> str:
    return "--cuda-graph-max-bs-decode" if version >= DECODE_GRAPH_FLAG_SINCE else "--cuda-graph-max-bs"


def graph_bs_flag(version: Version) -> str:
    return "--cuda-graph-bs-decode" if version >= DECODE_GRAPH_FLAG_SINCE else "--cuda-graph-bs"


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


def gpu_visible_mib(env: Environment) -> float | None:
    if env.gpu is None or env.gpu.memory_gib is None:
        return None
    return env.gpu.memory_gib * 1024 * VISIBLE_FRACTION


def default_graph_max_bs(gpu_mib: float | None, tp: int) -> int:
    """SGLang 0.5.23 ``_handle_gpu_memory_settings``: the decode graph max_bs by GPU memory."""
    if gpu_mib is None:
        return 160
    if gpu_mib < 20 * 1024:
        return 8
    if gpu_mib < 35 * 1024:
        return 48 if tp < 4 else 160
    if gpu_mib < 60 * 1024:
        return 32 if tp < 4 else 160
    if gpu_mib < 160 * 1024:
        return 256 if tp < 4 else 512
    return 512


def default_chunked_prefill(gpu_mib: float | None) -> int:
    if gpu_mib is None or gpu_mib < 20 * 1024:
        return 2048 if gpu_mib is not None else 4096
    if gpu_mib < 60 * 1024:
        return 4096
    if gpu_mib < 160 * 1024:
        return 8192
    return 16384


def spec_graph_schedule(max_bs: int, disable_padding: bool = False) -> list[int]:
    """SGLang 0.5.23 ``generate_decode_cuda_graph_batch_sizes`` for speculative decoding (P29/P30)."""
    if disable_padding:
        sizes = list(range(1, max_bs + 1))
    else:
        sizes = [*range(1, 9), *range(10, 33, 2), *range(40, 65, 4), *range(72, 257, 8), *range(272, max_bs + 1, 16)]
    sizes = [s for s in sizes if s <= max_bs]
    if max_bs not in sizes:
        sizes.append(max_bs)
    return sizes


def explicit_graph_bs(spec: LaunchSpec) -> list[int] | None:
    for dest in ("cuda_graph_bs_decode", "cuda_graph_bs"):
        value = spec.get(dest)
        if value:
            return sorted(set(value))
    return None


def explicit_graph_max_bs(spec: LaunchSpec) -> int | None:
    for dest in ("cuda_graph_max_bs_decode", "cuda_graph_max_bs"):
        value = spec.get(dest)
        if value is not None:
            return value
    return None


def configured_graph_bs(spec: LaunchSpec, env: Environment) -> list[int]:
    """The decode capture list SGLang resolves at argument time (before the runtime clamp)."""
    if spec.get("disable_cuda_graph"):
        return []
    given = explicit_graph_bs(spec)
    if given:
        return given
    tp = spec.get("tp_size") or 1
    max_bs = explicit_graph_max_bs(spec)
    if max_bs is None:
        max_bs = default_graph_max_bs(gpu_visible_mib(env), tp)
        user_mrr = spec.get("max_running_requests")
        if user_mrr is not None and max_bs > user_mrr:  # P28: only a user-set mrr lowers it
            max_bs = user_mrr
    return spec_graph_schedule(max_bs, bool(spec.get("disable_cuda_graph_padding")))


def captured_graph_bs(configured: list[int], max_running_requests: int) -> list[int]:
    """The runtime clamp (``get_batch_sizes_to_capture``): sizes above the request slots are
    dropped and the slot count itself is captured instead."""
    if not configured:
        return []
    sizes = [s for s in configured if s <= max_running_requests]
    if max(configured) > max_running_requests:
        sizes.append(max_running_requests)
    return sorted(set(sizes))


def default_mem_fraction(spec: LaunchSpec, env: Environment, configured_max_bs: int) -> float:
    """SGLang 0.5.23 ``_handle_gpu_memory_settings`` when --mem-fraction-static is unset:
    ``(gpu_mem - reserved) / gpu_mem`` with reserved = 512 MiB + 1.5 MiB x max(chunked prefill,
    2048) + tp/8 GiB + 2 MiB x decode max_bs, at least 10 GiB on GPUs above 60 GiB."""
    gpu_mib = gpu_visible_mib(env)
    if gpu_mib is None:
        return 0.95
    tp = spec.get("tp_size") or 1
    chunk = spec.get("chunked_prefill_size") if _modeled("chunked_prefill_size") else None
    chunk = chunk or default_chunked_prefill(gpu_mib)
    reserved = 512 + max(chunk, 2048) * 1.5 + tp / 8 * 1024
    if not spec.get("disable_cuda_graph"):
        reserved += configured_max_bs * GRAPH_MIB_PER_BS
    if gpu_mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    return round((gpu_mib - reserved) / gpu_mib, 3)


def _modeled(dest: str) -> bool:
    from specguard.flags import FLAGS_BY_DEST

    return dest in FLAGS_BY_DEST


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
    kv_size = _KV_DTYPE_BYTES.get(kvd, dtype_bytes)
    algorithm = resolution.algorithm

    # Weights.
    t_bytes, t_note = weight_bytes(target_count, dtype_bytes, _quant(spec, target), tp)
    kind = draft_kind(algorithm, draft, target)
    draft_count = count_draft(kind, draft, target)
    if draft_count is not None:
        d_quant = _quant(spec, target) if kind == "mtp" else (draft.quantization if draft else None)
        d_bytes, d_note = weight_bytes(draft_count, dtype_bytes, d_quant, tp)
        d_note = f"{kind} draft, {draft_count.total + draft_count.mtp - draft_count.embed:,} params resident; {d_note}"
    else:
        d_bytes, d_note = 0, "no draft weights (no draft model, NGRAM, or unknown draft shape)"

    # KV cell: SGLang sizes the draft's layers like the target's (pool_configurator.py).
    t_cell = kv_bytes_per_token(target, kv_size, tp) or 0
    draft_layers = draft_layers_for_kv(kind, draft, target)
    d_cell = int(t_cell * draft_layers / target.num_hidden_layers) if draft_layers and target.num_hidden_layers else 0
    if kind == "dflash" and draft is not None:
        d_cell = kv_bytes_per_token(draft, kv_size, tp) or 0
    cell = t_cell + d_cell

    # Memory and the static fraction.
    total = int(gpu_mib * MIB)
    usable = int(total - (CUDA_CONTEXT_GIB + (NCCL_GIB_PER_TP if tp > 1 else 0)) * GIB)
    mrr = resolution.max_running_requests or spec.get("max_running_requests") or 0
    configured = configured_graph_bs(spec, env)
    mfs = spec.get("mem_fraction_static")
    origin = "given"
    if mfs is None:
        mfs = default_mem_fraction(spec, env, max(configured) if configured else 0)
        origin = "SGLang 0.5.23 default"
    static = int(usable * mfs)
    pool = static - t_bytes - d_bytes
    tokens = max(pool, 0) // cell if cell else 0
    concurrency = mrr or 1
    explicit_mrr = spec.get("max_running_requests") is not None
    needed = context * concurrency if (explicit_mrr or spec.get("context_length") is not None) else context

    # Speculative tensors and CUDA graphs, at the largest batch the graphs capture.
    graph_bs = captured_graph_bs(configured, mrr) if mrr else configured
    max_bs = max(graph_bs) if graph_bs else 0
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
    tree_bytes = per_request * batch
    tree_line = BudgetLine(
        name="tree",
        bytes=tree_bytes,
        detail=(
            f"{per_request / MIB:.1f} MiB/request x {batch} (steps {steps}, topk {topk}, draft tokens {ndt}); "
            f"plus {steps * topk} draft KV slots/request from the pool"
            if algorithm is not None
            else "no speculative decoding"
        ),
        assumption="verify logits ndt x vocab and draft logits topk x draft vocab in float32, plus the hidden "
        "states the draft reads, at the largest captured batch; the logits are transient but peak during verify",
    )

    if graph_bs:
        verify_tokens = max_bs * max(ndt, 1)
        idx = verify_tokens * context * 4  # target kv_indices (int32), flashinfer_backend.py:1106-1111
        if algorithm is not None and steps and topk:
            idx += steps * max_bs * topk * context * 4  # draft kv_indices, flashinfer_backend.py:2630-2641
        runners = 2 if algorithm is not None else 1
        pools = max_bs * GRAPH_MIB_PER_BS * MIB * runners
        graph_bytes = idx + pools
        graph_detail = (
            f"{len(graph_bs)} batch sizes up to {max_bs}; kv_indices buffers {idx / GIB:.2f} GiB "
            f"(context {context}), graph pools {pools / GIB:.2f} GiB"
        )
    else:
        graph_bytes, graph_detail = 0, "CUDA graphs disabled"
    graphs_line = BudgetLine(
        name="cuda graphs",
        bytes=graph_bytes,
        detail=graph_detail,
        assumption="FlashInfer-style int32 kv_indices: target verify max_bs x draft tokens x context, draft "
        "decode steps x max_bs x topk x context (Triton uses int64, fa3 a smaller page table); graph pools "
        f"{GRAPH_MIB_PER_BS} MiB per batch size for the target and again for the draft (SGLang's own reserve)",
    )
    chunk = default_chunked_prefill(gpu_mib)
    inter = target.intermediate_size or 4 * h
    act = int(chunk * (4 * h + 2 * inter) * dtype_bytes / tp) + 512 * MIB
    act_line = BudgetLine(
        name="activations",
        bytes=act,
        detail=f"chunked prefill {chunk} tokens",
        assumption="one prefill chunk's hidden, attention and gated-MLP intermediates plus 512 MiB of backend "
        "metadata (SGLang's constant); a lower bound, SGLang's own default reserves 1.5 MiB per chunk token",
    )
    headroom = usable - static
    spare = headroom - tree_bytes - graph_bytes - act

    return MemoryBudget(
        gpu=env.gpu.name,
        gpu_memory=BudgetLine(
            name="gpu memory", bytes=total, detail=f"{env.gpu.name} {env.gpu.memory_gib:g} GiB x {VISIBLE_FRACTION}",
            assumption=f"the GPU table's size x {VISIBLE_FRACTION}, what torch sees (H100: 79.19 of 80)",
        ),
        usable=BudgetLine(
            name="free before load", bytes=usable,
            detail=f"minus {CUDA_CONTEXT_GIB} GiB CUDA context" + (f" and {NCCL_GIB_PER_TP} GiB NCCL (tp {tp})" if tp > 1 else ""),
            assumption="SGLang's pre-load free memory, on which mem_fraction_static is applied",
        ),
        mem_fraction_static=mfs,
        mem_fraction_origin=origin,
        tp_size=tp,
        dtype=dtype,
        kv_dtype=kvd,
        target_weights=BudgetLine(
            name="target weights", bytes=t_bytes, detail=f"{target.architecture or 'target'}, {target_count.total:,} params / tp {tp}; {t_note}",
            assumption="parameters counted from config.json (attention, MLP or experts, MLA, embeddings, head)",
        ),
        draft_weights=BudgetLine(
            name="draft weights", bytes=d_bytes, detail=d_note,
            assumption="EAGLE heads share the target's embeddings (and EAGLE-1 its head); MTP layers share both",
        ),
        static_budget=BudgetLine(
            name="static (weights + KV)", bytes=static, detail=f"mem_fraction_static {mfs} ({origin})",
            assumption="pre-load free memory x mem_fraction_static",
        ),
        kv_pool=BudgetLine(
            name="KV pool", bytes=pool,
            detail=f"{tokens:,} tokens at {cell:,} B/token (target {t_cell:,} + draft {d_cell:,}, {kvd})",
            assumption="static budget minus weights; SGLang 0.5.23 cell size, draft layers sized like the target's",
        ),
        kv_bytes_per_token_target=t_cell,
        kv_bytes_per_token_draft=d_cell,
        kv_pool_tokens=tokens,
        context_len=context,
        max_running_requests=mrr,
        tokens_needed=needed,
        tree=tree_line,
        tree_per_request=per_request + draft_slots,
        graph_bs=tuple(graph_bs),
        graphs=graphs_line,
        activations=act_line,
        headroom=BudgetLine(
            name="headroom", bytes=headroom, detail=f"(1 - {mfs}) of the free memory",
            assumption="what mem_fraction_static leaves for graphs, tree tensors and activations",
        ),
        spare=BudgetLine(
            name="spare", bytes=spare, detail="headroom - tree - cuda graphs - activations",
            assumption="negative: expect an out-of-memory during CUDA graph capture or the first large batch",
        ),
    )


def estimate_for(ctx) -> MemoryBudget | None:  # ctx: specguard.rules.base.CheckContext
    return estimate(ctx.spec, ctx.target, ctx.draft, ctx.env, ctx.resolution)
