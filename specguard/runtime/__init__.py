"""specguard's bundled reference runtime: lossless speculative decoding in pure PyTorch.

It loads Llama / Qwen2 / Qwen3 Hugging Face checkpoints and EAGLE / EAGLE3 heads, runs
STANDALONE (draft-model chain or tree), EAGLE, EAGLE3 and NGRAM speculative decoding on CPU or CUDA, and serves SGLang 0.5.23's HTTP
endpoints, so that a supervisor or benchmark written for SGLang works unchanged against it.
Running requests advance together, one step each per scheduler iteration (plain decode steps
batched in one forward, speculative rounds taken in turn); ``--scheduler queued`` serves them
one at a time instead.

Public entry points (stable names):

* ``python -m specguard.runtime [SGLang-style flags]``: the server
  (``--model-path``, ``--speculative-algorithm STANDALONE|NGRAM|EAGLE|EAGLE3``, ... see
  :mod:`specguard.runtime.flags` and ``README.md`` in this directory).
* :data:`specguard.runtime.SUPPORTED_ALGORITHMS` (re-exported from
  :mod:`specguard.runtime.flags`), with :data:`specguard.runtime.flags.SUPPORTED_FLAGS`,
  :data:`specguard.runtime.flags.GPU_ONLY_IGNORED_FLAGS`,
  :data:`specguard.runtime.flags.REFUSED_FLAGS` (a set of flags) and
  :func:`specguard.runtime.flags.parse_flags`, for the launcher to decide whether
  ``--runtime reference`` can run a configuration.
* :func:`specguard.runtime.tiny.ensure_tiny_pair` ``(cache_dir: Path | None = None) -> TinyPair``:
  paths (``.target``, ``.draft``) of the project's tiny Llama pair in Hugging Face layout,
  built deterministically on first use into ``$SPECGUARD_CACHE_DIR`` or
  ``~/.cache/specguard``, under ``tiny-<recipe-hash>/``; and its CLI
  ``python -m specguard.runtime.tiny [--out DIR]``; and
  :func:`specguard.runtime.tiny.ensure_tiny_eagle3` (``.target``, ``.draft`` = the tiny EAGLE3 head;
  the target is built alone, under ``tiny-target-<recipe-hash>/``, unless the pair is built), and
  :func:`specguard.runtime.tiny.ensure_tiny_target` (the target alone).

Importing this package (and :mod:`specguard.runtime.flags`, :mod:`specguard.runtime.tiny`)
does not import torch; the model, decoder and server modules do.
"""

from specguard.runtime.flags import (
    GPU_ONLY_IGNORED_FLAGS,
    REFUSED_ALGORITHMS,
    REFUSED_FLAGS,
    SUPPORTED_ALGORITHMS,
    SUPPORTED_FLAGS,
)

__all__ = [
    "GPU_ONLY_IGNORED_FLAGS",
    "REFUSED_ALGORITHMS",
    "REFUSED_FLAGS",
    "SUPPORTED_ALGORITHMS",
    "SUPPORTED_FLAGS",
]
