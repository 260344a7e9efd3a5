"""Helpers for the runtime tests: small checkpoints on disk and a real server on loopback."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import torch
from safetensors.torch import save_file

from specguard.runtime.config import parse_config
from specguard.runtime.model import CausalLM

# Where the runtime's tests load their models: cpu here and in CI; scripts/gpu_check.sh sets cuda.
DEVICE = os.environ.get("SPECGUARD_TEST_DEVICE", "cpu")

REPO = Path(__file__).resolve().parents[2]


def llama_config(
    vocab: int = 64, hidden: int = 32, layers: int = 2, heads: int = 4, kv_heads: int = 2, **extra: Any
) -> dict:
    cfg = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": hidden,
        "intermediate_size": hidden * 2,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "rms_norm_eps": 1e-6,
        "max_position_embeddings": 256,
        "vocab_size": vocab,
        "tie_word_embeddings": False,
        "rope_theta": 10000.0,
        "eos_token_id": 1,
        "bos_token_id": 0,
    }
    cfg.update(extra)
    return cfg


def random_model(cfg: dict, seed: int = 0, std: float = 0.3) -> CausalLM:
    torch.manual_seed(seed)
    model = CausalLM(parse_config(cfg))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.fill_(1.0)
            else:
                p.normal_(0.0, std)
    return model.eval()


def write_checkpoint(out: Path, cfg: dict, model: CausalLM, shards: int = 1, drop: tuple[str, ...] = ()) -> Path:
    """Write ``model`` in Hugging Face layout (single file or a sharded index)."""
    out.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().clone().contiguous() for k, v in model.state_dict().items()}
    if cfg.get("tie_word_embeddings"):
        state.pop("lm_head.weight")
    for key in drop:
        state.pop(key)
    (out / "config.json").write_text(json.dumps(cfg))
    if shards == 1:
        save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
        return out
    keys = sorted(state)
    weight_map = {}
    for i in range(shards):
        name = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
        part = {k: state[k] for k in keys[i::shards]}
        save_file(part, str(out / name), metadata={"format": "pt"})
        weight_map.update({k: name for k in part})
    (out / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``python -m specguard.runtime`` as a subprocess in its own process group, log captured."""

    def __init__(self, args: list[str], api_key: str | None = None) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "specguard.runtime", "--port", str(self.port), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=REPO,
            env=env,
            start_new_session=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def log(self) -> str:
        return "\n".join(self.lines)

    def wait_ready(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.log}")
            if any("The server is fired up and ready to roll!" in line for line in self.lines):
                return
            time.sleep(0.1)
        raise TimeoutError(f"server not ready after {timeout} s:\n{self.log}")

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.base, headers=self.headers, timeout=120.0, **kwargs)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=15)
        self._reader.join(timeout=5)
