"""Llama / Qwen2 / Qwen3 decoder in pure PyTorch, gpt-fast style.

Module and parameter names follow Hugging Face's (``model.layers.0.self_attn.q_proj.weight``)
so a checkpoint loads with ``load_state_dict``. Each attention layer owns a preallocated KV
cache of ``max_len`` slots. A forward writes the keys and values of its ``T`` tokens into the
contiguous slots ``start .. start+T-1`` and attends over slots ``0 .. start+T-1`` under an
explicit boolean mask, so one forward verifies a whole tree of draft tokens (each token sees
the committed prefix and its own ancestors). RoPE uses Hugging Face's ``rotate_half``
convention, so HF weights need no permutation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import nn

from specguard.runtime.config import ModelConfig, rope_inv_freq


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """RMSNorm over the last dimension, scaled by ``weight`` (``[D]``, or ``[k, D]`` for ``k``
    norms of ``x``'s ``[..., k, D]`` slices at once, each computed as it would be alone)."""
    if x.dtype == torch.float32:
        if weight.dim() == 1:
            return F.rms_norm(x, (x.shape[-1],), weight, eps)
        return F.rms_norm(x, (x.shape[-1],), None, eps) * weight
    # Half precision: normalise in float32 as Hugging Face does, then scale in x's dtype.
    xf = x.float()
    return weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rms_norm(x, self.weight, self.eps)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def _rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    return x * cos + _rotate_half(x) * sin


class KVCache(nn.Module):
    """Keys and values of ``rows`` requests, ``max_len`` slots each: ``[rows, n_kv, max_len, hd]``.

    gpt-fast's ``KVCache`` with one row per request: :meth:`update` writes the new tokens of the
    bound row and returns what attention reads; :meth:`update_rows` does the same for one token
    of each of several rows (the batched decode step).
    """

    k: torch.Tensor
    v: torch.Tensor

    def __init__(self, rows: int, n_kv: int, max_len: int, head_dim: int, dtype: torch.dtype, device: torch.device) -> None:
        super().__init__()
        shape = (rows, n_kv, max_len, head_dim)
        # Not persistent: the cache is state of the server, never part of a checkpoint.
        self.register_buffer("k", torch.zeros(shape, dtype=dtype, device=device), persistent=False)
        self.register_buffer("v", torch.zeros(shape, dtype=dtype, device=device), persistent=False)
        self.row = 0

    def bind(self, row: int) -> None:
        """The row :meth:`update` and :meth:`move` act on."""
        self.row = row

    def update(self, start: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Write ``T`` tokens' ``k``, ``v`` ``[T, n_kv, hd]`` to slots ``start..start+T-1`` of the
        bound row; return that row's keys and values over slots ``0..start+T-1`` ``[n_kv, end, hd]``."""
        end = start + k.shape[0]
        keys, values = self.k[self.row], self.v[self.row]
        keys[:, start:end] = k.transpose(0, 1)
        values[:, start:end] = v.transpose(0, 1)
        return keys[:, :end], values[:, :end]

    def update_rows(
        self, k: torch.Tensor, v: torch.Tensor, rows: torch.Tensor, slots: torch.Tensor, span: int, row_range: slice | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Write token ``b`` (``k``, ``v`` ``[B, n_kv, hd]``) to slot ``slots[b]`` of row ``rows[b]``;
        return the rows' keys and values over slots ``0..span-1`` ``[B, n_kv, span, hd]``.
        ``row_range``: ``rows`` is that contiguous range, read as a view instead of gathered."""
        self.k[rows, :, slots] = k
        self.v[rows, :, slots] = v
        if row_range is not None:
            return self.k[row_range, :, :span], self.v[row_range, :, :span]
        return self.k[rows, :, :span], self.v[rows, :, :span]

    def update_ragged(
        self, k: torch.Tensor, v: torch.Tensor, where: TokensPerRow
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Write row ``b``'s ``T`` tokens (``k``, ``v`` ``[B, T, n_kv, hd]``) to slots
        ``where.slots[b]`` of row ``where.rows[b]``; return the rows' keys and values over slots
        ``0..where.span-1`` ``[B, n_kv, span, hd]``."""
        hd = k.shape[-1]
        index = where.cache_index(self.k.shape[1], self.k.shape[2])
        self.k.view(-1, hd).index_copy_(0, index, k.reshape(-1, hd))
        self.v.view(-1, hd).index_copy_(0, index, v.reshape(-1, hd))
        rows, span, row_range = where.rows, where.span, where.row_range
        if row_range is not None:
            return self.k[row_range, :, :span], self.v[row_range, :, :span]
        return self.k[rows, :, :span], self.v[rows, :, :span]

    def move(self, src_slots: torch.Tensor, dst_start: int) -> None:
        """Copy the bound row's ``src_slots`` to the contiguous slots from ``dst_start``."""
        n = src_slots.numel()
        keys, values = self.k[self.row], self.v[self.row]
        keys[:, dst_start : dst_start + n] = keys[:, src_slots]
        values[:, dst_start : dst_start + n] = values[:, src_slots]


@dataclass(frozen=True)
class OneRow:
    """Where a forward's ``T`` tokens go: slots ``start..`` of the bound row, under ``bias``
    (an additive ``[T, start+T]`` mask; None: a single token sees the whole prefix)."""

    start: int
    bias: torch.Tensor | None


@dataclass(frozen=True)
class OneTokenPerRow:
    """Where a batched decode step's tokens go: token ``b`` to slot ``slots[b]`` of row ``rows[b]``;
    ``span`` is ``max(slots) + 1``; ``row_range``: the rows are that contiguous range."""

    rows: torch.Tensor
    slots: torch.Tensor
    span: int
    row_range: slice | None


@dataclass(frozen=True)
class TokensPerRow:
    """Where a ragged batch's tokens go (the batched speculative round: drafts, verify, draft
    catch-up): row ``b``'s ``T`` tokens (padded to the longest) go to slots ``slots[b]``
    (``[B, T]``) of row ``rows[b]`` under ``bias`` (additive, ``[B, T, span]``)."""

    rows: torch.Tensor
    slots: torch.Tensor
    span: int
    bias: torch.Tensor
    row_range: slice | None
    _grouped: dict[int, torch.Tensor] = field(default_factory=dict, compare=False, repr=False)
    _index: dict[tuple[int, int], torch.Tensor] = field(default_factory=dict, compare=False, repr=False)

    def cache_index(self, n_kv: int, max_len: int) -> torch.Tensor:
        """Where each new token's key (or value) of each KV head goes in a ``[rows, n_kv, max_len,
        hd]`` cache seen as ``[-1, hd]``: ``[B * T * n_kv]``, in the order of ``k.view(B, T, n_kv,
        hd)``. One ``index_copy_`` per write instead of an advanced-index put (rows and slots
        around a slice), at half its cost on CPU; built by the first layer, shared by the others."""
        key = (n_kv, max_len)
        if key not in self._index:
            heads = torch.arange(n_kv, device=self.slots.device)
            first = (self.rows.view(-1, 1, 1) * n_kv + heads) * max_len  # [B, 1, n_kv]: slot 0 of each head
            self._index[key] = (first + self.slots.unsqueeze(2)).reshape(-1)
        return self._index[key]

    def grouped_bias(self, group: int) -> torch.Tensor:
        """``bias`` repeated for the ``group`` query heads of each KV head, ``[B, 1, group * T, span]``
        (the layout :meth:`Attention._attend_ragged` folds them into): built by the first layer
        that reads it, shared by the others."""
        if group not in self._grouped:
            b, t, span = self.bias.shape
            if t == 1:  # one token per row: its mask broadcasts over the group's rows, no copy
                self._grouped[group] = self.bias.unsqueeze(1)
            else:
                self._grouped[group] = self.bias.unsqueeze(1).expand(b, group, t, span).reshape(b, 1, group * t, span)
        return self._grouped[group]


Placement = OneRow | OneTokenPerRow | TokensPerRow


def row_range_of(rows: list[int]) -> slice | None:
    """``rows`` as a slice when they are one contiguous ascending run (read as a view of the cache)."""
    if rows == list(range(rows[0], rows[0] + len(rows))):
        return slice(rows[0], rows[0] + len(rows))
    return None


def ragged_placement(
    rows: list[int], prefixes: list[int], starts: list[int], local: torch.Tensor, dtype: torch.dtype, device: torch.device
) -> TokensPerRow:
    """Row ``b``'s ``T`` tokens at slots ``starts[b]..starts[b]+T-1``; each sees every slot below
    ``prefixes[b]`` and, of the ``W`` slots from ``prefixes[b]``, those ``local[b]`` (``[B, T, W]``
    boolean) allows (``W`` reaches the new tokens' own slots: ``starts[b] - prefixes[b] + T == W``)."""
    b, t, w = local.shape
    prefix_t = torch.tensor(prefixes, dtype=torch.long, device=device)
    start_t = torch.tensor(starts, dtype=torch.long, device=device)
    span = max(p + w for p in prefixes)
    if span > 0 and max(starts) + t > span:
        raise ValueError("ragged placement: the new tokens must lie inside the local window")
    slots = start_t.unsqueeze(1) + torch.arange(t, device=device)
    allowed = (torch.arange(span, device=device) < prefix_t.unsqueeze(1)).unsqueeze(1).expand(b, t, span).clone()
    window = prefix_t.unsqueeze(1) + torch.arange(w, device=device)  # [B, W]
    allowed.scatter_(2, window.unsqueeze(1).expand(b, t, w), local.to(device))
    bias = torch.zeros((b, t, span), dtype=dtype, device=device).masked_fill_(~allowed, float("-inf"))
    rows_t = torch.tensor(rows, dtype=torch.long, device=device)
    return TokensPerRow(rows_t, slots, span, bias, row_range_of(rows))


def causal_placement(rows: list[int], starts: list[int], t: int, dtype: torch.dtype, device: torch.device) -> TokensPerRow:
    """:func:`ragged_placement` of ``t`` tokens per row from ``starts[b]``, causal among themselves
    and seeing every earlier slot (chains, catch-up, draft extend), built without the local window."""
    start_t = torch.tensor(starts, dtype=torch.long, device=device)
    slots = start_t.unsqueeze(1) + torch.arange(t, device=device)
    span = max(starts) + t
    beyond = torch.arange(span, device=device) > slots.unsqueeze(2)  # [B, T, span]
    bias = torch.zeros(beyond.shape, dtype=dtype, device=device).masked_fill_(beyond, float("-inf"))
    return TokensPerRow(torch.tensor(rows, dtype=torch.long, device=device), slots, span, bias, row_range_of(rows))


def chain_placements(
    rows: list[int], starts: list[int], steps: int, cache: tuple[int, int], dtype: torch.dtype, device: torch.device
) -> list[TokensPerRow]:
    """One token per row for each of ``steps`` chain steps (a batched draft chain): step ``i``'s
    token at slot ``starts[b] + i`` of row ``rows[b]``, seeing every slot up to its own. Built at
    once for the whole chain, so a step builds nothing: one mask over the last step's span, and
    the flat cache index (:meth:`TokensPerRow.cache_index`) of every step for a cache of
    ``cache`` = (KV heads, slots per row)."""
    n_kv, max_len = cache
    rows_t = torch.tensor(rows, dtype=torch.long, device=device)
    slots = torch.tensor(starts, dtype=torch.long, device=device) + torch.arange(steps, device=device).unsqueeze(1)  # [steps, B]
    span = max(starts) + steps
    beyond = torch.arange(span, device=device) > slots.unsqueeze(2)  # [steps, B, span]
    bias = torch.zeros(beyond.shape, dtype=dtype, device=device).masked_fill_(beyond, float("-inf"))
    first = (rows_t.unsqueeze(1) * n_kv + torch.arange(n_kv, device=device)) * max_len  # [B, n_kv]: slot 0 of each head
    index = first + slots.unsqueeze(2)  # [steps, B, n_kv]
    row_range = row_range_of(rows)
    return [
        TokensPerRow(rows_t, slots[i].unsqueeze(1), span, bias[i].unsqueeze(1), row_range, _index={cache: index[i].view(-1)})
        for i in range(steps)
    ]


def fuse_linears(layers: list[nn.Linear]) -> tuple[torch.Tensor, torch.Tensor | None]:
    """One weight (and bias) for several linears reading the same input, whose weights become
    views of it: the fused matrix is the only copy kept (gpt-fast fuses at load the same way)."""
    weight = torch.cat([layer.weight.detach() for layer in layers])
    biases = [layer.bias for layer in layers]
    bias = torch.cat([b.detach() for b in biases if b is not None]) if all(b is not None for b in biases) else None
    row = 0
    for layer in layers:
        rows = layer.weight.shape[0]
        layer.weight = nn.Parameter(weight[row : row + rows], requires_grad=False)
        if bias is not None:
            layer.bias = nn.Parameter(bias[row : row + rows], requires_grad=False)
        row += rows
    return weight, bias


class Attention(nn.Module):
    q_norm: RMSNorm | None
    k_norm: RMSNorm | None
    kv_cache: KVCache | None

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.n_heads = cfg.num_attention_heads
        self.n_kv = cfg.num_key_value_heads
        self.head_dim = cfg.head_dim
        hd = cfg.head_dim
        self.q_proj = nn.Linear(cfg.hidden_size, self.n_heads * hd, bias=cfg.qkv_bias)
        self.k_proj = nn.Linear(cfg.hidden_size, self.n_kv * hd, bias=cfg.qkv_bias)
        self.v_proj = nn.Linear(cfg.hidden_size, self.n_kv * hd, bias=cfg.qkv_bias)
        self.o_proj = nn.Linear(self.n_heads * hd, cfg.hidden_size, bias=False)
        if cfg.qk_norm:
            self.q_norm = RMSNorm(hd, cfg.rms_norm_eps)
            self.k_norm = RMSNorm(hd, cfg.rms_norm_eps)
        else:
            self.q_norm = None
            self.k_norm = None
        self.kv_cache = None
        self._wqkv: torch.Tensor | None = None
        self._bqkv: torch.Tensor | None = None

    def allocate(self, rows: int, max_len: int, dtype: torch.dtype, device: torch.device) -> None:
        self.kv_cache = KVCache(rows, self.n_kv, max_len, self.head_dim, dtype, device)

    @property
    def cache(self) -> KVCache:
        assert self.kv_cache is not None, "setup_cache comes first"
        return self.kv_cache

    def fuse(self) -> None:
        """One matmul for q, k and v (fewer kernel launches per token); q/k/v_proj become views of it."""
        self._wqkv, self._bqkv = fuse_linears([self.q_proj, self.k_proj, self.v_proj])

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, where: Placement) -> torch.Tensor:
        """Attention for ``N`` new tokens ``x`` ``[N, D]`` placed in the cache as ``where`` says."""
        q, k, v = self.qkv(x, cos, sin)
        return F.linear(self.attend(q, k, v, where), self.o_proj.weight)

    def attend(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, where: Placement, keep: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Write ``k``, ``v`` to the cache as ``where`` says and attend: ``[N, n_heads * hd]``, before
        ``o_proj``. ``keep`` (a ragged batch only): the one token per row whose output is wanted, as
        indices into the ``B * T`` tokens; the others only write their keys and values."""
        if isinstance(where, OneRow):
            return self._attend_one_row(q, k, v, where)
        if isinstance(where, OneTokenPerRow):
            return self._attend_rows(q, k, v, where)
        return self._attend_ragged(q, k, v, where, keep)

    def _attend_one_row(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, where: OneRow) -> torch.Tensor:
        t, hd, n_kv = q.shape[0], self.head_dim, self.n_kv
        group = self.n_heads // n_kv
        keys, values = self.cache.update(where.start, k, v)
        end = keys.shape[1]
        # Query heads h use KV head h // group (Hugging Face's repeat_kv): fold the group into
        # the row dimension so one bmm per KV head serves all its query heads.
        q = q.reshape(t, n_kv, group, hd).permute(1, 2, 0, 3).reshape(n_kv, group * t, hd)
        scores = torch.bmm(q, keys.transpose(1, 2)).mul_(hd**-0.5)
        if where.bias is not None:  # [T, end], broadcast over KV heads and their query groups
            scores = scores.view(n_kv, group, t, end).add_(where.bias).view(n_kv, group * t, end)
        out = torch.bmm(torch.softmax(scores, dim=-1), values)
        return out.view(n_kv, group, t, hd).permute(2, 0, 1, 3).reshape(t, self.n_heads * hd)

    def _attend_rows(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, where: OneTokenPerRow) -> torch.Tensor:
        b, hd, n_kv = q.shape[0], self.head_dim, self.n_kv
        group = self.n_heads // n_kv
        keys, values = self.cache.update_rows(k, v, where.rows, where.slots, where.span, where.row_range)
        q = q.view(b, n_kv, group, hd)
        scores = torch.matmul(q, keys.transpose(-1, -2)).mul_(hd**-0.5)  # [B, n_kv, group, span]
        # Shorter rows' tails hold other tokens' stale entries: masked.
        beyond = torch.arange(where.span, device=q.device).unsqueeze(0) > where.slots.unsqueeze(1)  # [B, span]
        scores.masked_fill_(beyond[:, None, None, :], float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), values).reshape(b, self.n_heads * hd)

    def _attend_ragged(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, where: TokensPerRow, keep: torch.Tensor | None
    ) -> torch.Tensor:
        b, t = where.slots.shape
        hd, n_kv = self.head_dim, self.n_kv
        group = self.n_heads // n_kv
        keys, values = self.cache.update_ragged(k.view(b, t, n_kv, hd), v.view(b, t, n_kv, hd), where)
        if keep is None:
            bias = where.grouped_bias(group)
        else:  # one query per row, under its own row of the mask (broadcast over the group)
            q, bias, t = q[keep], where.bias.reshape(b * t, -1)[keep].view(b, 1, 1, -1), 1
        # Query heads grouped per KV head (as _attend_one_row), the row's mask repeated per group;
        # one fused attention call (several tokens per row: the softmax is most of the cost).
        q = q.view(b, t, n_kv, group, hd).permute(0, 2, 3, 1, 4).reshape(b, n_kv, group * t, hd)
        out = F.scaled_dot_product_attention(q, keys, values, attn_mask=bias)  # [B, n_kv, group*T, hd]
        return out.view(b, n_kv, group, t, hd).permute(0, 3, 1, 2, 4).reshape(b * t, self.n_heads * hd)

    def qkv(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """q ``[N, H, hd]``, k and v ``[N, KV, hd]`` for ``N`` tokens, rope (and q/k norms) applied."""
        n, hd, n_heads, n_kv = x.shape[0], self.head_dim, self.n_heads, self.n_kv
        if self._wqkv is not None:
            qkv = F.linear(x, self._wqkv, self._bqkv).view(n, n_heads + 2 * n_kv, hd)
        else:
            qkv = torch.cat([self.q_proj(x), self.k_proj(x), self.v_proj(x)], dim=-1).view(n, n_heads + 2 * n_kv, hd)
        if self.q_norm is not None and self.k_norm is not None:
            q = _rope(self.q_norm.forward(qkv[:, :n_heads]), cos, sin)
            k = _rope(self.k_norm.forward(qkv[:, n_heads : n_heads + n_kv]), cos, sin)
        else:
            qk = _rope(qkv[:, : n_heads + n_kv], cos, sin)
            q, k = qk[:, :n_heads], qk[:, n_heads:]
        return q, k, qkv[:, n_heads + n_kv :]

    def forward_train(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        """Causal self-attention over a batch ``[B, T, D]`` without the cache (training)."""
        b, t, _ = x.shape
        hd = self.head_dim
        q = self.q_proj(x).view(b, t, self.n_heads, hd).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.n_kv, hd).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.n_kv, hd).transpose(1, 2)
        if self.q_norm is not None and self.k_norm is not None:
            q = self.q_norm(q)
            k = self.k_norm(k)
        q = _rope(q, cos, sin)
        k = _rope(k, cos, sin)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.n_kv != self.n_heads)
        return self.o_proj(out.transpose(1, 2).reshape(b, t, self.n_heads * hd))


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)
        self._w_gate_up: torch.Tensor | None = None

    def fuse(self) -> None:
        """One matmul for gate and up; gate/up_proj become views of it."""
        self._w_gate_up, _ = fuse_linears([self.gate_proj, self.up_proj])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._w_gate_up is not None:
            gate, up = F.linear(x, self._w_gate_up).chunk(2, dim=-1)
        else:
            gate, up = self.gate_proj(x), self.up_proj(x)
        return F.linear(F.silu(gate) * up, self.down_proj.weight)


class DecoderLayer(nn.Module):
    # Declared so that attribute access is typed (nn.Module.__getattr__ says Tensor | Module).
    input_layernorm: RMSNorm
    self_attn: Attention
    post_attention_layernorm: RMSNorm
    mlp: MLP

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, where: Placement) -> torch.Tensor:
        # Submodules are called through .forward: nn.Module.__call__'s hook machinery is a
        # measurable share of a tiny model's decode step.
        x = x + self.self_attn.forward(self.input_layernorm.forward(x), cos, sin, where)
        return x + self.mlp.forward(self.post_attention_layernorm.forward(x))


class DecoderStack(nn.Module):
    embed_tokens: nn.Embedding
    norm: RMSNorm

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([DecoderLayer(cfg) for _ in range(cfg.num_hidden_layers)])
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    @property
    def decoder_layers(self) -> list[DecoderLayer]:
        """The layers, typed (a ModuleList iterates as plain Modules); no copy."""
        return cast("list[DecoderLayer]", self.layers)


class CausalLM(nn.Module):
    """A decoder-only LM with a static KV cache of ``rows`` request slots.

    :meth:`forward` serves the bound row (:meth:`bind_row`), tokens as a 1-D tensor;
    :meth:`forward_decode` advances one token of several rows in one batched pass.
    """

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.config = cfg
        self.model = DecoderStack(cfg)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        if cfg.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight
        self.max_len = 0
        self.rows = 0
        #: layer outputs an EAGLE3 head reads, in order (SGLang captures the *input* of layer
        #: ``id + 1``, i.e. the output of layer ``id``: models/llama.py set_eagle3_layers_to_capture);
        #: empty: ``return_hidden`` gives the final normed hidden state (EAGLE)
        self.aux_layer_ids: tuple[int, ...] = ()
        self._cos = torch.empty(0)  # rope tables, built by setup_cache
        self._sin = torch.empty(0)
        #: captured CUDA graphs of this model's batched shapes (graphs.GraphRunner); None: eager
        self.graphs: Any = None

    @property
    def device(self) -> torch.device:
        return self.model.embed_tokens.weight.device

    @property
    def dtype(self) -> torch.dtype:
        return self.model.embed_tokens.weight.dtype

    def fuse(self) -> None:
        for layer in self.model.decoder_layers:
            layer.self_attn.fuse()
            layer.mlp.fuse()

    def setup_cache(self, max_len: int, rows: int = 1) -> None:
        """Allocate the KV cache once (``rows`` requests of ``max_len`` slots); forwards only write into it."""
        cfg = self.config
        if (max_len, rows) == (self.max_len, self.rows):
            return
        self.max_len, self.rows = max_len, rows
        for layer in self.model.decoder_layers:
            layer.self_attn.allocate(rows, max_len, self.dtype, self.device)
        self._cos, self._sin = rope_tables(cfg, max_len, self.dtype, self.device)

    def bind_row(self, row: int) -> None:
        """Point :meth:`forward`'s cache at request slot ``row`` (no copy)."""
        for layer in self.model.decoder_layers:
            layer.self_attn.cache.bind(row)

    def forward_decode(self, tokens: list[int] | torch.Tensor, rows: list[int], slots: list[int]) -> torch.Tensor:
        """Logits ``[B, V]`` for one token per request: ``tokens[b]`` at slot (= position)
        ``slots[b]`` of cache row ``rows[b]``, attending over that row's earlier slots."""
        tokens_t = torch.as_tensor(tokens, dtype=torch.long, device=self.device).reshape(-1)
        if self.graphs is not None:
            placed = ragged_placement(rows, slots, slots, torch.ones((len(rows), 1, 1), dtype=torch.bool), self.dtype, self.device)
            positions = torch.tensor(slots, dtype=torch.long, device=self.device).unsqueeze(1)
            out = self.graphs.run(tokens_t.unsqueeze(1), positions, placed)
            if out is not None:
                return out[0][:, 0]
        where = one_token_per_row(rows, slots, self.max_len, self.device)
        logits, _ = self._run(
            tokens_t, self._cos[where.slots], self._sin[where.slots], where, last_only=False, return_hidden=False
        )
        return logits

    def run_rows(
        self,
        tokens: torch.Tensor,
        positions: torch.Tensor,
        where: TokensPerRow,
        return_hidden: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """A ragged batch: logits ``[B, T, V]`` for ``tokens`` ``[B, T]`` at RoPE ``positions``
        ``[B, T]``, placed as ``where`` says (:func:`ragged_placement`); with ``return_hidden``
        the hidden states ``[B, T, *]`` an EAGLE head reads (as :meth:`run`)."""
        b, t = tokens.shape
        if where.span > self.max_len:
            raise ValueError(f"KV cache overflow: {where.span} > {self.max_len}")
        if self.graphs is not None:
            out = self.graphs.run(tokens, positions, where)
            if out is not None and (out[1] is not None or not return_hidden):
                return out[0], (out[1] if return_hidden else None)
        flat = positions.reshape(-1)
        logits, hidden = self._run(tokens.reshape(-1), self._cos[flat], self._sin[flat], where, False, return_hidden)
        return logits.view(b, t, -1), (None if hidden is None else hidden.view(b, t, -1))

    def static_forward(
        self, tokens: torch.Tensor, positions: torch.Tensor, where: TokensPerRow, hidden: torch.Tensor | None, return_hidden: bool
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """:meth:`run_rows` with shapes that depend only on the batch (what a CUDA graph records):
        ``where`` reads every slot of its rows (``span`` = the cache length)."""
        b, t = tokens.shape
        flat = positions.reshape(-1)
        logits, out = self._run(tokens.reshape(-1), self._cos[flat], self._sin[flat], where, False, return_hidden)
        return logits.view(b, t, -1), (None if out is None else out.view(b, t, -1))

    def forward_train(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits ``[B, T, V]`` for a batch of sequences, no cache (used to train the tiny pair)."""
        return self._forward_train(tokens, ())[0]

    def forward_train_with_aux(self, tokens: torch.Tensor, aux_layer_ids: tuple[int, ...]) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits and those layers' outputs concatenated (to train an EAGLE3 head)."""
        return self._forward_train(tokens, aux_layer_ids)

    def _forward_train(self, tokens: torch.Tensor, aux_layer_ids: tuple[int, ...]) -> tuple[torch.Tensor, torch.Tensor]:
        # Training runs in float32 before any cache exists: the tables are built for its length.
        cos, sin = (table.squeeze(1) for table in rope_tables(self.config, tokens.shape[1], torch.float32, tokens.device))
        x = self.model.embed_tokens(tokens)
        captured = []
        for index, layer in enumerate(self.model.decoder_layers):
            h = layer.input_layernorm(x)
            x = x + layer.self_attn.forward_train(h, cos, sin)
            x = x + layer.mlp(layer.post_attention_layernorm(x))
            captured.extend([x] * aux_layer_ids.count(index))
        logits = self.lm_head(self.model.norm(x))
        return logits, (torch.cat(captured, dim=-1) if captured else x[..., :0])

    def move_cache(self, src_slots: torch.Tensor, dst_start: int) -> None:
        """Copy the KV of ``src_slots`` to the contiguous slots from ``dst_start`` (tree compaction)."""
        for layer in self.model.decoder_layers:
            layer.self_attn.cache.move(src_slots, dst_start)

    def forward(  # type: ignore[override]
        self,
        tokens: torch.Tensor,
        positions: torch.Tensor | None,
        start: int,
        mask: torch.Tensor | None = None,
        last_only: bool = False,
        return_hidden: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """:meth:`run`'s logits, or (logits, hidden) when ``return_hidden``."""
        logits, hidden = self.run(tokens, positions, start, mask, last_only, return_hidden)
        if hidden is None:
            return logits
        return logits, hidden

    def run(
        self,
        tokens: torch.Tensor,
        positions: torch.Tensor | None,
        start: int,
        mask: torch.Tensor | None = None,
        last_only: bool = False,
        return_hidden: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Logits for ``tokens`` (shape ``[T]``) written to cache slots ``start..start+T-1`` of the
        bound row, and the hidden states when ``return_hidden`` (None otherwise).

        ``positions`` None means the RoPE positions are the slots themselves (no tree).
        ``mask`` is ``[T, start+T]`` boolean (True = may attend); ``None`` means causal over
        the new tokens and full over the cached prefix.
        ``return_hidden`` also returns, for every token (``last_only`` trims the logits only),
        the hidden state an EAGLE head reads: the outputs of the layers in
        :attr:`aux_layer_ids` concatenated (EAGLE3), or the final normed state (EAGLE).
        """
        t = tokens.shape[0]
        if start + t > self.max_len:
            raise ValueError(f"KV cache overflow: {start + t} > {self.max_len}")
        bias = attention_bias(mask, start, t, self.dtype, self.device)
        if positions is None:  # positions equal the cache slots: a view, no gather
            cos, sin = self._cos[start : start + t], self._sin[start : start + t]
        else:
            cos, sin = self._cos[positions], self._sin[positions]
        return self._run(tokens, cos, sin, OneRow(start, bias), last_only, return_hidden)

    def _run(
        self, tokens: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, where: Placement, last_only: bool, return_hidden: bool
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The one inference path: embed, every layer, norm, logits (and the EAGLE hidden state)."""
        x = F.embedding(tokens, self.model.embed_tokens.weight)
        captured = []
        capture = return_hidden and bool(self.aux_layer_ids)
        for index, layer in enumerate(self.model.decoder_layers):
            x = layer.forward(x, cos, sin, where)
            if capture and index in self.aux_layer_ids:
                captured.extend([x] * self.aux_layer_ids.count(index))
        if last_only and not return_hidden:
            x = x[-1:]
        normed = self.model.norm.forward(x)
        logits = F.linear(normed[-1:] if last_only else normed, self.lm_head.weight).float()
        if not return_hidden:
            return logits, None
        return logits, (torch.cat(captured, dim=-1) if capture else normed)


def one_token_per_row(rows: list[int], slots: list[int], max_len: int, device: torch.device) -> OneTokenPerRow:
    """Token ``b`` at slot ``slots[b]`` of row ``rows[b]`` (a batched decode step)."""
    span = max(slots) + 1
    if span > max_len:
        raise ValueError(f"KV cache overflow: {span} > {max_len}")
    slots_t = torch.tensor(slots, dtype=torch.long, device=device)
    return OneTokenPerRow(torch.tensor(rows, dtype=torch.long, device=device), slots_t, span, row_range_of(rows))


def rope_tables(
    cfg: ModelConfig, max_len: int, dtype: torch.dtype, device: torch.device | str
) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin ``[max_len, 1, head_dim]`` for every position (Hugging Face's rotate_half layout)."""
    inv_freq = torch.tensor(rope_inv_freq(cfg), dtype=torch.float32, device=device)
    freqs = torch.outer(torch.arange(max_len, dtype=torch.float32, device=device), inv_freq)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos().to(dtype).unsqueeze(1), emb.sin().to(dtype).unsqueeze(1)


def causal_mask(start: int, t: int, device: torch.device | str = "cpu") -> torch.Tensor:
    return torch.ones(t, start + t, dtype=torch.bool, device=device).tril(diagonal=start)


def attention_bias(
    mask: torch.Tensor | None, start: int, t: int, dtype: torch.dtype, device: torch.device
) -> torch.Tensor | None:
    """The additive ``[T, start+T]`` bias for ``mask`` (None: causal over the new tokens when
    there are several; a single token sees the whole prefix and needs none)."""
    if mask is None and t > 1:
        mask = causal_mask(start, t, device)
    if mask is None:
        return None
    return torch.zeros(mask.shape, dtype=dtype, device=device).masked_fill_(~mask, float("-inf"))
