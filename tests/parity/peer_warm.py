#!/usr/bin/env python3
"""Run tests/parity/peer/sglang_peer.py with more of SGLang imported before the fork.

Runs inside the SGLang venv, exactly like sglang_peer.py (same arguments, same output). The
peer imports the modules every case needs before it forks one child per case; argument
resolution then imports about 140 more modules lazily (every ``arg_groups/*_hook.py``, the
model loader, the KV-cache kernels, ...), which costs each forked child ~0.9 s. Importing them
once in the parent brings a case down to ~0.3 s. Nothing else changes: each case still runs in
a fresh fork of the same post-import state, and no case runs in the parent.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "peer"))

import sglang_peer

EXTRA_MODULES = (
    "sglang.srt.model_loader",
    "sglang.srt.mem_cache",
    "sglang.srt.layers.cp",
    "sglang.srt.layers.layer_boundary",
    "sglang.srt.layers.layernorm",
    "sglang.srt.layers.attention.dsa",
    "sglang.srt.layers.attention.linear",
    "sglang.srt.layers.aux_hidden_states",
    "sglang.srt.layers.radix_linear_attention",
    "sglang.srt.configs.load_config",
    "sglang.srt.configs.modelopt_config",
    "sglang.srt.configs.moe_model_registry",
    "sglang.srt.function_call",
    "sglang.srt.parser",
    "sglang.srt.speculative.ragged_verify",
    "sglang.srt.utils.async_probe",
    "sglang.srt.utils.torch_memory_saver_adapter",
    "sglang.srt.speculative.adaptive_spec_params",
    "huggingface_hub.hf_file_system",
    "transformers.models.qwen2.configuration_qwen2",
)


def _warm() -> None:
    sglang_peer_preimport()
    import sglang.srt.arg_groups as groups

    for info in pkgutil.iter_modules(groups.__path__):
        try:
            importlib.import_module(f"sglang.srt.arg_groups.{info.name}")
        except Exception:
            pass
    for name in EXTRA_MODULES:
        try:
            importlib.import_module(name)
        except Exception:
            pass


sglang_peer_preimport = sglang_peer._preimport
sglang_peer._preimport = _warm

if __name__ == "__main__":
    sys.exit(sglang_peer.main())
