"""Measure what a draft gets accepted: accept length and per-position acceptance over a grid of
speculative settings, on the user's prompts, with the runtime's own lossless decoder.

Acceptance depends on the models, the prompts and the sampling, not on the hardware: greedy
acceptance measured here on CPU is what a GPU running the same decoder accepts. Rounds are
counted the way the server counts them (``engine.Engine._serve``): every verify pass until the
request has ``max_new_tokens`` tokens, the last one counted in full; so the figures equal the
server's ``spec_verify_ct`` and ``spec_num_correct_drafts`` for the same prompts.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from specguard.runtime.config import load_config
from specguard.runtime.eagle import EagleHead
from specguard.runtime.errors import CheckpointError, RequestError
from specguard.runtime.flags import EAGLE_HEAD_ARCHITECTURES, max_draft_tokens
from specguard.runtime.loader import load_model
from specguard.runtime.model import CausalLM
from specguard.runtime.speculative import Decoder, SamplingParams, SpecConfig
from specguard.runtime.tokenizer import Tokenizer
from specguard.sglang_facts.algorithms import EAGLE_HEAD_ALGORITHMS

#: a prompts file holds text for a few hundred requests; far more is not a prompts file
MAX_PROMPTS_BYTES = 64 * 1024 * 1024
#: used when no --prompts file is given: short, generic, and varied (code, prose, lists, chat)
DEFAULT_PROMPTS = (
    "def fibonacci(n):\n",
    "Write a short story about a lighthouse keeper.",
    "List the first ten prime numbers.",
    "class Stack:\n    def __init__(self):\n",
    "Explain how a hash table works.",
    "import json\n\ndef load(path):\n",
)


@dataclass(frozen=True)
class Setting:
    num_steps: int
    topk: int
    num_draft_tokens: int

    @property
    def label(self) -> str:
        return f"steps {self.num_steps} topk {self.topk} draft {self.num_draft_tokens}"


@dataclass
class Measurement:
    setting: Setting
    verify_ct: int = 0
    correct_drafts: int = 0
    output_tokens: int = 0
    histogram: list[int] = field(default_factory=list)  # rounds by number of accepted drafts
    prompts: int = 0
    seconds: float = 0.0

    @property
    def accept_length(self) -> float:
        """Tokens committed per target verify pass: accepted drafts plus the target's bonus token."""
        return (self.correct_drafts + self.verify_ct) / self.verify_ct if self.verify_ct else 0.0

    @property
    def position_acceptance(self) -> list[float]:
        """Share of rounds whose draft at depth ``i`` (1-based) was accepted."""
        total = sum(self.histogram)
        if not total:
            return []
        return [sum(self.histogram[i:]) / total for i in range(1, len(self.histogram))]

    @property
    def conditional_acceptance(self) -> list[float]:
        """Acceptance at depth ``i`` given depth ``i - 1`` was accepted (the per-position rate)."""
        reached = [sum(self.histogram)] + [sum(self.histogram[i:]) for i in range(1, len(self.histogram))]
        return [reached[i] / reached[i - 1] if reached[i - 1] else 0.0 for i in range(1, len(reached))]

    def as_dict(self) -> dict:
        return {
            "num_steps": self.setting.num_steps,
            "topk": self.setting.topk,
            "num_draft_tokens": self.setting.num_draft_tokens,
            "prompts": self.prompts,
            "verify_ct": self.verify_ct,
            "correct_drafts": self.correct_drafts,
            "output_tokens": self.output_tokens,
            "accept_length": round(self.accept_length, 4),
            "position_acceptance": [round(x, 4) for x in self.position_acceptance],
            "conditional_acceptance": [round(x, 4) for x in self.conditional_acceptance],
            "histogram": self.histogram,
            "seconds": round(self.seconds, 3),
        }


def detect_algorithm(draft: str | None) -> str:
    """NGRAM without a draft; EAGLE/EAGLE3 for a head's config; STANDALONE for any other model."""
    if draft is None:
        return "NGRAM"
    try:
        architectures = json.loads((Path(draft) / "config.json").read_text()).get("architectures") or []
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"--draft {draft}: cannot read its config.json ({exc})") from None
    for arch in architectures:
        if arch in EAGLE_HEAD_ARCHITECTURES:
            return EAGLE_HEAD_ARCHITECTURES[arch]
    return "STANDALONE"


def settings_grid(algorithm: str, steps: list[int], topks: list[int], draft_tokens: list[int]) -> list[Setting]:
    """Every valid combination: chains (topk 1) draft ``steps + 1`` tokens as SGLang forces; trees
    keep the ``draft_tokens`` their capacity allows; NGRAM reads ``topk`` as its BFS breadth."""
    out: list[Setting] = []
    if algorithm == "NGRAM":
        for k in topks:
            for n in draft_tokens or [12]:
                if n >= 2:
                    out.append(Setting(max(1, n // k), k, n))
        return out
    for s in steps:
        for k in topks:
            if s < 1 or k < 1:
                continue
            if k == 1:
                out.append(Setting(s, 1, s + 1))
                continue
            for n in draft_tokens or [8]:
                if 2 <= n <= max_draft_tokens(s, k):
                    out.append(Setting(s, k, n))
    return sorted(set(out), key=lambda x: (x.topk, x.num_steps, x.num_draft_tokens))


def spec_config(algorithm: str, setting: Setting) -> SpecConfig:
    if algorithm == "NGRAM":
        return SpecConfig("NGRAM", setting.num_steps, setting.topk, setting.num_draft_tokens, ngram_max_bfs_breadth=setting.topk)
    return SpecConfig(algorithm, setting.num_steps, setting.topk, setting.num_draft_tokens)


@dataclass
class LoadedPair:
    algorithm: str
    target: CausalLM
    draft: CausalLM | EagleHead | None
    tokenizer: Tokenizer
    max_len: int = 0

    def setup(self, max_len: int, max_spec_tokens: int) -> None:
        self.target.setup_cache(max_len + max_spec_tokens + 2)
        if self.draft is not None:
            self.draft.setup_cache(max_len + max_spec_tokens + 2)
        self.max_len = max_len


def load_pair(target: str, draft: str | None, algorithm: str, device: str = "cpu", dtype: str | None = None) -> LoadedPair:
    from specguard.runtime.eagle import load_eagle_head

    target_model = load_model(target, dtype, device)
    draft_model: CausalLM | EagleHead | None = None
    if algorithm in EAGLE_HEAD_ALGORITHMS:
        head = load_eagle_head(Path(str(draft)), target_model)
        if head.cfg.algorithm != algorithm:
            raise CheckpointError(f"--draft {draft} is an {head.cfg.algorithm} head, not {algorithm}")
        draft_model = head
    elif algorithm == "STANDALONE":
        if load_config(Path(str(draft))).vocab_size != target_model.config.vocab_size:
            raise CheckpointError(f"--draft {draft}: its vocabulary differs from the target's; STANDALONE needs the same tokenizer")
        draft_model = load_model(str(draft), dtype, device)
    return LoadedPair(algorithm, target_model, draft_model, Tokenizer(target))


def read_prompts(path: Path | None, tokenizer: Tokenizer) -> list[str]:
    """JSONL (one object a line with ``prompt``, ``text`` or chat ``messages``) or plain text
    (prompts separated by blank lines); the default set without a file. The file is the user's
    text: read bounded (``MAX_PROMPTS_BYTES``, a regular UTF-8 file) and each line parsed strictly,
    every problem one line naming ``--prompts FILE:LINE``."""
    if path is None:
        return list(DEFAULT_PROMPTS)
    from specguard.errors import InputError
    from specguard.json_input import parse_json
    from specguard.text_input import read_text_bounded

    hint = "give JSONL (a string, or an object with prompt, text or messages, per line) or text with prompts separated by blank lines"
    raw = read_text_bounded(path, f"--prompts {path}", limit=MAX_PROMPTS_BYTES, hint=hint)
    prompts: list[str] = []
    if path.suffix in (".jsonl", ".json"):
        for number, line in enumerate(raw.splitlines(), 1):
            if not line.strip():
                continue
            where = f"--prompts {path}:{number}"
            item = parse_json(line, where, hint=hint)
            if isinstance(item, str):
                prompts.append(item)
            elif isinstance(item, dict) and "messages" in item:
                prompts.append(_chat_prompt(item["messages"], tokenizer, where, hint))
            elif isinstance(item, dict) and isinstance(item.get("prompt", item.get("text")), str):
                prompts.append(str(item.get("prompt", item.get("text"))))
            else:
                raise InputError(f"{where}: expected a string or an object with prompt, text or messages", hint=hint)
    else:
        prompts = [p.strip("\n") for p in raw.split("\n\n") if p.strip()]
    if not prompts:
        raise InputError(f"--prompts {path}: no prompts in the file", hint=hint)
    return prompts


def _chat_prompt(messages: object, tokenizer: Tokenizer, where: str, hint: str) -> str:
    """A chat line rendered with the model's template: the messages checked first, since a
    template given other shapes fails inside jinja with nothing to name the line."""
    from specguard.errors import InputError

    shaped = isinstance(messages, list) and messages and all(
        isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str) for m in messages
    )
    if not shaped:
        raise InputError(f"{where}: messages is not a list of {{\"role\": ..., \"content\": ...}} objects with string values", hint=hint)
    try:
        return tokenizer.apply_chat_template(messages)  # type: ignore[arg-type]
    except RequestError as error:
        raise InputError(f"{where}: {error}", hint="give prompt or text lines for a model without a chat template") from None


def measure(
    pair: LoadedPair,
    setting: Setting,
    prompt_ids: list[list[int]],
    max_new_tokens: int,
    temperature: float = 0.0,
    seed: int = 0,
    on_prompt: Callable[[], None] | None = None,
) -> Measurement:
    """Decode every prompt with ``setting``; count verify passes and accepted drafts like the server."""
    spec = spec_config(pair.algorithm, setting)
    decoder = Decoder(pair.target, spec, pair.draft, seed=seed)  # type: ignore[arg-type]
    # a chain or an EAGLE tree is at most num_steps deep; an NGRAM trie path up to every draft token
    depth = setting.num_draft_tokens - 1 if pair.algorithm == "NGRAM" else min(setting.num_steps, setting.num_draft_tokens - 1)
    result = Measurement(setting, histogram=[0] * (depth + 1))
    began = time.perf_counter()
    for index, ids in enumerate(prompt_ids):
        params = SamplingParams(max_new_tokens=max_new_tokens, temperature=temperature, seed=seed + index)
        produced = 0
        for round_ in decoder.decode(ids, params):
            if round_.accepted_drafts is not None:
                result.verify_ct += 1
                result.correct_drafts += round_.accepted_drafts
                result.histogram[min(round_.accepted_drafts, len(result.histogram) - 1)] += 1
            produced += len(round_.tokens)
            if produced >= max_new_tokens:
                break
        result.output_tokens += min(produced, max_new_tokens)
        result.prompts += 1
        if on_prompt is not None:
            on_prompt()
    result.seconds = time.perf_counter() - began
    return result


def seconds_per_forward(pair: LoadedPair, prompt_ids: list[list[int]]) -> float:
    """One decode forward of the target, timed after a warm-up (for the up-front time estimate)."""
    ids = torch.tensor(prompt_ids[0][: max(1, pair.max_len // 2)], device=pair.target.device)
    with torch.inference_mode():
        pair.target(ids, None, 0, last_only=True)
        began = time.perf_counter()
        for step in range(3):
            pair.target(ids[-1:], None, len(ids) + step)
        if ids.device.type == "cuda":
            torch.cuda.synchronize()
    return (time.perf_counter() - began) / 3


@dataclass(frozen=True)
class ForwardCost:
    """What one forward of a model reads and computes, for the roofline (counted from the loaded weights)."""

    weight_params: int  # parameters a forward reads (input embeddings excluded: a lookup reads a few rows)
    matmul_params: int  # parameters in matmuls (2 FLOPs each per token)
    kv_values_per_token: int  # cached key and value numbers per token, all layers
    layers: int
    attention_width: int  # query heads x head dim

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def forward_cost(model: CausalLM | EagleHead) -> ForwardCost:
    if isinstance(model, EagleHead):
        m = model.cfg.model
        params = sum(p.numel() for n, p in model.named_parameters())
        if model.lm_head is None and model.head_weight is not None:  # EAGLE, or EAGLE3 on the target's lm_head
            params += model.head_weight.numel()
        layers = len(model.layers)
    else:
        m = model.config
        params = sum(p.numel() for n, p in model.named_parameters() if "embed_tokens" not in n)
        if m.tie_word_embeddings:  # the tied matrix is read as the lm_head
            params += model.lm_head.weight.numel()
        layers = m.num_hidden_layers
    norms = sum(p.numel() for n, p in model.named_parameters() if "norm" in n)
    return ForwardCost(
        weight_params=params,
        matmul_params=params - norms,
        kv_values_per_token=2 * layers * m.num_key_value_heads * m.head_dim,
        layers=layers,
        attention_width=m.num_attention_heads * m.head_dim,
    )
