"""A hub that cannot be reached costs one short attempt per run, said once; then the HF cache and the
catalog answer (issue #27: the README's example waited 47 s on a machine without DNS for the hub)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import run_cli

# The README's example: both models are in specguard's catalog, neither in the (empty) HF cache.
README_LAUNCH = (
    "--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3",
    "--speculative-draft-model-path", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B",
)
# An upper bound only: before the fix a hub that never answered took over a minute of retries.
BOUND_S = 15


@pytest.fixture
def silent_hub() -> Iterator[str]:
    """A listener on loopback that accepts connections and never answers them."""
    held: list[socket.socket] = []
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        listener.settimeout(0.2)
        stop = threading.Event()

        def hold() -> None:
            while not stop.is_set():
                try:
                    held.append(listener.accept()[0])
                except OSError:
                    continue

        thread = threading.Thread(target=hold, daemon=True)
        thread.start()
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
        stop.set()
        thread.join()
    for connection in held:
        connection.close()


@pytest.fixture
def closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _online(endpoint: str, tmp_path: Path) -> dict[str, str]:
    return {"HF_HUB_OFFLINE": "", "HF_ENDPOINT": endpoint, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_DISABLE_TELEMETRY": "1"}


@pytest.mark.parametrize("hub", ["silent_hub", "closed_port"])
def test_an_unreachable_hub_is_tried_once_then_the_catalog_answers(hub: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    endpoint = request.getfixturevalue(hub)
    result = run_cli("check", "--gpu", "H100", "--", *README_LAUNCH, env=_online(endpoint, tmp_path), timeout=BOUND_S)
    assert result.returncode == 1, result.stderr
    assert "target facts: specguard catalog" in result.stdout and "draft facts: specguard catalog" in result.stdout
    assert "DM002" in result.stdout  # the catalog's draft facts reached the rules
    assert result.stdout.count("hub unreachable") == 1, result.stdout
    assert endpoint in result.stdout
    assert "Retrying" not in result.stderr, result.stderr


def test_an_unreachable_hub_is_one_note_in_json(silent_hub: str, tmp_path: Path) -> None:
    result = run_cli("check", "--gpu", "H100", "--format", "json", "--", *README_LAUNCH, env=_online(silent_hub, tmp_path), timeout=BOUND_S)
    document = json.loads(result.stdout)
    assert [note for note in document["notes"] if note.startswith("hub unreachable")] == [document["notes"][0]]
    assert len(document["notes"]) == 1


def test_an_unreachable_hub_is_said_once_for_a_script_of_several_launches(silent_hub: str, tmp_path: Path) -> None:
    script = tmp_path / "serve.sh"
    launch = "python -m sglang.launch_server " + " ".join(README_LAUNCH)
    script.write_text(f"{launch}\n{launch} --port 30001\n", encoding="utf-8")
    result = run_cli("check", "--gpu", "H100", "--script", str(script), env=_online(silent_hub, tmp_path), timeout=BOUND_S)
    assert "2 launches checked" in result.stdout, result.stdout + result.stderr
    assert result.stdout.count("hub unreachable") == 1, result.stdout


def test_a_hub_that_answers_is_still_asked(llama_hub: str, tmp_path: Path) -> None:
    """The attempt does not stand in the way of a hub that answers: the config comes from it."""
    launch = ("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "NGRAM")
    result = run_cli("check", "--gpu", "H100", "-v", "--", *launch, env=_online(llama_hub, tmp_path), timeout=BOUND_S)
    assert "target facts: Hugging Face hub\n" in result.stdout, result.stdout
    assert "hub unreachable" not in result.stdout
