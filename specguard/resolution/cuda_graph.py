"""The decode CUDA-graph batch sizes and the GPU-memory settings SGLang resolves at argument time
(sglang 0.5.23 ``arg_groups/memory_hook.py`` ``_handle_gpu_memory_settings``: the graph max bs,
the chunked-prefill size and --mem-fraction-static are decided together, from the GPU's memory).
The defaults themselves are tables in ``sglang_facts.defaults``; memory reads the results."""

from __future__ import annotations

from packaging.version import Version

from specguard.flags import FLAGS_BY_DEST
from specguard.models import Dialect, Environment
from specguard.sglang_facts.changes import CUDA_GRAPH_DECODE_FLAGS
from specguard.sglang_facts.defaults import (
    CHUNKED_PREFILL_ABOVE_TIERS,
    CHUNKED_PREFILL_TIERS,
    CHUNKED_PREFILL_UNKNOWN_GPU,
    GRAPH_MAX_BS_ABOVE_TIERS,
    GRAPH_MAX_BS_TIERS,
    GRAPH_MAX_BS_UNKNOWN_GPU,
    GRAPH_MIB_PER_BS,
    MEM_RESERVED_BASE_MIB,
    MEM_RESERVED_MIB_PER_CHUNK_TOKEN,
    MEM_RESERVED_MIN_CHUNK_TOKENS,
    MEM_RESERVED_MIN_MIB_ABOVE_60_GIB,
)
from specguard.spec import LaunchSpec

# H100 "80 GB": torch sees 79.19 GiB (81559 MiB); SGLang sizes its defaults from what torch sees.
VISIBLE_FRACTION = 0.99
# An unknown GPU's --mem-fraction-static: SGLang's value cannot be computed, so a typical one.
MEM_FRACTION_UNKNOWN_GPU = 0.95


def graph_max_flag(version: Version) -> str:
    return "--cuda-graph-max-bs-decode" if CUDA_GRAPH_DECODE_FLAGS.present_in(version) else "--cuda-graph-max-bs"


def graph_bs_flag(version: Version) -> str:
    return "--cuda-graph-bs-decode" if CUDA_GRAPH_DECODE_FLAGS.present_in(version) else "--cuda-graph-bs"


def gpu_visible_mib(env: Environment) -> float | None:
    if env.gpu is None or env.gpu.memory_gib is None:
        return None
    return env.gpu.memory_gib * 1024 * VISIBLE_FRACTION


def default_graph_max_bs(gpu_mib: float | None, tp: int) -> int:
    """SGLang's decode graph max_bs by GPU memory (``GRAPH_MAX_BS_TIERS``)."""
    if gpu_mib is None:
        return GRAPH_MAX_BS_UNKNOWN_GPU
    for below_mib, small_tp, large_tp in GRAPH_MAX_BS_TIERS:
        if gpu_mib < below_mib:
            return small_tp if tp < 4 else large_tp
    return GRAPH_MAX_BS_ABOVE_TIERS


def default_chunked_prefill(gpu_mib: float | None) -> int:
    """SGLang's chunked-prefill size by GPU memory (``CHUNKED_PREFILL_TIERS``)."""
    if gpu_mib is None:
        return CHUNKED_PREFILL_UNKNOWN_GPU
    for below_mib, chunk in CHUNKED_PREFILL_TIERS:
        if gpu_mib < below_mib:
            return chunk
    return CHUNKED_PREFILL_ABOVE_TIERS


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


def _memory_default_max_bs(spec: LaunchSpec, env: Environment) -> int:
    """The GPU-memory default, lowered to a max running requests the user set (P28: not the
    automatic 48 of speculative decoding, which is set later)."""
    max_bs = default_graph_max_bs(gpu_visible_mib(env), spec.get("tp_size") or 1)
    user_mrr = spec.get("max_running_requests")
    if user_mrr is not None and max_bs > user_mrr:
        max_bs = user_mrr
    return max_bs


def cuda_graph_max_bs(spec: LaunchSpec, env: Environment) -> int | None:
    """P28/P29: the decode CUDA-graph max batch size SGLang resolves (sglang 0.5.23
    ``arg_groups/memory_hook.py:84-215``): an explicit list's largest size, else the explicit
    max, else the GPU-memory default. Unknown GPU: None."""
    given = explicit_graph_bs(spec)
    if given:
        return max(given)
    explicit = explicit_graph_max_bs(spec)
    if explicit is not None:
        return explicit
    if env.gpu is None or spec.dialect is Dialect.SGL_JAX:
        return None
    return _memory_default_max_bs(spec, env)


def configured_graph_bs(spec: LaunchSpec, env: Environment) -> list[int]:
    """The decode capture list SGLang resolves at argument time (before the runtime clamp)."""
    if spec.get("disable_cuda_graph"):
        return []
    given = explicit_graph_bs(spec)
    if given:
        return given
    max_bs = explicit_graph_max_bs(spec)
    if max_bs is None:
        max_bs = _memory_default_max_bs(spec, env)
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
    """--mem-fraction-static when unset: ``(gpu_mem - reserved) / gpu_mem`` (the reserve is
    spelled out beside ``MEM_RESERVED_BASE_MIB``)."""
    gpu_mib = gpu_visible_mib(env)
    if gpu_mib is None:
        return MEM_FRACTION_UNKNOWN_GPU
    tp = spec.get("tp_size") or 1
    # LaunchSpec.get raises on a flag the flag table does not model; read it only where it does.
    chunk = spec.get("chunked_prefill_size") if "chunked_prefill_size" in FLAGS_BY_DEST else None
    chunk = chunk or default_chunked_prefill(gpu_mib)
    reserved = MEM_RESERVED_BASE_MIB + max(chunk, MEM_RESERVED_MIN_CHUNK_TOKENS) * MEM_RESERVED_MIB_PER_CHUNK_TOKEN + tp / 8 * 1024
    if not spec.get("disable_cuda_graph"):
        reserved += configured_max_bs * GRAPH_MIB_PER_BS
    if gpu_mib > 60 * 1024:
        reserved = max(reserved, MEM_RESERVED_MIN_MIB_ABOVE_60_GIB)
    return round((gpu_mib - reserved) / gpu_mib, 3)
