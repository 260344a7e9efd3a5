"""`specguard explain` end to end, in a subprocess: real log lines quoted from public threads
(tests/launch/fixtures/sglang_log_excerpts.json, each with its source), rank and Ray prefixes,
a slime job log, an sgl-jax log, and the inputs it refuses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.launch.conftest import FIXTURES

EXCERPTS = json.loads((FIXTURES / "sglang_log_excerpts.json").read_text(encoding="utf-8"))
EXPLAIN_FIXTURES = Path(__file__).parent / "fixtures" / "explain"
KEYS = {"rule", "signature", "line", "meaning", "evidence", "fix", "fixed_in", "sources", "raised_at"}

SERVER_ARGS = (
    "[2026-01-02 10:11:02] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', "
    "tokenizer_path='meta-llama/Llama-3.1-8B-Instruct', dtype='auto', context_length=None, port=30000, "
    "speculative_algorithm='EAGLE3', speculative_draft_model_path='lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B', "
    "speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4, "
    "load_format=<LoadFormat.AUTO: 'auto'>, json_model_override_args='{}', disable_cuda_graph=False, tp_size=1)"
)
# The draft's ModelConfig refusing the target's context (sglang#9388, model_config.py), printed by each rank.
CONTEXT_TRACEBACK = [
    "[2026-01-02 10:11:12 TP{rank}] Scheduler hit an exception: Traceback (most recent call last):",
    '[2026-01-02 10:11:12 TP{rank}]   File "/sgl-workspace/sglang/python/sglang/srt/configs/model_config.py", line 211, in __init__',
    (
        "[2026-01-02 10:11:12 TP{rank}] ValueError: User-specified context_length (131072) is greater than the derived "
        "context_length (2048). This may lead to incorrect model outputs or CUDA errors. To allow overriding this maximum, "
        "set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"
    ),
]


def explain(*args: str, stdin: str | bytes | None = None) -> subprocess.CompletedProcess:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run([sys.executable, "-m", "specguard", "explain", *args], input=data, capture_output=True, timeout=120)


def as_json(result: subprocess.CompletedProcess) -> dict:
    return json.loads(result.stdout)


def test_every_quoted_line_is_explained_by_its_signature(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("".join(f"[2026-01-02 10:11:{i % 60:02d} TP0] {c['excerpt']}\n" for i, c in enumerate(EXCERPTS)), encoding="utf-8")
    document = as_json(explain(str(log), "--format", "json"))
    found = {c["signature"] for c in document["causes"]}
    for case in EXCERPTS:
        assert case["signature"] in found, f"{case['signature']} ({case['source']}) not explained"
    assert all(set(c) == KEYS for c in document["causes"])


def test_dtype_mismatch_with_its_launch_gives_the_rule_its_fix_and_the_check(tmp_path: Path) -> None:
    excerpt = next(c for c in EXCERPTS if c["signature"] == "dtype-mismatch")
    log = tmp_path / "server.log"
    log.write_text(f"sglang version: 0.5.3\n{SERVER_ARGS}\n[2026-01-02 10:11:12 TP0] {excerpt['excerpt']}\n", encoding="utf-8")
    result = explain(str(log), "--format", "json")
    document = as_json(result)
    assert result.returncode == 1, result.stderr
    assert set(document) == {"schema_version", "causes", "launch", "check", "unplaced", "unplaced_raised_at"}
    first = document["causes"][0]
    assert (first["signature"], first["rule"]) == ("dtype-mismatch", "DM001")
    assert excerpt["source"] in first["sources"]
    assert "--dtype" in first["fix"] and "--model-path" in first["fix"]
    launch = document["launch"]
    assert launch["sglang_version"] == "0.5.3"
    assert "--speculative-draft-model-path" in launch["argv"] and "--port" not in launch["argv"]  # 30000 is SGLang's default
    assert "--load-format" not in launch["argv"]  # an enum's repr: not a literal, kept out
    assert any("load_format" in fact for fact in launch["unknown"])
    assert {f["code"] for f in document["check"]["findings"]} >= {"DM001", "DM002"}


# Fields at SGLang 0.4.3.post2's own defaults, which 0.5.23's differ from (sglang 0.4.3.post2:
# python/sglang/srt/server_args.py:47 trust_remote_code = True, :70 schedule_policy = "lpm", :95
# file_storage_pth = "sglang_storage"; 0.5.23: arg_groups/fields/model.py:106-109 trust_remote_code
# = False, schedule.py:86-102 schedule_policy = "fcfs"; file_storage_pth is gone after 0.4.3.post2).
OLD_SERVER_ARGS = (
    "[2026-01-02 10:11:02] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', trust_remote_code=True, "
    "schedule_policy='lpm', file_storage_pth='sglang_storage', speculative_algorithm='EAGLE')"
)


@pytest.mark.parametrize("version_line", ["sglang version: 0.4.3.post2\n", ""])
def test_an_old_logs_fields_at_their_own_releases_defaults_are_no_flags(version_line: str) -> None:
    launch = as_json(explain("-", "--format", "json", stdin=f"{version_line}{OLD_SERVER_ARGS}\n"))["launch"]
    assert launch["argv"] == ["--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE"]
    # The version line names the release; else the field names date the line (file_storage_pth:
    # up to 0.4.3.post2, whose defaults it is then read at).
    assert any("0.4.3.post2" in fact for fact in launch["from_log"])


def test_a_traceback_with_rank_prefixes_ranks_the_rule_that_fires_first(tmp_path: Path) -> None:
    lines = ["\x1b[32msglang==0.5.3\x1b[0m", SERVER_ARGS] + [line.format(rank=rank) for rank in range(4) for line in CONTEXT_TRACEBACK]
    result = explain("-", "--format", "json", stdin="\n".join(lines) + "\n")
    document = as_json(result)
    causes = document["causes"]
    assert [c["rule"] for c in causes][:2] == ["DM002", "DM012"], causes
    assert "context_length (131072)" in causes[0]["line"]
    assert "--context-length" in causes[0]["fix"]
    assert result.returncode == 1
    assert len(document["unplaced"]) <= 1  # four ranks, one line


def test_human_output_fits_80_columns(tmp_path: Path) -> None:
    lines = [SERVER_ARGS] + [line.format(rank=0) for line in CONTEXT_TRACEBACK]
    result = explain("-", stdin="\n".join(lines) + "\n")
    text = result.stdout.decode()
    assert text.startswith("cause 1: DM002"), text
    assert max(len(line) for line in text.splitlines()) <= 80, text


def test_a_slime_job_log_recovers_the_sglang_flags_it_echoes(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text(
        "+ python3 train.py --hf-checkpoint /root/Llama-3.1-8B-Instruct --sglang-speculative-algorithm EAGLE3 "
        "--sglang-speculative-draft-model-path lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B --sglang-mem-fraction-static 0.7\n"
        "(SGLangEngine pid=4242, ip=10.0.0.7) RuntimeError: expected mat1 and mat2 to have the same dtype, but got: float != c10::Half\n",
        encoding="utf-8",
    )
    document = as_json(explain(str(log), "--format", "json"))
    assert document["causes"][0]["signature"] == "dtype-mismatch"
    assert "--sglang-speculative-algorithm" in document["launch"]["argv"] or "--speculative-algorithm" in document["launch"]["argv"]
    assert any("command line" in fact for fact in document["launch"]["from_log"])


def test_an_sgl_jax_log_is_read_as_sgl_jax(tmp_path: Path) -> None:
    log = tmp_path / "jax.log"
    log.write_text(
        "python -m sgl_jax.launch_server --model-path Qwen/Qwen3-8B --speculative-algorithm EAGLE3 --tp-size 4\n"
        "[2026-01-02 10:11:12] ValueError: something sgl-jax could not place at 0x7f3a\n",
        encoding="utf-8",
    )
    result = explain(str(log), "--format", "json")
    document = as_json(result)
    assert result.returncode == 0
    assert document["causes"] == []
    assert document["unplaced"] == ["ValueError: something sgl-jax could not place at 0x7f3a"]
    assert document["launch"]["argv"][:2] == ["--model-path", "Qwen/Qwen3-8B"]


def test_nothing_recognisable_is_one_line_no_known_cause_exit_0(tmp_path: Path) -> None:
    result = explain("-", stdin="hello\nRuntimeError: the flux capacitor is out of phase\n")
    assert result.returncode == 0
    assert result.stdout.decode().splitlines() == ["no known cause: no signature fits `RuntimeError: the flux capacitor is out of phase`"]
    assert result.stderr == b""


def test_a_message_sglang_raises_is_traced_to_where_and_the_releases_that_hold_it() -> None:
    # specguard/data/sglang-crash-strings.json (the release ledger): 0.5.22's kv_shard_hook.py
    # raises this, and 0.5.23 no longer does; FX185 is the rule that predicts it.
    line = "ValueError: --enable-kv-cache-sharding does not support speculative decoding."
    result = explain("-", stdin=f"Traceback (most recent call last):\n{line}\n")
    assert result.returncode == 1 and result.stderr == b""
    out = result.stdout.decode()
    assert out.splitlines()[0] == "cause 1: FX185 kv-cache-sharding-with-speculation"
    assert "raised in:sglang/srt/arg_groups/kv_shard_hook.py handle_kv_cache_sharding" in out
    assert "(SGLang 0.5.22; gone from 0.5.23)" in " ".join(out.split())
    # A message no rule predicts yet is still traced to where, and when, SGLang raised it.
    line = "ValueError: Ngram speculative decoding only supports CUDA device."
    result = explain("-", stdin=f"Traceback (most recent call last):\n{line}\n")
    assert result.returncode == 0 and result.stderr == b""
    where = "sglang/srt/arg_groups/speculative_hook.py _handle_ngram (SGLang 0.5.13 to 0.5.15.post1; gone from 0.5.16)"
    assert result.stdout.decode().splitlines() == [f"no known cause: no signature fits `{line}`; SGLang raises it in {where}"]
    document = as_json(explain("--format", "json", "-", stdin=f"{line}\n"))
    assert document["unplaced_raised_at"] == [{
        "file": "sglang/srt/arg_groups/speculative_hook.py", "function": "_handle_ngram", "exception": "ValueError",
        "first": "0.5.13", "last": "0.5.15.post1", "gone_from": "0.5.16",
    }]
    # A line SGLang never printed is placed nowhere.
    assert as_json(explain("--format", "json", "-", stdin="RuntimeError: the flux capacitor is out of phase\n"))["unplaced_raised_at"] == [None]


@pytest.mark.parametrize(
    ("content", "words"),
    [(b"\x7fELF\x02\x01\x01\x00\x00\x00binary", "binary"), (b"", "empty")],
    ids=["binary", "empty"],
)
def test_unreadable_files_are_one_line_and_exit_2(tmp_path: Path, content: bytes, words: str) -> None:
    log = tmp_path / "bad.log"
    log.write_bytes(content)
    result = explain(str(log))
    assert result.returncode == 2
    assert result.stdout == b""
    assert len(result.stderr.decode().strip().splitlines()) == 1 and words in result.stderr.decode()


def test_a_directory_is_refused(tmp_path: Path) -> None:
    result = explain(str(tmp_path))
    assert result.returncode == 2 and "directory" in result.stderr.decode()


def test_a_truncated_server_args_line_is_one_note(tmp_path: Path) -> None:
    log = tmp_path / "cut.log"
    log.write_text("[2026-01-02 10:11:02] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', speculative_alg\n")
    result = explain(str(log), "--format", "json")
    assert result.returncode == 0
    assert as_json(result)["launch"] is None
    assert len(result.stderr.decode().strip().splitlines()) == 1 and "ServerArgs" in result.stderr.decode()


def test_a_truncated_server_args_line_alone_is_one_line_in_human_output(tmp_path: Path) -> None:
    log = tmp_path / "cut.log"
    log.write_text("[2026-01-02 10:11:02] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', speculative_alg\n")
    result = explain(str(log))
    assert result.returncode == 0
    lines = result.stdout.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("no known cause: the log holds no error line;") and "ServerArgs" in lines[0]
    assert result.stderr == b""


def test_a_public_stack_trace_with_rank_prefixes_names_its_rule_and_launch() -> None:
    # sgl-project/sglang#19125: the PR's launch block, then its error log with rank prefixes (fixtures/SOURCES.md).
    result = explain(str(EXPLAIN_FIXTURES / "sglang-pr-19125-rank-prefixes.txt"), "--format", "json")
    document = as_json(result)
    first = document["causes"][0]
    assert (first["rule"], first["signature"], first["evidence"]) == ("AB021", "fa3-kernel-off-hopper", "message")
    assert first["fixed_in"] == "0.5.11"
    assert document["unplaced"] == []  # the same CUDA error printed twice, placed once
    argv = document["launch"]["argv"]
    assert argv[argv.index("--model-path") + 1] == "stepfun-ai/Step-3.5-Flash-FP8" and "--enable-multi-layer-eagle" in argv
    assert any("command line" in fact for fact in document["launch"]["from_log"])
    assert result.returncode == 1


def test_a_public_slime_job_log_places_the_capture_failure_and_names_what_it_cannot() -> None:
    # THUDM/slime#1998: the error blocks of a slime job whose rollout server died capturing CUDA graphs.
    result = explain(str(EXPLAIN_FIXTURES / "slime-issue-1998-job.txt"), "--format", "json")
    document = as_json(result)
    assert [(c["signature"], c["evidence"]) for c in document["causes"]] == [("cuda-graph-capture-failed", "common message")]
    assert any("custom_all_reduce.cuh" in line for line in document["unplaced"])
    assert "Exception: Server process terminated unexpectedly." in document["unplaced"]
    assert document["launch"] is None


def test_a_public_sgl_jax_log_is_read_as_an_sgl_jax_launch() -> None:
    # sgl-project/sglang-jax#378: the EAGLE3 launch its description runs.
    path = str(EXPLAIN_FIXTURES / "sgl-jax-pr-378-launch.txt")
    document = as_json(explain(path, "--format", "json"))
    launch = document["launch"]
    assert launch["dialect"] == "sgl-jax"
    assert launch["argv"][:2] == ["--model-path", "Qwen/Qwen3-32B"]
    assert launch["argv"][launch["argv"].index("--speculative-algorithm") + 1] == "EAGLE3"
    assert not any("SGLang version" in fact for fact in launch["unknown"])
    human = explain(path)
    assert human.returncode == 0
    assert human.stdout.decode().splitlines()[:2] == ["no known cause: the log holds no error line", "launch (sgl-jax):"]


def test_sarif_places_each_cause_at_its_log_line(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("hello\n[2026-01-02 10:11:12 TP0] RuntimeError: CUDA error: an illegal memory access was encountered\n", encoding="utf-8")
    result = explain(str(log), "--format", "sarif")
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(as_json(result), json.loads((Path(__file__).parent / "fixtures" / "sarif" / "sarif-schema-2.1.0.json").read_text()))
    results = as_json(result)["runs"][0]["results"]
    assert results[0]["ruleId"] == "DM002"
    assert results[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 2


def test_a_server_args_line_sglang_printed_gives_back_its_launch(tmp_path: Path) -> None:
    # Printed by SGLang 0.5.23's own prepare_server_args for the argv below (.venv-sglang):
    # 543 fields, of which only those off their default become flags.
    printed = (Path(__file__).parent / "fixtures" / "explain" / "sglang-0.5.23-server-args.txt").read_text(encoding="utf-8")
    result = explain("-", "--format", "json", "--sglang-version", "0.5.23", stdin=printed)
    assert as_json(result)["launch"]["argv"] == [
        "--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--cuda-graph-max-bs-decode", "8", "--speculative-algorithm", "EAGLE3",
        "--speculative-draft-model-path", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B",
    ]


def test_the_resolved_dict_sglang_0_5_23_logs_gives_back_its_launch() -> None:
    # SGLang 0.5.23's engine.py logs `server_args={...}` (_server_args_for_logging: the resolved
    # fields as a dict), not the dataclass repr; generated by its own prepare_server_args and
    # resolved_dict in .venv-sglang for the flags asserted below (fixtures/SOURCES.md).
    printed = (Path(__file__).parent / "fixtures" / "explain" / "sglang-0.5.23-server-args-dict.txt").read_text(encoding="utf-8")
    result = explain("-", "--format", "json", stdin="[2026-01-02 10:11:02] " + printed + "RuntimeError: mat1 and mat2 must have the same dtype\n")
    document = as_json(result)
    argv = document["launch"]["argv"]
    for flag, value in (("--model-path", "meta-llama/Llama-3.1-8B-Instruct"), ("--speculative-algorithm", "NGRAM"), ("--cuda-graph-max-bs-decode", "8")):
        assert argv[argv.index(flag) + 1] == value, argv
    # Resolution's values for fields the launch left unset, and the redacted watermark secrets,
    # are not the launch's: no flag for them.
    assert not {"--no-enable-tf32-matmul", "--swa-full-tokens-ratio", "--mamba-full-memory-ratio", "--watermark-config"} & set(argv), argv
    assert document["causes"][0]["rule"] == "DM001"


def _whole_server_args(release: str, **changed: object) -> str:
    """A ServerArgs repr as the release logs it: every field of its ServerArgs, at its default unless
    changed (a default that is no literal is written as a name, which explain leaves out)."""
    from specguard.serverargs_defaults import defaults_at

    defaults = defaults_at(release)
    assert defaults is not None
    fields = ", ".join(
        f"{name}={changed[name]!r}" if name in changed else f"{name}={default.value!r}" if default.is_literal else f"{name}=NOT_A_LITERAL"
        for name, default in defaults.items()
    )
    return f"[2026-01-02 10:11:02] server_args=ServerArgs({fields})"


def test_a_whole_server_args_line_dates_the_check_by_its_fields() -> None:
    from specguard.serverargs_defaults import defaults_at, releases_with_fields

    defaults = defaults_at("0.5.9")
    assert defaults is not None
    dated = releases_with_fields(defaults)
    assert "0.5.9" in dated
    line = _whole_server_args("0.5.9", model_path="meta-llama/Llama-3.1-8B-Instruct", speculative_algorithm="EAGLE3",
                              speculative_draft_model_path="lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B")
    launch = as_json(explain("-", "--format", "json", stdin=f"{line}\n"))["launch"]
    assert launch["sglang_version"] == dated[-1]
    assert any(fact.startswith(f"SGLang version {dated[0]}") for fact in launch["from_log"]), launch["from_log"]
    assert not any(fact.startswith("SGLang version") for fact in launch["unknown"])
    assert launch["argv"] == ["--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3",
                              "--speculative-draft-model-path", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B"]
    # Cut to a few fields, the line dates nothing and the check is left to the flags.
    partial = as_json(explain("-", "--format", "json", stdin=f"{OLD_SERVER_ARGS}\n"))["launch"]
    assert not any(fact.startswith("SGLang version") for fact in partial["from_log"])
