"""``specguard launch`` end to end with the bundled reference runtime and the tiny pair, on 127.0.0.1.

Real processes throughout: the CLI in a subprocess, the runtime as its child (torch on CPU).
The tiny pair is built once (the ``tiny_root`` fixture, conftest.py) into ``$SPECGUARD_CACHE_DIR``
or pytest's cache, and the launcher is pointed at the same place.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
from pathlib import Path

import pytest

from specguard.launch.probe import free_port
from tests.launch.conftest import assert_no_process_left, launch_env

pytest.importorskip("torch")
pytest.importorskip("uvicorn")

START_TIMEOUT = 600  # a 2-core machine shared with other work: loading torch alone can take a minute
# The device the EAGLE3 launch test serves on: cpu here and in CI; scripts/gpu_check.sh sets
# cuda (and the GPU's name, for the launch's check) to run the same test on a GPU.
DEVICE = os.environ.get("SPECGUARD_TEST_DEVICE", "cpu")
GPU = os.environ.get("SPECGUARD_TEST_GPU", "H100" if DEVICE == "cuda" else "cpu")


def test_tiny_cpu_preset_serves_with_speculation_and_stops_cleanly(tiny_root: Path, launcher_factory) -> None:
    port = free_port()
    env = launch_env({"SPECGUARD_CACHE_DIR": str(tiny_root)})
    launcher = launcher_factory(["--preset", "tiny-cpu", "--port", str(port), "--health-interval", "0"], env)
    launcher.wait_for("serving at", timeout=START_TIMEOUT)
    err = launcher.err
    assert "starting reference:" in err and "-m specguard.runtime" in err
    assert "ready: /health_generate answered 200" in err
    assert "[reference] " in err and "The server is fired up and ready to roll!" in err
    table = err.split("resolved by the runtime (/server_info)")[1].split("smoke request")[0]
    assert "STANDALONE" in table and "differs" not in table, table
    assert "smoke request /v1/chat/completions:" in err
    assert "speculative statistics (smoke request): accept length" in err
    assert "meaning:" in err
    # the scheduler's counters, through the scheduler process: the warm-up and the smoke request ran
    batching = re.search(r"scheduler \(/server_info batching_stats\): (\d+) decode iterations, ([0-9.]+) requests", err)
    assert batching is not None and int(batching.group(1)) >= 2 and float(batching.group(2)) >= 1.0, err[-2000:]
    assert re.search(r"accept length [0-9.]+ over \d+ verify passes since start", err), err[-2000:]
    launcher.interrupt(signal.SIGINT)
    assert launcher.wait(timeout=120) == 130
    assert_no_process_left(launcher.runtime_pgid)


def test_runtime_crash_during_start_up_is_reported_with_its_log(tiny_root: Path, tmp_path: Path, launcher_factory) -> None:
    from specguard.runtime.tiny import ensure_tiny_pair

    broken = tmp_path / "no-weights"
    broken.mkdir()
    target = ensure_tiny_pair(tiny_root).target
    shutil.copy(target / "config.json", broken / "config.json")
    shutil.copy(target / "tokenizer.json", broken / "tokenizer.json")
    port = free_port()
    launcher = launcher_factory(
        ["--runtime", "reference", "--gpu", "cpu", "--port", str(port), "--",
         "--model-path", str(broken), "--speculative-algorithm", "NGRAM"],
        launch_env(),
    )
    code = launcher.wait(timeout=START_TIMEOUT)
    err = launcher.err
    assert code == 2, err[-3000:]  # the reference runtime's code for a bad checkpoint
    assert "the runtime exited during start-up (exit code 2)" in err
    assert "No known failure signature in the log" in err and "error:" in err
    assert launcher.runtime_pgid is not None
    assert_no_process_left(launcher.runtime_pgid)


def test_dry_run_resolves_the_tiny_pair(tiny_root: Path) -> None:
    from tests.conftest import run_cli

    result = run_cli("launch", "--preset", "tiny-cpu", "--dry-run", "--format", "json", env=launch_env({"SPECGUARD_CACHE_DIR": str(tiny_root)}))
    assert result.returncode == 0, result.stderr
    launch = json.loads(result.stdout)["launch"]
    assert launch["runtime"] == "reference" and launch["command"][1:3] == ["-m", "specguard.runtime"]
    assert "tiny:" not in " ".join(launch["command"]) and str(tiny_root) in " ".join(launch["command"])


def test_tiny_cpu_eagle3_preset_serves_greedy_output_of_plain_decoding(tiny_root: Path, launcher_factory) -> None:
    """EAGLE3 through the real CLI on ``DEVICE``: accept length above 1.5, the plain-decoding text
    through the native API and through the OpenAI client, a clean Ctrl-C."""

    import httpx
    import openai

    from specguard.runtime.loader import load_model
    from specguard.runtime.speculative import Decoder, SamplingParams, SpecConfig
    from specguard.runtime.tiny import ensure_tiny_eagle3
    from specguard.runtime.tokenizer import Tokenizer

    pair = ensure_tiny_eagle3(tiny_root)
    prompt = "def merge_all(items):\n    result = []\n"
    tok = Tokenizer(pair.target)
    target = load_model(pair.target, device=DEVICE)
    target.setup_cache(256)
    plain: list[int] = []
    for result in Decoder(target, SpecConfig()).decode(tok.encode(prompt), SamplingParams(temperature=0.0)):
        plain += result.tokens
        if len(plain) >= 64:
            break
    port = free_port()
    env = launch_env({"SPECGUARD_CACHE_DIR": str(tiny_root)})
    launcher = launcher_factory(
        ["--preset", "tiny-cpu-eagle3", "--gpu", GPU, "--port", str(port), "--health-interval", "0", "--", "--device", DEVICE], env
    )
    launcher.wait_for("serving at", timeout=START_TIMEOUT)
    err = launcher.err
    assert f"--device {DEVICE}" in err.split("starting reference:")[1].splitlines()[0]
    table = err.split("resolved by the runtime (/server_info)")[1].split("smoke request")[0]
    assert "EAGLE3" in table and "differs" not in table, table
    accept = float(re.search(r"speculative statistics \(smoke request\): accept length ([0-9.]+)", err).group(1))
    assert accept > 1.5, err[-2000:]
    body = {"text": prompt, "sampling_params": {"temperature": 0, "max_new_tokens": 64, "ignore_eos": True}}
    reply = httpx.post(f"http://127.0.0.1:{port}/generate", json=body, timeout=60).json()
    assert reply["text"] == tok.decode(plain[:64])
    assert reply["meta_info"]["spec_accept_length"] > 1.5
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", max_retries=0, timeout=60)
    completion = client.completions.create(
        model=client.models.list().data[0].id, prompt=prompt, max_tokens=64, temperature=0, extra_body={"ignore_eos": True}
    )
    assert completion.choices[0].text == tok.decode(plain[:64]) and completion.usage.completion_tokens == 64
    launcher.interrupt(signal.SIGINT)
    assert launcher.wait(timeout=120) == 130
    assert_no_process_left(launcher.runtime_pgid)
