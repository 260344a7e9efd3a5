"""A preset is untrusted input: every bad one is one line on stderr, exit 2, no traceback (a flag
value SGLang refuses is a finding, like any launch's)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli

GOOD = """\
name: mine
description: a user's preset
sources: [here]
runtime: sglang
target: {model: org/target}
flags:
  speculative-algorithm: EAGLE
  speculative-num-steps: 3
"""


def _fails_cleanly(result, *needles: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    for needle in needles:
        assert needle in lines[0], lines[0]


def _write(tmp_path, text: str, name: str = "mine.yaml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_good_user_preset_checks(tmp_path):
    result = run_cli("check", "--preset", _write(tmp_path, GOOD), "--offline")
    assert result.returncode in (0, 1), result.stderr


def test_unknown_name_lists_close_matches():
    _fails_cleanly(run_cli("check", "--preset", "eagle3-llama3-8b", "--offline"), "unknown preset", "eagle3-llama3.1-8b")


@pytest.mark.parametrize(
    "args",
    [
        ("check", "--offline", "--preset", "nope-preset"),
        ("render", "--to", "sglang", "--preset", "nope-preset"),
        ("presets", "show", "nope-preset"),
    ],
)
def test_unknown_name_is_clean_in_every_command(args):
    _fails_cleanly(run_cli(*args), "unknown preset")


def test_yaml_syntax_error_names_file_and_line(tmp_path):
    path = _write(tmp_path, GOOD + "flags: [unclosed\n  - x: {\n")
    _fails_cleanly(run_cli("check", "--preset", path, "--offline"), path, "line ")


def test_unknown_key(tmp_path):
    _fails_cleanly(run_cli("check", "--preset", _write(tmp_path, GOOD + "colour: red\n"), "--offline"), "unknown key 'colour'")


def test_unknown_nested_key(tmp_path):
    text = GOOD.replace("target: {model: org/target}", "target: {model: org/target, modle: x}")
    _fails_cleanly(run_cli("check", "--preset", _write(tmp_path, text), "--offline"), "unknown key 'target.modle'")


def test_wrong_type(tmp_path):
    text = GOOD.replace("sources: [here]", "sources: here")
    _fails_cleanly(run_cli("check", "--preset", _write(tmp_path, text), "--offline"), "sources")


def test_flag_values_sglang_refuses_are_findings(tmp_path):
    # The preset file reads; its launch holds a value SGLang refuses: a finding like any launch's.
    text = GOOD.replace("speculative-num-steps: 3", "speculative-num-steps: three")
    result = run_cli("check", "--preset", _write(tmp_path, text), "--offline", "--format", "json")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    [refused] = [f for f in json.loads(result.stdout)["findings"] if f["code"] == "VB013"]
    assert refused["severity"] == "error" and "--speculative-num-steps expects an integer" in refused["message"]


def test_unknown_algorithm_value(tmp_path):
    text = GOOD.replace("speculative-algorithm: EAGLE", "speculative-algorithm: MTP")
    _fails_cleanly(run_cli("render", "--preset", _write(tmp_path, text), "--to", "sglang"), "--speculative-algorithm")


def test_snapshot_path_escaping_the_preset_dir(tmp_path):
    (tmp_path / "outside.json").write_text('{"model_type": "llama"}')
    inner = tmp_path / "presets"
    inner.mkdir()
    text = GOOD.replace(
        "target: {model: org/target}",
        "target: {model: org/target, config: ../outside.json, config_source: somewhere}",
    )
    _fails_cleanly(run_cli("check", "--preset", _write(inner, text), "--offline"), "leaves the preset's directory")


def test_absolute_snapshot_path(tmp_path):
    text = GOOD.replace("target: {model: org/target}", "target: {model: org/target, config: /etc/passwd, config_source: x}")
    _fails_cleanly(run_cli("check", "--preset", _write(tmp_path, text), "--offline"), "relative to the preset file")


def test_oversized_file(tmp_path):
    text = GOOD + "notes:\n" + "".join(f"  - note {i} {'x' * 100}\n" for i in range(3000))
    _fails_cleanly(run_cli("check", "--preset", _write(tmp_path, text), "--offline"), "KiB")


def test_alias_bomb_is_refused(tmp_path):
    bomb = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n'
    for level in "bcdefghi":
        previous = chr(ord(level) - 1)
        bomb += f"{level}: &{level} [" + ",".join([f"*{previous}"] * 9) + "]\n"
    _fails_cleanly(run_cli("check", "--preset", _write(tmp_path, bomb), "--offline"), "aliases")


def test_python_tags_are_not_executed(tmp_path):
    text = GOOD + "notes: !!python/object/apply:os.system ['echo pwned']\n"
    _fails_cleanly(run_cli("check", "--preset", _write(tmp_path, text), "--offline"), "YAML")


def test_missing_file(tmp_path):
    _fails_cleanly(run_cli("check", "--preset", str(tmp_path / "absent.yaml"), "--offline"), "does not exist")


def test_top_level_not_a_mapping(tmp_path):
    _fails_cleanly(run_cli("check", "--preset", _write(tmp_path, "- just\n- a list\n"), "--offline"), "not a mapping")


def test_json_mode_error_is_a_json_document():
    import json

    result = run_cli("check", "--preset", "nope-preset", "--offline", "--format", "json")
    assert result.returncode == 2
    assert json.loads(result.stdout)["exit_code"] == 2
