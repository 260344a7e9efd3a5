"""Predict the values SGLang will actually run with.

SGLang fills in and rewrites speculative settings during argument resolution
(``sglang/srt/arg_groups/*_hook.py`` in 0.5.23; ``server_args.py`` before the refactor).
``resolve`` mirrors those steps as data, each value with the step that set it, so ``check`` can
show them before launch and every rule reads one decision (``ctx.resolution``). One module per
concern, as SGLang splits its hooks:

- ``speculative``: the draft path, steps / topk / draft tokens (auto, adaptive, NGRAM, DFLASH),
  the max running requests reset;
- ``backends``: the attention backends and the KV page size;
- ``cuda_graph``: the decode CUDA-graph batch sizes and the GPU-memory settings;
- ``overlap``: the overlap scheduler (SpecV2) and mixed chunked prefill;
- ``parallel``: the attention-DP width;
- ``sgl_jax``: the sgl-jax dialect's own defaults;
- ``pipeline``: ``resolve``, the steps in SGLang's order.

SGLang's defaults are in ``specguard.sglang_facts.defaults`` and its version boundaries in
``specguard.sglang_facts.changes``. Memory imports this package; this package never imports
memory. The catalogue IDs (P14, P17, ...) refer to ``shared/design/sglang-spec-checks.md``.
"""

from __future__ import annotations

from specguard.resolution.backends import default_backend
from specguard.resolution.common import canonical_algorithm
from specguard.resolution.parallel import attention_dp_size
from specguard.resolution.pipeline import resolve
from specguard.resolution.result import Resolution
from specguard.resolution.speculative import MTP_TARGET_ARCHITECTURES

# The name the rule engine (``rules/base.py``) and the parity tests call it by.
predict = resolve

__all__ = [
    "MTP_TARGET_ARCHITECTURES",
    "Resolution",
    "attention_dp_size",
    "canonical_algorithm",
    "default_backend",
    "predict",
    "resolve",
]
