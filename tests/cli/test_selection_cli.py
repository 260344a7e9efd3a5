"""--select/--ignore/--extend-select, the settings file and `# specguard: ignore` comments, run
through the real CLI on real files (specguard/selection.py, project_config.py, suppressions.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import HF_CONFIGS, run_cli

LLAMA = HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct"
QWEN = HF_CONFIGS / "Qwen" / "Qwen2.5-7B-Instruct"
# SP006 (perf, a warning): speculative parameters without an algorithm. RS001 is never on it.
SPEC_PARAMS = ["--model-path", str(LLAMA), "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]


def findings(*args: str, cwd: Path | None = None) -> tuple[int, dict[str, str]]:
    """(exit code, {code: severity}) of a JSON check of one launch."""
    result = run_cli("check", "--offline", "--format", "json", *args, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr + result.stdout
    document = json.loads(result.stdout)
    launch = document["launches"][0] if "launches" in document else document
    return result.returncode, {f["code"]: f["severity"] for f in launch["findings"]}


def error_line(*args: str, cwd: Path | None = None) -> str:
    result = run_cli("check", "--offline", *args, cwd=cwd)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    return lines[0]


def script(folder: Path, *comments: str) -> Path:
    """A launch script holding SP006's launch, one argument a line; ``comments[i]`` ends line i."""
    lines = ["--model-path " + str(LLAMA), "--speculative-num-steps 3", "--speculative-eagle-topk 1", "--speculative-num-draft-tokens 4"]
    body = "\n".join(f"  {line}  {comments[i] if i < len(comments) else ''}".rstrip() for i, line in enumerate(lines))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "run.sh"
    path.write_text(f'#!/bin/bash\nARGS=(\n{body}\n)\npython -m sglang.launch_server "${{ARGS[@]}}"\n', encoding="utf-8")
    return path


# --- selectors on the command line --------------------------------------------------------


def test_perf_is_quiet_by_default_and_select_perf_brings_it_back_as_a_warning() -> None:
    assert findings("--", *SPEC_PARAMS)[1]["SP006"] == "info"
    assert findings("--select", "perf", "--", *SPEC_PARAMS)[1] == {"SP006": "warning"}
    assert findings("--extend-select", "perf", "--", *SPEC_PARAMS)[1]["SP006"] == "warning"


@pytest.mark.parametrize("selector", ["SP006", "SP", "SP00", "sp006"])
def test_select_by_code_or_prefix(selector: str) -> None:
    assert findings("--select", selector, "--", *SPEC_PARAMS)[1] == {"SP006": "warning"}


def test_ignore_and_the_more_specific_selector() -> None:
    assert "SP006" not in findings("--ignore", "SP006", "--", *SPEC_PARAMS)[1]
    assert "SP006" not in findings("--select", "perf", "--ignore", "SP0", "--", *SPEC_PARAMS)[1]
    assert findings("--select", "SP006", "--ignore", "perf", "--", *SPEC_PARAMS)[1] == {"SP006": "warning"}
    assert findings("--select", "SV,SP006", "--", *SPEC_PARAMS)[1] == {"SP006": "warning"}


def test_an_ignored_error_does_not_fail_the_check() -> None:
    launch = ["--model-path", str(QWEN), "--speculative-algorithm", "NGRAM", "--attention-backend", "torch_native"]
    code, found = findings("--", *launch)
    assert code == 1 and found["AB007"] == "error"
    code, found = findings("--ignore", "AB007", "--", *launch)
    assert code == 0 and "AB007" not in found


def test_an_unknown_selector_is_one_line_with_a_suggestion() -> None:
    assert error_line("--select", "pref", "--", *SPEC_PARAMS) == "specguard: error: --select: no rule, prefix or category 'pref': did you mean perf?"
    assert error_line("--ignore", "SP0006", "--", *SPEC_PARAMS).startswith("specguard: error: --ignore: no rule, prefix or category 'SP0006'")


# --- the settings file ----------------------------------------------------------------------


def test_specguard_toml_and_pyproject_are_found_walking_up_from_the_script(tmp_path: Path) -> None:
    run = script(tmp_path / "proj" / "scripts")
    (tmp_path / "proj" / "pyproject.toml").write_text('[tool.specguard]\nextend-select = ["perf"]\n', encoding="utf-8")
    assert findings("--script", str(run))[1]["SP006"] == "warning"
    (tmp_path / "specguard.toml").write_text('ignore = ["SP006"]\n', encoding="utf-8")  # farther: not read
    assert findings("--script", str(run))[1]["SP006"] == "warning"
    (tmp_path / "proj" / "specguard.toml").write_text('ignore = ["SP006"]\n', encoding="utf-8")  # same folder: before pyproject
    assert "SP006" not in findings("--script", str(run))[1]
    (tmp_path / "proj" / "scripts" / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")  # no [tool.specguard]
    assert "SP006" not in findings("--script", str(run))[1]
    (tmp_path / "proj" / "scripts" / "specguard.toml").write_text('select = ["SP006"]\n', encoding="utf-8")  # nearest wins
    assert findings("--script", str(run))[1] == {"SP006": "warning"}


def test_the_command_line_overrides_the_file_and_a_command_line_launch_reads_the_current_folder(tmp_path: Path) -> None:
    (tmp_path / "specguard.toml").write_text('select = ["SV001"]\n', encoding="utf-8")
    assert findings("--", *SPEC_PARAMS, cwd=tmp_path)[1] == {}
    assert findings("--select", "SP006", "--", *SPEC_PARAMS, cwd=tmp_path)[1] == {"SP006": "warning"}
    assert findings("--extend-select", "SP006", "--", *SPEC_PARAMS, cwd=tmp_path)[1] == {"SP006": "warning"}


def test_per_file_ignores_match_the_checked_file_below_the_settings(tmp_path: Path) -> None:
    run = script(tmp_path / "scripts")
    (tmp_path / "specguard.toml").write_text('extend-select = ["perf"]\n[per-file-ignores]\n"scripts/*.sh" = ["SP006"]\n"other/*" = ["SV"]\n', encoding="utf-8")
    assert "SP006" not in findings("--script", str(run))[1]
    (tmp_path / "specguard.toml").write_text('extend-select = ["perf"]\n[per-file-ignores]\n"*.yaml" = ["SP006"]\n', encoding="utf-8")
    assert findings("--script", str(run))[1]["SP006"] == "warning"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("select = [", "specguard.toml: not valid TOML"),
        ('selct = ["SP006"]\n', "specguard.toml: selct: unknown setting: did you mean select?"),
        ('select = "SP006"\n', "specguard.toml: select: must be a list of rule codes, prefixes or categories"),
        ('ignore = ["SP0006"]\n', "specguard.toml: ignore: no rule, prefix or category 'SP0006'"),
        ('[per-file-ignores]\n"*.sh" = ["XQ"]\n', "specguard.toml: per-file-ignores.*.sh: no rule, prefix or category 'XQ'"),
    ],
)
def test_a_malformed_settings_file_is_one_line_naming_the_file_and_key(tmp_path: Path, text: str, expected: str) -> None:
    (tmp_path / "specguard.toml").write_text(text, encoding="utf-8")
    line = error_line("--", *SPEC_PARAMS, cwd=tmp_path)
    assert line.startswith("specguard: error: " + str(tmp_path.resolve() / expected)), line


def test_pyproject_errors_name_the_tool_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.specguard]\nextend_select = ["perf"]\n', encoding="utf-8")
    line = error_line("--", *SPEC_PARAMS, cwd=tmp_path)
    assert "pyproject.toml: tool.specguard.extend_select: unknown setting: did you mean extend-select?" in line


# --- `# specguard: ignore` comments ---------------------------------------------------------


@pytest.mark.parametrize("comment", ["# specguard: ignore[SP006]", "# specguard: ignore[MM003, SP006]", "# specguard: ignore"])
def test_a_comment_on_a_flags_line_suppresses_its_findings(tmp_path: Path, comment: str) -> None:
    run = script(tmp_path, "", "", comment)  # on --speculative-eagle-topk's line
    assert "SP006" not in findings("--select", "perf", "--script", str(run))[1]


def test_a_comment_for_another_rule_or_another_line_suppresses_nothing(tmp_path: Path) -> None:
    assert findings("--select", "perf", "--script", str(script(tmp_path / "a", "", "", "# specguard: ignore[MM003]")))[1] == {"SP006": "warning"}
    assert findings("--select", "perf", "--script", str(script(tmp_path / "b", "# specguard: ignore[SP006]")))[1] == {"SP006": "warning"}


def test_show_suppressed_lists_them_and_they_do_not_count_for_the_exit_code(tmp_path: Path) -> None:
    preset = tmp_path / "ngram.yaml"
    preset.write_text(
        f"name: ngram-torch-native\ndescription: NGRAM on torch_native\nsources: [test]\nruntime: sglang\ntarget:\n  model: {QWEN}\n"
        f"flags:\n  model-path: {QWEN}\n  speculative-algorithm: NGRAM\n  attention-backend: torch_native  # specguard: ignore[AB007]\n",
        encoding="utf-8",
    )
    result = run_cli("check", "--offline", "--format", "json", "--show-suppressed", "--preset", str(preset))
    document = json.loads(result.stdout)
    assert result.returncode == 0 and document["exit_code"] == 0
    assert [f["code"] for f in document["suppressed"]] == ["AB007"] and "AB007" not in {f["code"] for f in document["findings"]}
    human = run_cli("check", "--offline", "--show-suppressed", "--preset", str(preset))
    assert human.returncode == 0 and "suppressed:" in human.stdout and "AB007 torch-native-disables-cuda-graph (error)" in human.stdout
    quiet = run_cli("check", "--offline", "--preset", str(preset))
    assert "1 finding(s) suppressed" in quiet.stdout and "AB007" not in quiet.stdout


def test_sarif_keeps_a_suppressed_finding_marked_as_suppressed_in_source(tmp_path: Path) -> None:
    import jsonschema

    preset = tmp_path / "ngram.yaml"
    preset.write_text(
        f"name: ngram-torch-native\ndescription: NGRAM on torch_native\nsources: [test]\nruntime: sglang\ntarget:\n  model: {QWEN}\n"
        f"flags:\n  model-path: {QWEN}\n  speculative-algorithm: NGRAM\n  attention-backend: torch_native  # specguard: ignore[AB007]\n",
        encoding="utf-8",
    )
    result = run_cli("check", "--offline", "--format", "sarif", "--preset", str(preset))
    document = json.loads(result.stdout)
    schema = json.loads((Path(__file__).parent / "fixtures" / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.validate(document, schema)
    ab007 = [r for r in document["runs"][0]["results"] if r["ruleId"] == "AB007"]
    assert result.returncode == 0 and len(ab007) == 1, result.stdout
    assert ab007[0]["suppressions"] == [{"kind": "inSource"}] and ab007[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 10
    assert all("suppressions" not in r for r in document["runs"][0]["results"] if r["ruleId"] != "AB007")


def test_check_help_documents_selection() -> None:
    text = run_cli("check", "--help").stdout
    assert all(option in text for option in ("--select", "--extend-select", "--ignore", "--show-suppressed", "specguard: ignore[MM003]", "[tool.specguard]"))


def test_launch_takes_the_selectors_and_a_presets_comments(tmp_path: Path) -> None:
    launch = ["--model-path", str(QWEN), "--speculative-algorithm", "NGRAM", "--attention-backend", "torch_native"]
    assert run_cli("launch", "--dry-run", "--offline", "--", *launch).returncode == 1  # AB007 blocks it
    assert run_cli("launch", "--dry-run", "--offline", "--ignore", "AB007", "--", *launch).returncode == 0
    assert run_cli("launch", "--dry-run", "--offline", "--select", "pref", "--", *launch).returncode == 2


def test_a_suppressed_findings_fix_is_not_applied(tmp_path: Path) -> None:
    def corrected(comment: str) -> list[str]:
        run = tmp_path / "run.sh"
        run.write_text(
            f'ARGS=(\n  --model-path {QWEN}\n  --speculative-algorithm NGRAM\n  --cuda-graph-max-bs 8  {comment}\n)\npython -m sglang.launch_server "${{ARGS[@]}}"\n',
            encoding="utf-8",
        )
        result = run_cli("check", "--offline", "--fix", "--format", "json", "--script", str(run))
        return json.loads(result.stdout)["launches"][0]["argv"]

    assert "--cuda-graph-max-bs-decode" in corrected("")  # VB003 renames the flag
    assert "--cuda-graph-max-bs" in corrected("# specguard: ignore[VB003]")


def test_render_takes_the_selectors_and_the_presets_comments(tmp_path: Path) -> None:
    flags = f"flags:\n  model-path: {QWEN}\n  speculative-algorithm: NGRAM\n  attention-backend: torch_native"
    head = f"name: n\ndescription: d\nsources: [test]\nruntime: sglang\ntarget:\n  model: {QWEN}\n"
    (tmp_path / "plain.yaml").write_text(f"{head}{flags}\n", encoding="utf-8")
    (tmp_path / "marked.yaml").write_text(f"{head}{flags}  # specguard: ignore[AB007]\n", encoding="utf-8")
    assert run_cli("render", "--preset", str(tmp_path / "plain.yaml"), "--to", "sglang").returncode == 1
    assert run_cli("render", "--preset", str(tmp_path / "plain.yaml"), "--to", "sglang", "--ignore", "AB007").returncode == 0
    assert run_cli("render", "--preset", str(tmp_path / "marked.yaml"), "--to", "sglang").returncode == 0
