"""The preset schema: pydantic models (specguard/presets/model.py) in strict mode, every problem of
a preset said at once with its YAML line, and the JSON Schema generated from the models, kept in
presets/preset.schema.json and named by every shipped preset's modeline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from pydantic import ValidationError

from specguard.presets import shipped_names
from specguard.presets.loader import SCHEMA_HINT
from specguard.presets.model import Preset, schema_text
from tests.conftest import REPO, run_cli

SCHEMA_FILE = REPO / "presets" / "preset.schema.json"
MODELINE = "# yaml-language-server: $schema=preset.schema.json\n"

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


def _document(**changes: Any) -> dict[str, Any]:
    return {**yaml.safe_load(GOOD), **changes}


def _problems(document: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ValidationError) as caught:
        Preset.model_validate(document)
    return [(".".join(map(str, error["loc"])), error["type"]) for error in caught.value.errors()]


def test_the_checked_in_schema_is_the_generated_one() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), "regenerate it: specguard presets schema > presets/preset.schema.json"


def test_presets_schema_prints_it() -> None:
    result = run_cli("presets", "schema")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert json.loads(result.stdout) == json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", shipped_names())
def test_a_shipped_preset_names_the_schema_and_follows_it(name: str) -> None:
    text = (REPO / "presets" / f"{name}.yaml").read_text(encoding="utf-8")
    assert text.startswith(MODELINE)
    jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))).validate(yaml.safe_load(text))


def test_the_schema_refuses_what_the_models_refuse() -> None:
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))
    for bad in (
        _document(colour="red"),
        _document(name="Mine"),
        _document(sources=[]),
        _document(runtime="vllm"),
        _document(flags={"--speculative-num-steps": 3}),
        _document(env={"SGLANG_X": 1}),
        _document(hardware={"count": 0}),
        _document(target={"model": "org/target", "facts": {"vocab_size": "1e5"}}),
    ):
        assert not validator.is_valid(bad), bad
        with pytest.raises(ValidationError):
            Preset.model_validate(bad)


# What YAML hands over where its writer meant something else: PyYAML reads 1e5 and 5.0e5 as
# strings (YAML 1.1), on/yes as booleans; strict mode converts none of them.
@pytest.mark.parametrize(
    ("facts", "where"),
    [
        ({"vocab_size": "1e5"}, "vocab_size"),
        ({"vocab_size": "٤٢"}, "vocab_size"),
        ({"vocab_size": " 8 "}, "vocab_size"),
        ({"vocab_size": True}, "vocab_size"),
        ({"vocab_size": 4096.0}, "vocab_size"),
        ({"tie_word_embeddings": " yes "}, "tie_word_embeddings"),
        ({"tie_word_embeddings": "yes"}, "tie_word_embeddings"),
        ({"tie_word_embeddings": 1}, "tie_word_embeddings"),
        ({"rope_theta": "5.0e5"}, "rope_theta"),
        ({"model_type": 7}, "model_type"),
    ],
)
def test_no_value_changes_type(facts: dict[str, Any], where: str) -> None:
    document = _document(target={"model": "org/target", "facts": facts, "facts_source": "x"})
    [(location, _)] = _problems(document)
    assert location == f"target.facts.{where}"


def test_what_yaml_typed_as_meant_is_read_as_it_is() -> None:
    preset = Preset.model_validate(
        _document(
            runtime="sgl-jax", renders=["sgl-jax", "sglang"],
            target={"model": "org/target", "facts": {"rope_theta": 500000, "vocab_size": 32000, "tie_word_embeddings": False}, "facts_source": "x"},
            flags={"i": 3, "f": 3.0, "b": True, "s": "3", "l": [1, "a", 0.5], "off": None},
        )
    )
    assert preset.target.facts is not None and preset.target.facts.rope_theta == 500000.0
    assert type(preset.target.facts.rope_theta) is float
    assert [type(value) for value in preset.flags.values()] == [int, float, bool, str, list, type(None)]
    assert [d.value for d in preset.render_dialects] == ["sgl-jax", "sglang"]


def test_every_problem_is_found_at_once() -> None:
    document = _document(
        name="Mine", sources="here", colour="red", target={"model": "", "modle": "x"},
        flags={"--speculative-num-steps": 3, "weird": {"a": 1}}, env={"1BAD": "x"}, handles=[{"rule": "DM01", "flag": "x"}],
    )
    assert sorted(_problems(document)) == sorted([
        ("name", "preset_name"), ("sources", "list_type"), ("colour", "extra_forbidden"),
        ("target.model", "string_too_short"), ("target.modle", "extra_forbidden"),
        ("flags.--speculative-num-steps.[key]", "flag_key"), ("flags.weird", "flag_value"),
        ("env.1BAD.[key]", "env_key"), ("handles.0.rule", "rule_code"),
    ])  # fmt: skip


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"target": {"model": "m", "config": "c.json", "facts": {}, "config_source": "x", "facts_source": "y"}}, "either config"),
        ({"target": {"model": "m", "config": "c.json"}}, "config_source"),
        ({"handles": [{"rule": "DM001", "flag": "tp"}]}, "'tp': not among this preset's flags"),
    ],
)
def test_a_record_that_contradicts_itself_is_refused(changes: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Preset.model_validate(_document(**changes))
    assert problem in str(caught.value)


BAD = MODELINE + """\
name: mine
description: a user's preset
sources: here
runtime: sglang
target:
  model: org/target
  facts: {vocab_size: 1e5, tie_word_embeddings: ' yes '}
  facts_source: the model card
colour: red
hardware: {count: on}
env:
  SGLANG_ENABLE_SPEC_V2: 1
"""


def test_the_cli_says_every_problem_on_its_own_line_with_its_yaml_line(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(BAD, encoding="utf-8")
    result = run_cli("check", "--preset", str(path), "--offline")
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        f"specguard: error: preset {path}: line 4: sources: Input should be a valid list",
        f"preset {path}: line 8: target.facts.vocab_size: Input should be a valid integer (YAML reads '1e5' as a string; write 100000)",
        f"preset {path}: line 8: target.facts.tie_word_embeddings: Input should be a valid boolean",
        f"preset {path}: line 10: unknown key 'colour'",
        f"preset {path}: line 11: hardware.count: Input should be a valid integer (YAML reads true/false, yes/no and on/off as booleans)",
        f"preset {path}: line 13: env.SGLANG_ENABLE_SPEC_V2: Input should be a valid string (quote it to make it a string): {SCHEMA_HINT}",
    ]
    as_json = run_cli("check", "--preset", str(path), "--offline", "--format", "json")
    assert as_json.returncode == 2 and json.loads(as_json.stdout)["error"].count("\n") == 5


def test_a_missing_key_is_said_at_the_mapping_that_lacks_it(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(MODELINE + GOOD.replace("target: {model: org/target}", "target:\n  revision: main"), encoding="utf-8")
    result = run_cli("check", "--preset", str(path), "--offline")
    assert result.returncode == 2
    assert result.stderr.startswith(f"specguard: error: preset {path}: line 6: missing key 'target.model': "), result.stderr


def _copy_of_shipped(name: str, folder: Path) -> Path:
    shutil.copytree(REPO / "presets", folder, ignore=shutil.ignore_patterns("*.yaml"))
    path = folder / f"{name}.yaml"
    shutil.copy(REPO / "presets" / f"{name}.yaml", path)
    return path


def test_the_modeline_stays_through_an_in_place_fix(tmp_path: Path) -> None:
    path = _copy_of_shipped("sglang-standalone-qwen2.5-7b-specv2", tmp_path / "mine")
    result = run_cli("check", "--preset", str(path), "--offline", "--fix", "--write", str(path), "--in-place")
    assert result.returncode in (0, 1), result.stderr
    assert path.read_text(encoding="utf-8").startswith(MODELINE)


def test_a_preset_written_elsewhere_names_the_same_schema(tmp_path: Path) -> None:
    source = _copy_of_shipped("sglang-standalone-qwen2.5-7b-specv2", tmp_path / "mine")
    out = tmp_path / "deploy" / "fixed.yaml"
    result = run_cli("check", "--preset", str(source), "--offline", "--fix", "--write", str(out))
    assert result.returncode in (0, 1), result.stderr
    assert out.read_text(encoding="utf-8").startswith("# yaml-language-server: $schema=../mine/preset.schema.json\n")


def test_presets_show_names_the_schema_by_its_absolute_path() -> None:
    shown = run_cli("presets", "show", "tiny-cpu")
    assert shown.returncode in (0, 1), shown.stderr
    assert f"# yaml-language-server: $schema={SCHEMA_FILE.resolve()}" in shown.stdout.splitlines()


def test_a_modeline_naming_a_url_or_an_absolute_path_is_left_alone() -> None:
    from specguard.presets.yaml_edit import repoint_modeline

    for schema in ("https://example.org/preset.schema.json", "/srv/schemas/preset.schema.json"):
        text = f"# yaml-language-server: $schema={schema}\nname: mine\n"
        assert repoint_modeline(text, "/a/b", "/c") == text
    moved = repoint_modeline("# yaml-language-server: $schema=preset.schema.json\nname: mine\n", "/a/b", "/a/c/d")
    assert moved == "# yaml-language-server: $schema=../../b/preset.schema.json\nname: mine\n"
