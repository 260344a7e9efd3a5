"""Shared test helpers: where the fixtures are, and running the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
HF_CONFIGS = SHARED / "fixtures" / "hf-configs"
DRAFT_TEMPLATES = SHARED / "fixtures" / "draft-templates"


# A clone of github.com/THUDM/slime, for the tests that read slime's history or run its scripts;
# they skip, saying so, without one.
SLIME_CLONE = Path(os.environ["SPECGUARD_SLIME_REPO"]) if os.environ.get("SPECGUARD_SLIME_REPO") else None
NO_SLIME_CLONE = "no clone of THUDM/slime given (set SPECGUARD_SLIME_REPO to one)"


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``python -m specguard ARGS`` as a user would, with a clean, offline environment."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_", "SGL_", "HF_"))}
    base.update({"HF_HUB_OFFLINE": "1", "NO_COLOR": "1", "COLUMNS": "200"})
    base.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "specguard", *args],
        capture_output=True,
        text=True,
        env=base,
        cwd=cwd or REPO,
        timeout=timeout,
    )


def run_cli_json(*args: str, **kwargs) -> tuple[int, dict]:
    result = run_cli(*args, "--format", "json", **kwargs) if "--" not in args else run_cli(*_json_before_dashdash(args), **kwargs)
    return result.returncode, json.loads(result.stdout)


def _json_before_dashdash(args: tuple[str, ...]) -> list[str]:
    index = args.index("--")
    return [*args[:index], "--format", "json", *args[index:]]


def model_dir(tmp_path: Path, name: str, config: dict) -> Path:
    """A config.json-only model directory (SGLang and specguard read nothing else at check time)."""
    directory = tmp_path / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return directory


def load_fixture(relative: str) -> dict:
    base = HF_CONFIGS if not relative.startswith("draft-templates/") else SHARED / "fixtures"
    return json.loads((base / relative).read_text(encoding="utf-8"))


@pytest.fixture
def llama31_dir() -> Path:
    return HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct"


@pytest.fixture
def eagle3_llama_draft_dir(tmp_path: Path) -> Path:
    """The SpecForge EAGLE3 Llama-3.1 draft template (float16, 2048 positions) as a model dir."""
    return model_dir(tmp_path, "eagle3-draft", load_fixture("draft-templates/sgl-project-SpecForge/llama3-8B-eagle3.json"))


@pytest.fixture
def llama_hub() -> Iterator[str]:
    """An HTTP server on loopback that answers like the Hugging Face hub (out of reach here) with
    Llama-3.1-8B-Instruct's config.json for any repo and file: HEAD with the commit and ETag
    headers huggingface_hub reads, GET the body. Yields the address to give as HF_ENDPOINT."""
    body = (HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct" / "config.json").read_bytes()

    class Hub(BaseHTTPRequestHandler):
        def _head(self) -> None:
            self.send_response(200)
            self.send_header("X-Repo-Commit", "1" * 40)
            self.send_header("ETag", '"c0ffee"')
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()

        def do_HEAD(self) -> None:
            self._head()

        def do_GET(self) -> None:
            self._head()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
