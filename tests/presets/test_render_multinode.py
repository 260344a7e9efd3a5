"""`specguard render` prints one command per node for a multi-node launch."""

from __future__ import annotations

from tests.conftest import run_cli


def test_per_node_commands() -> None:
    result = run_cli("render", "--preset", "sglang-ngram-qwen2.5-7b", "--to", "sglang", "--",
                     "--nnodes", "2", "--dist-init-addr", "127.0.0.1:5000", "--tp-size", "2")
    assert result.returncode == 0, result.stderr
    blocks = result.stdout.strip().split("\n\n")
    assert [b.splitlines()[0] for b in blocks] == ["# node 0 of 2", "# node 1 of 2"]
    assert "--node-rank 0" in blocks[0] and "--node-rank 1" in blocks[1]
    assert all("python -m sglang.launch_server" in b for b in blocks)


def test_single_node_is_one_command() -> None:
    result = run_cli("render", "--preset", "sglang-ngram-qwen2.5-7b", "--to", "sglang")
    assert result.returncode == 0 and "--node-rank" not in result.stdout and "# node" not in result.stdout
