"""``specguard accept`` through the real CLI on the tiny models, checked against the server's own counts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from runtime_helpers import Server

from specguard.roofline import Cost, estimate, forward_seconds
from specguard.runtime.acceptance import Measurement, Setting
from tests.conftest import run_cli

PROMPTS = [
    "def scale_3(x):\n",
    "def merge_all(items):\n    result = []\n",
    "class Parse7:\n    def __init__(self, key):\n",
]
NEW_TOKENS = 48


@pytest.fixture(scope="module")
def prompts_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("prompts") / "prompts.jsonl"
    path.write_text("".join(json.dumps({"prompt": p}) + "\n" for p in PROMPTS))
    return path


def _accept(*args: str) -> dict:
    result = run_cli("accept", *args, "--format", "json", timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def test_accept_figures_equal_the_servers_own_counts(tiny_eagle3, prompts_file):
    """Same prompts, same greedy decoding: verify passes and accepted drafts agree exactly with the
    server's spec_verify_ct and spec_num_correct_drafts, for a chain and an EAGLE-2 tree."""
    report = _accept("--target", str(tiny_eagle3.target), "--draft", str(tiny_eagle3.draft), "--prompts", str(prompts_file),
                     "--max-new-tokens", str(NEW_TOKENS), "--steps", "5", "--topk", "1,4", "--draft-tokens", "8")
    assert report["algorithm"] == "EAGLE3" and report["complete"]
    by_setting = {(s["num_steps"], s["topk"], s["num_draft_tokens"]): s for s in report["settings"]}
    assert set(by_setting) == {(5, 1, 6), (5, 4, 8)}
    for (steps, topk, ndt), measured in by_setting.items():
        server = Server(["--model-path", str(tiny_eagle3.target), "--speculative-algorithm", "EAGLE3",
                         "--speculative-draft-model-path", str(tiny_eagle3.draft), "--speculative-num-steps", str(steps),
                         "--speculative-eagle-topk", str(topk), "--speculative-num-draft-tokens", str(ndt)])
        try:
            server.wait_ready(timeout=300)
            verify = correct = 0
            with server.client() as client:
                for prompt in PROMPTS:
                    body = {"text": prompt, "sampling_params": {"temperature": 0, "max_new_tokens": NEW_TOKENS, "ignore_eos": True}}
                    meta = client.post("/generate", json=body).json()["meta_info"]
                    verify += meta["spec_verify_ct"]
                    correct += meta["spec_num_correct_drafts"]
        finally:
            server.stop()
        assert (measured["verify_ct"], measured["correct_drafts"]) == (verify, correct), (steps, topk, ndt)
        assert measured["accept_length"] == pytest.approx((correct + verify) / verify, abs=1e-4)
        assert measured["accept_length"] > 1.5
        depth = len(measured["position_acceptance"])
        assert depth == steps and all(a >= b for a, b in zip(measured["position_acceptance"], measured["position_acceptance"][1:]))


@pytest.mark.parametrize("algorithm", ["STANDALONE", "NGRAM"])
def test_accept_runs_standalone_and_ngram_with_a_gpu_estimate(tiny_pair, prompts_file, tmp_path, algorithm):
    draft = ["--draft", str(tiny_pair.draft)] if algorithm == "STANDALONE" else []
    report = _accept("--target", str(tiny_pair.target), *draft, "--prompts", str(prompts_file), "--max-new-tokens", "24",
                     "--steps", "2,4", "--topk", "1" if algorithm == "STANDALONE" else "4", "--draft-tokens", "8",
                     "--gpu", "H100", "--batch-sizes", "1,64")
    assert report["algorithm"] == algorithm
    assert all(s["accept_length"] >= 1.0 and s["verify_ct"] > 0 for s in report["settings"])
    est = report["estimate"]
    assert est["gpu"] == "H100" and [r["batch"] for r in est["rows"]] == [1, 64]
    assert all(r["plain_tokens_per_s"] > 0 for r in est["rows"])


def test_accept_text_output_has_table_plot_and_png(tiny_eagle3, tmp_path):
    pytest.importorskip("matplotlib")
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("def scale_3(x):\n\nclass Parse7:\n")
    png = tmp_path / "accept.png"
    result = run_cli("accept", "--target", str(tiny_eagle3.target), "--draft", str(tiny_eagle3.draft), "--prompts", str(prompts),
                     "--max-new-tokens", "16", "--steps", "2,3", "--gpu", "A100", "--batch-sizes", "1,8", "--plot", str(png),
                     timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "accept length" in result.stdout and "position 1" in result.stdout and "█" in result.stdout
    assert "roofline estimate on A100" in result.stdout and "assumptions:" in result.stdout
    assert "should take about" in result.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The tiny models run at hundreds of thousands of tokens/s on an A100's roofline: grouped by thousands.
    roofline = result.stdout.split("roofline estimate on A100", 1)[1].split("assumptions:", 1)[0]
    rates = re.findall(r"│\s*([\d,]{5,})\s*│", roofline)
    assert rates and all(re.fullmatch(r"\d{1,3}(,\d{3})+", rate) for rate in rates), rates


def test_the_plot_ticks_counts_at_whole_numbers():
    """Draft positions and batch sizes are counts: no tick at position 1.5, batch 1,024 grouped."""
    pytest.importorskip("matplotlib")
    from specguard.cli.accept_cmd import accept_figure

    results = [Measurement(Setting(3, 1, 4), verify_ct=10, correct_drafts=14, histogram=[2, 3, 2, 3]),
               Measurement(Setting(2, 1, 3), verify_ct=12, correct_drafts=9, histogram=[5, 4, 3])]
    rows = [{"batch": b, "plain_tokens_per_s": 900.0 * b, "best": {"tokens_per_s": 1500.0 * b}} for b in (1, 64, 1024)]
    report = {"algorithm": "EAGLE3", "estimate": {"gpu": "H100", "rows": rows}}
    figure = accept_figure(report, results)
    figure.canvas.draw()
    positions, batches = figure.axes[1], figure.axes[2]
    low, high = positions.get_xlim()
    assert all(float(t).is_integer() for t in positions.get_xticks() if low <= t <= high)
    assert [t.get_text() for t in batches.get_xticklabels()] == ["1", "64", "1,024"]
    shown = [t.get_text() for t in batches.get_yticklabels() if t.get_text()]
    assert any("," in text for text in shown) and all(re.fullmatch(r"-?\d{1,3}(,\d{3})*", text) for text in shown), shown


@pytest.mark.parametrize(
    "args,message",
    [
        (["--gpu", "L4"], "--gpu L4: specguard has no bandwidth and FLOPs figures for it"),
        (["--steps", "two"], "--steps 'two': expected comma-separated integers"),
        (["--prompts", "/nonexistent.jsonl"], "--prompts /nonexistent.jsonl: no such file"),
        (["--plot", "out.svg"], "--plot out.svg: expected a .png file name"),
        # What the server refuses is refused before measuring. Before: --steps 100000 drafted for
        # minutes, then failed allocating a ~40 GB tree mask; --max-new-tokens 1e10 was an
        # "internal error" from the allocator.
        (["--steps", "100000"], "--steps 100000: a speculative round of 100001 tokens does not fit the target's context length of 2048"),
        (["--steps", "2", "--topk", "100000"], "--topk 100000: more than the target's 512 tokens"),
        (["--algorithm", "NGRAM", "--draft-tokens", "5000"], "--draft-tokens 5000: a speculative round of 5001 tokens does not fit"),
        (["--max-new-tokens", "10000000000"], "--max-new-tokens 10000000000: the longest prompt plus 10000000000 new tokens"),
    ],
)
def test_accept_bad_input_is_one_line(tiny_pair, args, message):
    result = run_cli("accept", "--target", str(tiny_pair.target), "--draft", str(tiny_pair.draft), *args, timeout=300)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_roofline_is_memory_bound_at_batch_one_and_speculation_stops_paying_when_compute_bound():
    """A 1B-parameter target, a 0.1B draft, accept length 3: at batch 1 the forward is weight
    bandwidth (2 GB at 2 TB/s = 1 ms); at large batches verifying 4 tokens per sequence costs
    compute that plain decoding does not spend, and speculation stops paying."""
    hw = {"bandwidth": 2e12, "flops": 300e12, "weight_bytes": 2, "kv_bytes": 2}
    target = Cost(weight_params=10**9, matmul_params=10**9, kv_values_per_token=0, layers=16, attention_width=2048)
    draft = Cost(weight_params=10**8, matmul_params=10**8, kv_values_per_token=0, layers=1, attention_width=2048)
    assert forward_seconds(target, 1, 1, 0, 2e12, 300e12, 2, 2) == pytest.approx(1e-3)
    m = Measurement(Setting(3, 1, 4), verify_ct=100, correct_drafts=200, histogram=[0, 0, 0, 100])
    result = estimate("EAGLE3", [m], target, draft, [1, 16, 1024], 0, hw)
    first, _, last = result["rows"]
    # batch 1: one verify (1 ms) + extend and 2 draft steps (0.1 ms each) for 3 tokens
    assert first["speedup"] == pytest.approx(3 / 1.3, rel=1e-6)
    assert last["speedup"] < 1.0
    assert result["pays_up_to_batch"] == 16 and result["stops_paying_at_batch"] == 1024


def test_ctrl_c_stops_early_with_the_figures_so_far(tiny_eagle3, prompts_file):
    """Ctrl-C once the first setting is measured and before the next (a barrier in the sweep,
    tests/runtime/accept_barrier.py, not a delay): that setting's figures, and only those."""
    import os
    import signal
    import subprocess
    import sys

    from accept_barrier import READY

    barrier = Path(__file__).resolve().parent / "accept_barrier.py"
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [sys.executable, str(barrier), "accept", "--target", str(tiny_eagle3.target), "--draft", str(tiny_eagle3.draft),
         "--prompts", str(prompts_file), "--max-new-tokens", "200", "--steps", "1,2,3,4,5,6,7,8", "--format", "json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        err = ""
        while READY not in err and proc.poll() is None:
            err += proc.stderr.readline()
        assert READY in err, err + proc.stderr.read()
        proc.send_signal(signal.SIGINT)
        out, rest = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err + rest
    report = json.loads(out)
    assert report["complete"] is False
    assert [s["num_steps"] for s in report["settings"]] == [1], report["settings"]
    measured = report["settings"][0]
    assert measured["prompts"] == len(PROMPTS) and measured["verify_ct"] > 0  # every prompt of it, not a part
    assert "stopped by Ctrl-C" in rest
