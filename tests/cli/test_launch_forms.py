"""Every form a launch comes in, through the real CLI in a subprocess: server arguments after
`--`, one string, stdin, `--script`, `docker run`; and the published scripts and documentation
commands checked as they were published (fixtures/SOURCES.md)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import HF_CONFIGS, REPO, SHARED, run_cli

FIXTURES = Path(__file__).parent / "fixtures"
SLIME_SCRIPTS = FIXTURES / "slime" / "scripts"
SARIF_SCHEMA = FIXTURES / "sarif" / "sarif-schema-2.1.0.json"
LLAMA = str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct")
NGRAM_LAUNCH = f"python3 -m sglang.launch_server --model-path {LLAMA} --speculative-algorithm NGRAM"


def run_with_stdin(text: str, *args: str) -> subprocess.CompletedProcess:
    """Like run_cli, with ``text`` on stdin."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_", "SGL_", "HF_"))}
    env.update({"HF_HUB_OFFLINE": "1", "NO_COLOR": "1", "COLUMNS": "200"})
    return subprocess.run([sys.executable, "-m", "specguard", *args], input=text, capture_output=True, text=True, env=env, cwd=REPO, timeout=60)


def line_of(path: Path, needle: str) -> int:
    """The 1-based line of the first line of ``path`` that holds ``needle`` outside a comment."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line.split("#", 1)[0]:
            return number
    raise AssertionError(f"{needle} not in {path}")


def one_error_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# ------------------------------------------------------------------ the forms of one launch


def test_argv_after_dashdash_and_one_string_agree() -> None:
    argv = run_cli("check", "--gpu", "H100", "--format", "json", "--", *NGRAM_LAUNCH.split()[3:])
    string = run_cli("check", NGRAM_LAUNCH, "--gpu", "H100", "--format", "json")
    assert argv.returncode == string.returncode == 0, string.stdout + string.stderr
    a, b = json.loads(argv.stdout), json.loads(string.stdout)
    assert a["argv"] == b["argv"] and a["findings"] == b["findings"]
    assert b["location"] == {"file": "<command>", "line": 1, "image": None, "dialect": "sglang"}


def test_one_string_with_env_prefix_and_continuations() -> None:
    text = f"SGLANG_ENABLE_SPEC_V2=1 python3 -m sglang.launch_server \\\n  --model-path {LLAMA} \\\n  --speculative-algorithm NGRAM\n"
    result = run_cli("check", text, "--gpu", "H100", "--format", "json")
    doc = json.loads(result.stdout)
    assert doc["env"]["SGLANG_ENABLE_SPEC_V2"] == "1"  # honoured like --env
    assert doc["argv"][:2] == ["--model-path", LLAMA]


def test_unquoted_command_words() -> None:
    result = run_cli("check", "--gpu", "H100", "--format", "json", "python3", "-m", "sglang.launch_server", "--model-path", LLAMA)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["argv"] == ["--model-path", LLAMA]


def test_stdin() -> None:
    result = run_with_stdin(NGRAM_LAUNCH + "\n", "check", "-", "--gpu", "H100", "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["location"]["file"] == "<stdin>"


@pytest.mark.parametrize("shell", ["bash -c", "sh -c", "/bin/bash -lc"])
def test_docker_run_bash_c_is_read_as_the_launch_it_runs(shell: str) -> None:
    """`docker run IMAGE bash -c '...'`: the string is a script; its launch takes the image's
    version and docker's -e env vars."""
    docker = (f"docker run --gpus all -e SGLANG_ENABLE_SPEC_V2=1 lmsysorg/sglang:v0.5.3-cu129 {shell} "
              f"'pip install -U flashinfer && {NGRAM_LAUNCH}'")
    result = run_cli("check", docker, "--gpu", "H100", "--format", "json")
    assert result.returncode in (0, 1), result.stdout + result.stderr
    doc = json.loads(result.stdout)
    assert (doc["environment"]["sglang_version"], doc["environment"]["sglang_version_origin"]) == ("0.5.3", "docker image tag")
    assert doc["env"]["SGLANG_ENABLE_SPEC_V2"] == "1"
    assert doc["argv"][doc["argv"].index("--speculative-algorithm") + 1] == "NGRAM"


def test_docker_run_image_tag_names_the_version() -> None:
    docker = f"docker run --gpus all --shm-size 32g -p 30000:30000 --ipc=host lmsysorg/sglang:v0.5.3-cu129 {NGRAM_LAUNCH}"
    doc = json.loads(run_cli("check", docker, "--gpu", "H100", "--format", "json").stdout)
    assert (doc["environment"]["sglang_version"], doc["environment"]["sglang_version_origin"]) == ("0.5.3", "docker image tag")
    assert doc["location"]["image"] == "lmsysorg/sglang:v0.5.3-cu129"
    given = json.loads(run_cli("check", docker, "--gpu", "H100", "--sglang-version", "0.5.23", "--format", "json").stdout)
    assert (given["environment"]["sglang_version"], given["environment"]["sglang_version_origin"]) == ("0.5.23", "given")
    latest = json.loads(run_cli("check", docker.replace("v0.5.3-cu129", "latest"), "--gpu", "H100", "--format", "json").stdout)
    assert latest["environment"]["sglang_version_origin"] != "docker image tag"


def test_sgl_jax_entry_point_selects_its_dialect() -> None:
    text = f"python3 -u -m sgl_jax.launch_server --model-path {LLAMA} --device=tpu --speculative-algorithm NGRAM"
    doc = json.loads(run_cli("check", text, "--gpu", "TPU", "--format", "json").stdout)
    assert doc["location"]["dialect"] == "sgl-jax"


# ------------------------------------------------------------------ nothing to check, help, typos


@pytest.mark.parametrize(
    "args",
    [
        ("check",),
        ("check", "--gpu", "H100"),
        ("check", "echo hello"),
        ("check", "python3 -m sglang.bench_serving --port 30000"),
    ],
)
def test_nothing_to_check_is_exit_2(args: tuple[str, ...]) -> None:
    line = one_error_line(run_cli(*args))
    assert line.startswith("specguard: error: ") and ("nothing to check" in line or "holds no launch" in line)


def test_nothing_to_check_in_json_and_sarif() -> None:
    result = run_cli("check", "--format", "json")
    assert result.returncode == 2 and json.loads(result.stdout)["error"].startswith("nothing to check")
    sarif = run_cli("check", "--format", "sarif")
    assert sarif.returncode == 2
    notification = json.loads(sarif.stdout)["runs"][0]["invocations"][0]["toolExecutionNotifications"][0]
    assert notification["level"] == "error" and notification["message"]["text"].startswith("nothing to check")
    validate_sarif(json.loads(sarif.stdout))


def test_empty_stdin_is_exit_2() -> None:
    line = one_error_line(run_with_stdin("", "check", "-"))
    assert "stdin holds no launch" in line


def test_script_that_does_not_exist(tmp_path: Path) -> None:
    line = one_error_line(run_cli("check", "--script", str(tmp_path / "run.sh")))
    assert "--script" in line and "no such file" in line


@pytest.mark.parametrize(
    "args",
    [
        ("check", "-h"),
        ("check", "--gpu", "H100", "--", "--model-path", LLAMA, "-h"),
        ("launch", "-h"),
        ("launch", "--preset", "tiny-cpu", "--", "--help"),
    ],
)
def test_help_anywhere_runs_nothing(args: tuple[str, ...]) -> None:
    result = run_cli(*args, timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Usage: specguard" in result.stdout
    assert "No findings" not in result.stdout and "remain" not in result.stdout.split("Usage:")[0] and "runtime:" not in result.stderr


@pytest.mark.parametrize(("typo", "suggestion"), [("--unsafe-fix", "--unsafe-fixes"), ("--offlne", "--offline"), ("--sglang-versoin", "--sglang-version")])
def test_misspelled_specguard_option(typo: str, suggestion: str) -> None:
    line = one_error_line(run_cli("check", typo, "--", "--model-path", LLAMA))
    assert f"no such option {typo}" in line and f"did you mean {suggestion}" in line


def test_launch_of_a_text_with_two_launches_is_refused() -> None:
    line = one_error_line(run_cli("launch", "--dry-run", f"{NGRAM_LAUNCH}\n{NGRAM_LAUNCH}\n"))
    assert "2 launches" in line


# ------------------------------------------------------------------ published slime scripts


def check_script(path: Path, *extra: str) -> tuple[int, dict]:
    result = run_cli("check", "--script", str(path), "--offline", "--gpu", "H100", "--format", "json", *extra)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    return result.returncode, json.loads(result.stdout)


def findings_by_code(launch: dict) -> dict[str, dict]:
    return {f["code"]: f for f in launch["findings"]}


def test_slime_mimo_eagle_script() -> None:
    script = SLIME_SCRIPTS / "run-mimo-7B-rl-eagle.sh"
    code, doc = check_script(script)
    [launch] = doc["launches"]
    assert launch["location"]["line"] == line_of(script, "-- python3 train.py")
    assert launch["location"]["dialect"] == "slime"
    # The whole train.py command line is read, arrays from the sourced models/mimo-7B-rl.sh included.
    assert "--sglang-speculative-num-draft-tokens" in launch["argv"] and "--num-layers" in launch["argv"]
    assert any("/root/MiMo-7B-RL" in note for note in launch["notes"])  # the target is not at hand here
    assert code == doc["exit_code"] == 0


def test_slime_glm47_script_points_at_the_flag_line() -> None:
    script = SLIME_SCRIPTS / "run-glm4.7-30B-A3B.sh"
    # No version given: the script's flags name the releases it was written for, and there
    # --sglang-cuda-graph-max-bs is accepted (no error).
    _, inferred = check_script(script)
    [launch] = inferred["launches"]
    assert launch["environment"]["sglang_version_source"] == "inferred from flags"
    assert not [f for f in launch["findings"] if f["code"] == "VB003" and f["severity"] == "error"]
    code, doc = check_script(script, "--sglang-version", "0.5.23")
    [launch] = doc["launches"]
    found = findings_by_code(launch)
    assert code == 1 and found["VB003"]["severity"] == "error" and "--cuda-graph-max-bs" in found["VB003"]["flags"]
    sarif = json.loads(run_cli("check", "--script", str(script), "--offline", "--gpu", "H100", "--sglang-version", "0.5.23", "--format", "sarif").stdout)
    validate_sarif(sarif)
    located = {r["ruleId"]: r["locations"][0]["physicalLocation"] for r in sarif["runs"][0]["results"]}
    assert located["VB003"]["artifactLocation"]["uri"] == "tests/cli/fixtures/slime/scripts/run-glm4.7-30B-A3B.sh"
    assert located["VB003"]["region"]["startLine"] == line_of(script, "--sglang-cuda-graph-max-bs")


def test_slime_qwen3_next_script_expands_seq() -> None:
    script = SLIME_SCRIPTS / "run-qwen3-next-80B-A3B.sh"
    _, doc = check_script(script)
    [launch] = doc["launches"]
    start = launch["argv"].index("--sglang-cuda-graph-bs")
    assert launch["argv"][start + 1 : start + 20] == ["1", "2", "4", "8", *(str(n) for n in range(16, 129, 8))]
    # No version given: checked as a release that accepts --sglang-cuda-graph-bs (a deprecated alias there).
    assert findings_by_code(launch)["VB003"]["severity"] == "info"
    _, doc = check_script(script, "--sglang-version", "0.5.23")
    assert findings_by_code(doc["launches"][0])["VB003"]["severity"] == "error"


def test_slime_deepseek_r1_script_with_the_real_target() -> None:
    script = SLIME_SCRIPTS / "run-deepseek-r1.sh"
    target = HF_CONFIGS / "deepseek-ai" / "DeepSeek-R1"
    _, doc = check_script(script, "--target", str(target))
    [launch] = doc["launches"]
    assert launch["target"]["source"] == str(target) and "notes" not in launch
    assert launch["target"]["num_nextn_predict_layers"] == 1
    sarif = json.loads(run_cli("check", "--script", str(script), "--target", str(target), "--offline", "--gpu", "H100", "--format", "sarif").stdout)
    validate_sarif(sarif)
    located = {r["ruleId"]: r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in sarif["runs"][0]["results"]}
    assert located["VB005"] == line_of(script, "--sglang-enable-dp-attention")


def test_slime_script_on_stdin_reads_no_sourced_file() -> None:
    script = SLIME_SCRIPTS / "run-mimo-7B-rl-eagle.sh"
    result = run_with_stdin(script.read_text(), "check", "--script", "-", "--offline", "--gpu", "H100", "--format", "json")
    [launch] = json.loads(result.stdout)["launches"]
    assert "--num-layers" not in launch["argv"]  # models/mimo-7B-rl.sh is relative to a file stdin does not have
    assert "--sglang-speculative-algorithm" in launch["argv"]


def test_human_report_names_script_line() -> None:
    script = SLIME_SCRIPTS / "run-glm4.7-30B-A3B.sh"
    result = run_cli("check", "--script", str(script), "--offline", "--gpu", "H100")
    assert f"run-glm4.7-30B-A3B.sh:{line_of(script, '-- python3 train.py')}: launch 1 of 1" in result.stdout


# ------------------------------------------------------------------ SGLang's and sgl-jax's docs


def doc_blocks(seed: str) -> list[tuple[int, str]]:
    text = (SHARED / "seeds" / seed).read_text()
    blocks = []
    for match in re.finditer(r"```(?:bash|sh|shell)[^\n]*\n(.*?)```", text, re.DOTALL):
        if "launch_server" in match.group(1):
            blocks.append((text[: match.start()].count("\n") + 2, match.group(1)))
    return blocks


SGLANG_DOC_BLOCKS = doc_blocks("sglang-speculative-decoding.md")


def test_sglang_docs_have_launch_blocks() -> None:
    assert len(SGLANG_DOC_BLOCKS) >= 9


@pytest.mark.parametrize(("line", "block"), SGLANG_DOC_BLOCKS, ids=[f"line{line}" for line, _ in SGLANG_DOC_BLOCKS])
def test_sglang_docs_launch_blocks(line: int, block: str) -> None:
    """Each launch on SGLang's speculative decoding page, as a script on stdin. With no version
    given, a page command that still says --cuda-graph-max-bs is checked as the newest release
    that accepts it (0.5.19, a deprecated alias there): no error. Under --sglang-version 0.5.23
    SGLang rejects it (VB003, an error)."""
    result = run_with_stdin(block, "check", "--script", "-", "--offline", "--gpu", "H100", "--format", "json")
    assert result.returncode in (0, 1), result.stdout + result.stderr
    [launch] = json.loads(result.stdout)["launches"]
    assert launch["location"]["line"] == 1 + next(i for i, text in enumerate(block.splitlines()) if "launch_server" in text)
    codes = {f["code"] for f in launch["findings"] if f["severity"] == "error"}
    assert "VB003" not in codes and "VB010" not in codes
    if "--cuda-graph-max-bs" in block:
        assert launch["environment"]["sglang_version"] == "0.5.19"
        newest = run_with_stdin(block, "check", "--script", "-", "--offline", "--gpu", "H100", "--sglang-version", "0.5.23", "--format", "json")
        [new] = json.loads(newest.stdout)["launches"]
        assert "VB003" in {f["code"] for f in new["findings"] if f["severity"] == "error"}


def test_sgl_jax_docs_launch_block() -> None:
    [(_, block)] = doc_blocks("sgl-jax-speculative-decoding.md")
    result = run_with_stdin(block, "check", "-", "--offline", "--gpu", "TPU", "--format", "json")
    doc = json.loads(result.stdout)
    assert doc["location"]["dialect"] == "sgl-jax"
    assert doc["argv"][doc["argv"].index("--speculative-algorithm") + 1] == "EAGLE3"


def test_slime_guide_array_alone() -> None:
    """slime's guide publishes only the SGLANG_ARGS array; it is read as the launch's SGLang part."""
    text = (SHARED / "seeds" / "slime-speculative-decoding.en.md").read_text()
    block = next(m.group(1) for m in re.finditer(r"```(?:bash|sh|shell)[^\n]*\n(.*?)```", text, re.DOTALL) if "SGLANG_ARGS" in m.group(1))
    result = run_with_stdin(block, "check", "-", "--offline", "--gpu", "H100", "--format", "json")
    assert result.returncode in (0, 1), result.stdout + result.stderr
    doc = json.loads(result.stdout)
    assert doc["location"]["dialect"] == "slime"
    assert "--sglang-speculative-algorithm" in doc["argv"]


# ------------------------------------------------------------------ SARIF


def validate_sarif(document: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(document, json.loads(SARIF_SCHEMA.read_text()))


def test_sarif_of_an_argv_launch_validates(tmp_path: Path) -> None:
    result = run_cli("check", "--format", "sarif", "--gpu", "H100", "--", "--model-path", LLAMA, "--speculative-algorithm", "EAGLE3")
    document = json.loads(result.stdout)
    validate_sarif(document)
    assert document["runs"][0]["results"]


def test_explicit_target_wins_over_a_presets_snapshot() -> None:
    qwen = HF_CONFIGS / "Qwen" / "Qwen2.5-7B-Instruct"
    doc = json.loads(run_cli("check", "--preset", "eagle3-llama3.1-8b", "--offline", "--target", str(qwen), "--format", "json").stdout)
    assert doc["target"]["source"] == str(qwen) and doc["target"]["vocab_size"] == 152064
