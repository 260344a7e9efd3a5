"""A generation request as the server hands it to the scheduler: the input, its sampling
parameters, the checks it must pass before it is queued, and its priority. Torch-free: the
server's process (HTTP, tokenizer) imports it without loading torch, which only the scheduler's
process needs."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from specguard.runtime.errors import RequestError

GREEDY_EPS = 1e-6


@dataclass(frozen=True)
class SamplingParams:
    max_new_tokens: int = 128
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    min_p: float = 0.0
    seed: int | None = None

    @property
    def greedy(self) -> bool:
        return self.temperature < GREEDY_EPS or self.top_k == 1


@dataclass
class GenerateInput:
    input_ids: list[int]
    sampling: SamplingParams
    stop: list[str] = field(default_factory=list)
    stop_token_ids: list[int] = field(default_factory=list)
    ignore_eos: bool = False
    min_new_tokens: int = 0
    stream: bool = False
    rid: str | None = None


def validate_input(inp: GenerateInput, context_length: int, vocab_size: int) -> None:
    """Refuse a request the scheduler cannot serve (RequestError, an HTTP 400), before it is queued."""
    n = len(inp.input_ids)
    if n == 0:
        raise RequestError("the prompt is empty")
    if n >= context_length:
        raise RequestError(
            f"The input ({n} tokens) is longer than the model's context length ({context_length} tokens)."
        )
    bad = next((t for t in inp.input_ids if not 0 <= t < vocab_size), None)
    if bad is not None:
        raise RequestError(f"input_ids contains token id {bad}, outside the vocabulary (0..{vocab_size - 1})")
    if inp.sampling.max_new_tokens < 0:
        raise RequestError("max_new_tokens must be non-negative")
    # The bounds SGLang's SamplingParams.verify enforces (0.5.23 sampling/sampling_params.py:255-311).
    sampling = inp.sampling
    if not math.isfinite(sampling.temperature) or sampling.temperature < 0:
        raise RequestError("temperature must be a non-negative number")
    if not (math.isfinite(sampling.top_p) and 0 < sampling.top_p <= 1):
        raise RequestError("top_p must be in (0, 1]")
    if not (math.isfinite(sampling.min_p) and 0 <= sampling.min_p <= 1):
        raise RequestError("min_p must be in [0, 1]")
    if sampling.top_k == 0 or sampling.top_k < -1:
        raise RequestError("top_k must be -1 (off) or at least 1")
    if sampling.seed is not None and not -(1 << 63) <= sampling.seed < 1 << 63:
        raise RequestError("seed must be in [-2**63, 2**63 - 1]")


#: the scheduler's queue order: health checks ahead of requests (a busy server never looks dead to
#: whoever supervises it), requests in arrival order, the stop sentinel last
PRIORITY_HEALTH, PRIORITY_REQUEST, PRIORITY_STOP = 0, 1, 2
