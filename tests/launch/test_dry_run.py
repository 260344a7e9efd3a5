"""``specguard launch --dry-run``: the exact command and env, for people and (JSON) for tools."""

from __future__ import annotations

import json
import shlex
import sys

from tests.conftest import HF_CONFIGS, run_cli
from tests.launch.conftest import launch_env

TARGET = str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct")
NGRAM = ["--model-path", TARGET, "--speculative-algorithm", "NGRAM"]


def test_dry_run_prints_the_shell_quoted_command_and_exits_0() -> None:
    result = run_cli("launch", "--gpu", "H100", "--runtime", "sglang", "--dry-run", "--port", "31999", "--env", "SGLANG_X=a b",
                     "--", *NGRAM, env=launch_env(fake_sglang=True))
    assert result.returncode == 0, result.stderr
    command = result.stdout.strip().splitlines()[-1]
    argv = shlex.split(command)
    assert argv[0] == "SGLANG_X=a b" and argv[1] == sys.executable
    assert argv[2:4] == ["-m", "sglang.launch_server"]
    assert argv[argv.index("--port") + 1] == "31999"
    assert "env SGLANG_X=a b" in result.stderr


def test_dry_run_json_is_one_document_with_the_launch() -> None:
    result = run_cli("launch", "--gpu", "H100", "--runtime", "sglang", "--dry-run", "--format", "json", "--", *NGRAM,
                     env=launch_env(fake_sglang=True))
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["schema_version"] == 1 and document["exit_code"] == 0
    launch = document["launch"]
    assert launch["runtime"] == "sglang" and launch["would_start"] is True
    assert launch["command"][1:3] == ["-m", "sglang.launch_server"] and launch["port"] == 30000
    assert launch["nodes"] == []


def test_dry_run_without_sglang_still_prints_what_to_run_elsewhere() -> None:
    result = run_cli("launch", "--gpu", "H100", "--dry-run", "--format", "json", "--", *NGRAM, "--tp-size", "2", env=launch_env())
    document = json.loads(result.stdout)
    assert result.returncode == 0
    assert document["launch"]["startable"] is False and "SGLang is not installed" in document["launch"]["reason"]
    assert document["launch"]["shell"].startswith("python -m sglang.launch_server")


def test_errors_remaining_block_the_launch_with_exit_1() -> None:
    result = run_cli("launch", "--gpu", "H100", "--dry-run", "--", *NGRAM, "--tp-size", "3", "--nnodes", "2", env=launch_env())
    assert result.returncode == 1
    assert "not starting the runtime" in result.stderr and "PL008" in result.stderr


def test_multi_node_dry_run_prints_one_command_per_node() -> None:
    result = run_cli("launch", "--gpu", "H100", "--gpu-count", "1", "--dry-run", "--format", "json", "--",
                     *NGRAM, "--tp-size", "2", "--nnodes", "2", "--dist-init-addr", "10.0.0.1:5000", env=launch_env())
    assert result.returncode == 0, result.stdout
    nodes = json.loads(result.stdout)["launch"]["nodes"]
    assert [n["node_rank"] for n in nodes] == [0, 1]
    for rank, node in enumerate(nodes):
        argv = shlex.split(node["shell"])
        assert argv[argv.index("--node-rank") + 1] == str(rank)
        assert argv[argv.index("--dist-init-addr") + 1] == "10.0.0.1:5000"


def test_slime_presets_print_the_sglang_args_block_and_start_nothing() -> None:
    result = run_cli("launch", "--preset", "slime-mtp-glm-4.5", env=launch_env())
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("SGLANG_ARGS=(") or "SGLANG_ARGS=(" in result.stdout
    assert "slime starts SGLang inside its rollout" in result.stderr


def test_format_json_without_dry_run_is_a_usage_error() -> None:
    result = run_cli("launch", "--format", "json", "--", *NGRAM, env=launch_env())
    assert result.returncode == 2
    assert json.loads(result.stdout)["exit_code"] == 2


def test_reference_runtime_refusal_is_one_clear_line() -> None:
    result = run_cli("launch", "--runtime", "reference", "--gpu", "cpu", "--no-fix", "--force", "--",
                     "--model-path", TARGET, "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", TARGET,
                     env=launch_env())
    assert result.returncode == 2
    assert "--runtime reference cannot run this launch" in result.stderr and "EAGLE3" in result.stderr
    assert "Traceback" not in result.stderr
