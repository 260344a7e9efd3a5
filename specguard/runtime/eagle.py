"""EAGLE (EAGLE-2) and EAGLE3 draft heads: the module, its checkpoint loader and its drafter.

The layouts are SGLang 0.5.23's (``srt/models/llama_eagle.py``, ``srt/models/llama_eagle3.py``)
and SpecForge's (``specforge/modeling/draft/llama3_eagle.py``), which writes the EAGLE3
checkpoints published on the hub:

* **EAGLE3** (``LlamaForCausalLMEagle3``): ``fc`` projects the concatenated aux hidden states
  of the target (``num_aux`` x ``target_hidden_size`` -> ``hidden_size``, no bias unless the
  config's ``bias``); one decoder layer ``midlayer`` (SGLang's ``layers.0``) whose q/k/v read
  ``cat(input_layernorm(embed), hidden_norm(hidden))`` (twice the hidden size) and whose residual
  is the projected hidden state; ``norm`` before a reduced-vocabulary ``lm_head``
  (``draft_vocab_size`` rows) whose row ``i`` is target token ``i + d2t[i]``
  (llama_eagle3.py:350-353; SpecForge data/preprocessing.py:763); ``t2d`` is unused. The head
  reads the target's embeddings (SGLang's ``set_embed``, llama.py:910-918, unless
  ``target_hidden_size`` differs from ``hidden_size``); without ``draft_vocab_size`` and with
  untied embeddings it uses the target's ``lm_head`` (``load_lm_head_from_target``,
  llama_eagle3.py:302-308). The next draft step reads the layer's pre-norm output
  (``norm_output`` false, llama_eagle3.py:267-269) without ``fc``.
* **EAGLE** (``LlamaForCausalLMEagle``): ``fc`` (with bias) over ``cat(embed, hidden)`` where
  ``hidden`` is the target's final normed hidden state; ``num_hidden_layers`` decoder layers,
  the first without ``input_layernorm`` (llama_eagle.py:52-55), no final norm; embeddings and
  ``lm_head`` are the target's (``set_embed_and_head``; the checkpoint's ``lm_head`` is skipped,
  llama_eagle.py:146-150).

Aux layers (EAGLE3): ``eagle_config.eagle_aux_hidden_state_layer_ids`` in the head's config, or
SGLang's default, the inputs of layers ``[2, n // 2, n - 3]`` (llama.py:929-941), i.e. the
outputs of layers ``[1, n // 2 - 1, n - 4]``, which is SpecForge's default as well
(specforge/algorithms/model_providers.py:204).

Draft alignment (SGLang's draft extend): draft slot ``j`` holds the target's hidden state at
position ``j`` and the token at position ``j + 1``, at RoPE position ``j``; its output predicts
the token at ``j + 2``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import nn

from specguard.runtime.config import ModelConfig, parse_config
from specguard.runtime.errors import CheckpointError
from specguard.runtime.flags import EAGLE_HEAD_ARCHITECTURES as EAGLE_ARCHITECTURES
from specguard.runtime.model import (
    MLP,
    Attention,
    CausalLM,
    OneRow,
    Placement,
    RMSNorm,
    TokensPerRow,
    attention_bias,
    chain_placements,
    rms_norm,
    rope_tables,
)

#: checkpoint spellings -> this module's names (SGLang's legacy map, llama_eagle3.py:338-343)
_LEGACY_NAMES = {"midlayer.": "layers.0.", "aux_norm_low.": "fc_norm.0.", "aux_norm_mid.": "fc_norm.1.", "aux_norm_high.": "fc_norm.2."}


def default_aux_layer_ids(num_target_layers: int) -> list[int]:
    """SGLang's default capture (inputs of layers 2, n//2, n-3) as layer outputs."""
    n = num_target_layers
    return [1, n // 2 - 1, n - 4]


@dataclass(frozen=True)
class HeadConfig:
    algorithm: str  # "EAGLE" or "EAGLE3"
    model: ModelConfig  # the head's decoder-layer shapes, rope and vocabulary
    target_hidden_size: int
    aux_layer_ids: tuple[int, ...]  # EAGLE3 only
    draft_vocab_size: int | None
    fc_bias: bool
    fc_norm: bool
    norm_before_fc: bool
    norm_output: bool


def parse_head_config(raw: dict[str, Any], target: ModelConfig, source: str) -> HeadConfig:
    architectures = raw.get("architectures") or []
    arch = next((a for a in architectures if a in EAGLE_ARCHITECTURES), None)
    if arch is None:
        raise CheckpointError(
            f"{source}: architecture {architectures!r} is not an EAGLE head the reference runtime loads "
            f"(supported: {', '.join(sorted(EAGLE_ARCHITECTURES))})"
        )
    algorithm = EAGLE_ARCHITECTURES[arch]
    model = parse_config({**raw, "architectures": ["LlamaForCausalLM"]}, source)
    if model.vocab_size != target.vocab_size:
        raise CheckpointError(
            f"{source}: vocab_size {model.vocab_size} differs from the target's {target.vocab_size}; "
            "the head was trained for another target"
        )
    eagle_config = raw.get("eagle_config") or {}
    target_hidden = int(raw.get("target_hidden_size") or model.hidden_size)
    if target_hidden != target.hidden_size:
        raise CheckpointError(
            f"{source}: the head reads hidden states of size {target_hidden}, the target's are {target.hidden_size}"
        )
    aux: tuple[int, ...] = ()
    if algorithm == "EAGLE3":
        if model.num_hidden_layers != 1:
            raise CheckpointError(
                f"{source}: EAGLE3 heads with {model.num_hidden_layers} layers are not supported by the reference "
                "runtime (one midlayer only); serve this draft with SGLang"
            )
        if eagle_config.get("use_aux_hidden_state", True) is False:
            raise CheckpointError(
                f"{source}: eagle_config.use_aux_hidden_state false is not supported by the reference runtime; "
                "serve this draft with SGLang"
            )
        ids = eagle_config.get("eagle_aux_hidden_state_layer_ids")
        ids = list(ids) if ids else default_aux_layer_ids(target.num_hidden_layers)
        count = raw.get("num_aux_hidden_states") or len(ids)
        if count != len(ids):
            raise CheckpointError(f"{source}: num_aux_hidden_states {count} but {len(ids)} aux layer ids {ids}")
        bad = [i for i in ids if not 0 <= int(i) < target.num_hidden_layers]
        if bad:
            raise CheckpointError(
                f"{source}: aux hidden-state layer ids {bad} are outside the target's {target.num_hidden_layers} layers"
            )
        aux = tuple(int(i) for i in ids)
    draft_vocab = raw.get("draft_vocab_size")
    return HeadConfig(
        algorithm=algorithm,
        model=model,
        target_hidden_size=target_hidden,
        aux_layer_ids=aux,
        draft_vocab_size=int(draft_vocab) if draft_vocab is not None else None,
        # EAGLE's fc is a default nn.Linear (bias); EAGLE3's has none unless the config says so.
        fc_bias=True if algorithm == "EAGLE" else bool(raw.get("bias", False)),
        fc_norm=bool(raw.get("fc_norm") or raw.get("use_aux_norm", False)),
        norm_before_fc=bool(eagle_config.get("norm_before_fc", raw.get("norm_before_fc", False))),
        norm_output=bool(raw.get("norm_output", False)),
    )


class EagleLayer(nn.Module):
    self_attn: Attention
    hidden_norm: RMSNorm
    input_layernorm: RMSNorm | None
    post_attention_layernorm: RMSNorm
    mlp: MLP

    def __init__(self, cfg: HeadConfig, index: int) -> None:
        super().__init__()
        m = cfg.model
        self.eagle3 = cfg.algorithm == "EAGLE3"
        self.self_attn = Attention(m)
        if self.eagle3:
            # q/k/v read cat(embed, hidden): twice the hidden size (llama_eagle3.py:62-75).
            for name, heads in (("q_proj", m.num_attention_heads), ("k_proj", m.num_key_value_heads), ("v_proj", m.num_key_value_heads)):
                setattr(self.self_attn, name, nn.Linear(2 * m.hidden_size, heads * m.head_dim, bias=False))
            self.hidden_norm = RMSNorm(m.hidden_size, m.rms_norm_eps)
        # EAGLE's first layer has no input_layernorm (llama_eagle.py:52-55).
        self.input_layernorm = RMSNorm(m.hidden_size, m.rms_norm_eps) if (self.eagle3 or index > 0) else None
        self.post_attention_layernorm = RMSNorm(m.hidden_size, m.rms_norm_eps)
        self.mlp = MLP(m)


@dataclass(frozen=True)
class Eagle3Weights:
    """What the EAGLE3 head's forward reads, gathered once the head is loaded and fused
    (:meth:`EagleHead.fuse`). A tiny head's forward is a few dozen small operators; reaching each
    weight through ``nn.Module`` attribute lookups and per-module forwards cost about an eighth
    of a 16-row draft step (40 of 320 us, measured on the tiny head)."""

    embed: torch.Tensor
    #: input_layernorm's and hidden_norm's weights ``[2, H]`` (theirs are views of it): both
    #: norms of the midlayer's input ``cat(embed, hidden)`` run as one
    pre_norm: torch.Tensor
    post_norm: torch.Tensor
    final_norm: torch.Tensor
    eps: float
    attention: Attention
    o_proj: torch.Tensor
    gate_up: torch.Tensor
    down: torch.Tensor
    lm_head: torch.Tensor


class EagleHead(nn.Module):
    def __init__(self, cfg: HeadConfig) -> None:
        super().__init__()
        m = cfg.model
        self.cfg = cfg
        num_aux = len(cfg.aux_layer_ids)
        fc_in = cfg.target_hidden_size * num_aux if cfg.algorithm == "EAGLE3" else 2 * m.hidden_size
        self.fc = nn.Linear(fc_in, m.hidden_size, bias=cfg.fc_bias)
        self.input_norm = RMSNorm(fc_in, m.rms_norm_eps) if cfg.norm_before_fc else None
        self.fc_norm = (
            nn.ModuleList([RMSNorm(cfg.target_hidden_size, m.rms_norm_eps) for _ in range(num_aux)])
            if cfg.fc_norm
            else None
        )
        self.layers = nn.ModuleList([EagleLayer(cfg, i) for i in range(m.num_hidden_layers)])
        self.norm = RMSNorm(m.hidden_size, m.rms_norm_eps) if cfg.algorithm == "EAGLE3" else None
        self.own_lm_head = cfg.algorithm == "EAGLE3" and not m.tie_word_embeddings and cfg.draft_vocab_size is not None
        self.lm_head = nn.Linear(m.hidden_size, cfg.draft_vocab_size or m.vocab_size, bias=False) if self.own_lm_head else None
        self.embed_weight: torch.Tensor | None = None  # the target's (or the head's own), set by the loader
        self.head_weight: torch.Tensor | None = None
        self.hot_token_ids: torch.Tensor | None = None  # draft vocabulary row -> target token id
        self.vocab_size = m.vocab_size
        self._cos = torch.empty(0)  # rope tables, built by setup_cache
        self._sin = torch.empty(0)
        self.max_len = 0
        self.rows = 0
        #: captured CUDA graphs of the draft step (graphs.GraphRunner); None: eager
        self.graphs: Any = None
        self.eagle3: Eagle3Weights | None = None  # set by fuse (EAGLE3)

    @property
    def head_layers(self) -> list[EagleLayer]:
        """The layers, typed (a ModuleList iterates as plain Modules); no copy."""
        return cast("list[EagleLayer]", self.layers)

    @property
    def device(self) -> torch.device:
        return self.fc.weight.device

    @property
    def dtype(self) -> torch.dtype:
        return self.fc.weight.dtype

    def setup_cache(self, max_len: int, rows: int = 1) -> None:
        """``rows`` request slots of ``max_len`` cache slots (see CausalLM.setup_cache)."""
        m = self.cfg.model
        if (max_len, rows) == (self.max_len, self.rows):
            return
        self.max_len, self.rows = max_len, rows
        for layer in self.head_layers:
            layer.self_attn.allocate(rows, max_len, self.dtype, self.device)
        self._cos, self._sin = rope_tables(m, max_len, self.dtype, self.device)

    def fuse(self) -> None:
        """Fused q/k/v and gate/up in every layer (as the target's); for EAGLE3, the midlayer's two
        input norms as one and the forward's weights gathered (:class:`Eagle3Weights`). After
        loading: the embeddings and the lm_head are set."""
        assert self.embed_weight is not None and self.head_weight is not None, "load_eagle_head shares them first"
        for layer in self.head_layers:
            layer.self_attn.fuse()
            layer.mlp.fuse()
        if self.norm is None:
            return
        layer = self.head_layers[0]
        assert layer.input_layernorm is not None and layer.mlp._w_gate_up is not None  # EAGLE3's midlayer, fused
        norms = (layer.input_layernorm, layer.hidden_norm)
        pre_norm = torch.stack([norm.weight.detach() for norm in norms])
        for norm, weight in zip(norms, pre_norm):
            norm.weight = nn.Parameter(weight, requires_grad=False)
        self.eagle3 = Eagle3Weights(
            embed=self.embed_weight,
            pre_norm=pre_norm,
            post_norm=layer.post_attention_layernorm.weight,
            final_norm=self.norm.weight,
            eps=self.norm.eps,
            attention=layer.self_attn,
            o_proj=layer.self_attn.o_proj.weight,
            gate_up=layer.mlp._w_gate_up,
            down=layer.mlp.down_proj.weight,
            lm_head=self.head_weight,
        )

    def bind_row(self, row: int) -> None:
        for layer in self.head_layers:
            layer.self_attn.cache.bind(row)

    def chain_placements(self, rows: list[int], starts: list[int], steps: int) -> list[TokensPerRow]:
        """A batched draft chain's steps in this head's cache (see model.chain_placements)."""
        cache = (self.cfg.model.num_key_value_heads, self.max_len)
        return chain_placements(rows, starts, steps, cache, self.dtype, self.device)

    def project(self, aux: torch.Tensor) -> torch.Tensor:
        """The target's concatenated aux hidden states -> the head's hidden size (EAGLE3's fc)."""
        if self.input_norm is not None:
            aux = self.input_norm.forward(aux)
        if self.fc_norm is not None:
            chunks = aux.chunk(len(self.fc_norm), dim=-1)
            aux = torch.cat([norm.forward(c) for norm, c in zip(self.fc_norm, chunks)], dim=-1)
        return F.linear(aux, self.fc.weight, self.fc.bias)

    def forward(  # type: ignore[override]
        self,
        tokens: torch.Tensor,
        hidden: torch.Tensor,
        positions: torch.Tensor | None,
        start: int,
        mask: torch.Tensor | None = None,
        from_target: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits ``[T, draft vocabulary]``, hidden state for the next step ``[T, H]``); draft row
        ``i`` is target token ``hot_token_ids[i]`` (identity without ``d2t``): see :meth:`full_vocab`.

        ``hidden`` is the target's (``from_target``: EAGLE3 projects it with ``fc``) or the
        head's own output of the previous step.
        """
        t = tokens.shape[0]
        if start + t > self.max_len:
            raise ValueError(f"KV cache overflow: {start + t} > {self.max_len}")
        where = OneRow(start, attention_bias(mask, start, t, self.dtype, self.device))
        if positions is None:
            cos, sin = self._cos[start : start + t], self._sin[start : start + t]
        else:
            cos, sin = self._cos[positions], self._sin[positions]
        return self._body(tokens, hidden, cos, sin, where, from_target)

    def run_rows(
        self,
        tokens: torch.Tensor,
        hidden: torch.Tensor,
        positions: torch.Tensor,
        where: TokensPerRow,
        from_target: bool = False,
        last: list[int] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """A ragged batch (``tokens`` ``[B, T]``, ``hidden`` ``[B, T, *]``, see CausalLM.run_rows);
        (logits ``[B, T, V']``, hidden ``[B, T, H]``). With ``last`` (row ``b``'s last real token's
        index, the draft extend): only those tokens' (logits ``[B, V']``, hidden ``[B, H]``), the
        others only write their keys and values."""
        b, t = tokens.shape
        if where.span > self.max_len:
            raise ValueError(f"KV cache overflow: {where.span} > {self.max_len}")
        if self.graphs is not None and not from_target and last is None:
            graphed = self.graphs.run(tokens, positions, where, hidden)
            if graphed is not None and graphed[1] is not None:
                return graphed[0], graphed[1]
        flat = positions.reshape(-1)
        keep = None if last is None else torch.tensor(last, device=tokens.device) + torch.arange(0, b * t, t, device=tokens.device)
        logits, out = self._body(
            tokens.reshape(-1), hidden.reshape(b * t, -1), self._cos[flat], self._sin[flat], where, from_target, keep
        )
        if keep is not None:
            return logits, out
        return logits.view(b, t, -1), out.view(b, t, -1)

    def static_forward(
        self, tokens: torch.Tensor, positions: torch.Tensor, where: TokensPerRow, hidden: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """A draft step with shapes that depend only on the batch (what a CUDA graph records)."""
        assert hidden is not None
        b, t = tokens.shape
        flat = positions.reshape(-1)
        logits, out = self._body(tokens.reshape(-1), hidden.reshape(b * t, -1), self._cos[flat], self._sin[flat], where, False)
        return logits.view(b, t, -1), out.view(b, t, -1)

    def _body(
        self,
        tokens: torch.Tensor,
        hidden: torch.Tensor,
        cos: torch.Tensor,
        sin: torch.Tensor,
        where: Placement,
        from_target: bool,
        keep: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The head's one forward; ``keep``: the tokens whose logits and hidden state are wanted
        (None: all), the final norm and the lm_head run on those only."""
        if self.norm is not None:  # EAGLE3: one midlayer
            w = self.eagle3
            assert w is not None, "load_eagle_head fuses the head first"
            residual = self.project(hidden) if from_target else hidden
            n, h = residual.shape
            both = torch.cat([F.embedding(tokens, w.embed), residual], dim=-1).view(n, 2, h)
            q, k, v = w.attention.qkv(rms_norm(both, w.pre_norm, w.eps).view(n, 2 * h), cos, sin)
            # past the attention, only the kept tokens (every token's keys and values are written)
            x = (residual if keep is None else residual[keep]) + F.linear(w.attention.attend(q, k, v, where, keep), w.o_proj)
            gate, up = F.linear(rms_norm(x, w.post_norm, w.eps), w.gate_up).chunk(2, dim=-1)
            x = x + F.linear(F.silu(gate) * up, w.down)
            normed = rms_norm(x, w.final_norm, w.eps)
            next_hidden = normed if self.cfg.norm_output else x
            return F.linear(normed, w.lm_head).float(), next_hidden
        # EAGLE
        assert self.embed_weight is not None and self.head_weight is not None, "load_eagle_head shares them first"
        x = F.linear(torch.cat([F.embedding(tokens, self.embed_weight), hidden], dim=-1), self.fc.weight, self.fc.bias)
        for layer in self.head_layers:
            attn_in = x if layer.input_layernorm is None else layer.input_layernorm.forward(x)
            x = x + layer.self_attn.forward(attn_in, cos, sin, where)
            x = x + layer.mlp.forward(layer.post_attention_layernorm.forward(x))
        out = x if keep is None else x[keep]
        return F.linear(out, self.head_weight).float(), out

    def full_vocab(self, logits: torch.Tensor) -> torch.Tensor:
        """Draft-vocabulary logits spread over the target's vocabulary (-inf where the head cannot draft)."""
        if self.hot_token_ids is None:
            return logits
        full = torch.full((*logits.shape[:-1], self.vocab_size), float("-inf"), device=logits.device)
        return full.index_copy_(-1, self.hot_token_ids, logits)


def _read_tensors(draft_dir: Path) -> dict[str, torch.Tensor]:
    """All tensors of a safetensors (single or sharded) or ``pytorch_model.bin`` checkpoint."""
    from specguard.runtime.loader import _weight_files, read_safetensors, read_torch_bin

    bins = sorted(draft_dir.glob("pytorch_model*.bin"))
    tensors: dict[str, torch.Tensor] = {}
    if bins and not list(draft_dir.glob("*.safetensors")):
        for path in bins:
            tensors.update(read_torch_bin(path))
        return tensors
    for path in _weight_files(draft_dir):
        tensors.update(read_safetensors(path))
    return tensors


def _module_name(key: str) -> str:
    name = key.removeprefix("model.")
    for legacy, new in _LEGACY_NAMES.items():
        if name.startswith(legacy):
            name = new + name[len(legacy) :]
    return name


def load_eagle_head(draft_dir: Path | str, target: CausalLM) -> EagleHead:
    """Load an EAGLE / EAGLE3 head for ``target`` (on its device and dtype) and set the target's aux layers."""
    draft_dir = Path(draft_dir)
    path = draft_dir / "config.json"
    if not path.is_file():
        raise CheckpointError(f"{path} is missing; expected an EAGLE head checkpoint directory")
    try:
        raw = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise CheckpointError(f"{path} is not valid JSON ({exc})") from None
    cfg = parse_head_config(raw, target.config, str(path))
    with torch.device("meta"):
        head = EagleHead(cfg)
    expected = dict(head.state_dict())
    tensors: dict[str, torch.Tensor] = {}
    d2t: torch.Tensor | None = None
    own_embed: torch.Tensor | None = None
    for key, tensor in _read_tensors(draft_dir).items():
        name = _module_name(key)
        if name == "d2t":
            d2t = tensor
        elif name == "embed_tokens.weight":
            own_embed = tensor
        elif name in expected:
            tensors[name] = tensor
    missing = sorted(set(expected) - tensors.keys())
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise CheckpointError(f"{draft_dir}: EAGLE head is partial, tensor {missing[0]!r} is missing{more}")
    for name, tensor in tensors.items():
        if tuple(expected[name].shape) != tuple(tensor.shape):
            raise CheckpointError(
                f"{draft_dir}: tensor {name!r} has shape {tuple(tensor.shape)}, config implies {tuple(expected[name].shape)}"
            )
    device, dtype = target.device, target.dtype
    head = head.to_empty(device=device)
    head.load_state_dict({k: v.to(dtype) for k, v in tensors.items()}, strict=True, assign=True)
    head = head.to(device=device, dtype=dtype).eval()
    m = cfg.model
    # SGLang shares the target's embeddings unless the head's hidden size differs (llama.py:910-918).
    if m.hidden_size == target.config.hidden_size:
        head.embed_weight = target.model.embed_tokens.weight
    elif own_embed is not None:
        head.embed_weight = own_embed.to(device=device, dtype=dtype)
    else:
        raise CheckpointError(f"{draft_dir}: EAGLE head is partial, tensor 'embed_tokens.weight' is missing")
    if head.lm_head is not None:
        head.head_weight = head.lm_head.weight
        rows = head.lm_head.weight.shape[0]
        if d2t is not None:
            if tuple(d2t.shape) != (rows,):
                raise CheckpointError(f"{draft_dir}: d2t has shape {tuple(d2t.shape)}, lm_head has {rows} rows")
            hot = d2t.long() + torch.arange(rows)
            if int(hot.min()) < 0 or int(hot.max()) >= m.vocab_size:
                raise CheckpointError(f"{draft_dir}: d2t maps draft tokens outside the target vocabulary")
            head.hot_token_ids = hot.to(device)
        elif rows != m.vocab_size:
            raise CheckpointError(
                f"{draft_dir}: EAGLE head is partial, tensor 'd2t' is missing (draft_vocab_size {rows} < vocab_size)"
            )
    elif m.tie_word_embeddings and cfg.algorithm == "EAGLE3":
        head.head_weight = head.embed_weight
    else:  # EAGLE, and EAGLE3 without draft_vocab_size: the target's lm_head
        head.head_weight = target.lm_head.weight
    for p in head.parameters():
        p.requires_grad_(False)
    head.fuse()
    target.aux_layer_ids = cfg.aux_layer_ids
    return head

