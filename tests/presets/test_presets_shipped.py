"""Every shipped preset checks clean offline and renders in each dialect it declares (real CLI)."""

from __future__ import annotations

import json

import pytest
import yaml

from specguard.presets import load, shipped_dir, shipped_names
from tests.conftest import REPO, run_cli, run_cli_json

NAMES = shipped_names()
REQUIRED = {
    "eagle3-llama3.1-8b", "sglang-eagle2-llama2-7b", "sglang-eagle2-llama3-8b-frspec", "sglang-eagle3-llama3.1-8b",
    "slime-mtp-mimo-7b-rl", "slime-mtp-deepseek-v3", "slime-mtp-deepseek-r1", "slime-mtp-glm-4.5",
    "slime-eagle3-qwen3-235b-a22b", "sglang-standalone-qwen2.5-7b", "sglang-standalone-qwen2.5-7b-specv2",
    "sglang-ngram-qwen2.5-7b", "sglang-dflash-llama3.1-8b", "sgljax-eagle3-qwen3-32b", "sglang-oom-recovery", "tiny-cpu",
}


def test_every_seed_configuration_has_a_preset():
    assert REQUIRED <= set(NAMES)


def test_shipped_dir_is_the_top_level_presets_folder():
    assert shipped_dir().resolve() == (REPO / "presets").resolve()


@pytest.mark.parametrize("name", NAMES)
def test_preset_file_name_matches_its_name(name):
    assert load(name).preset.name == name


@pytest.mark.parametrize("name", NAMES)
def test_snapshots_are_real_fixture_copies(name):
    """A snapshot is byte-identical to a fixture that SOURCES.md records: never an invented config."""
    from tests.conftest import HF_CONFIGS

    loaded = load(name)
    for ref in (loaded.preset.target, loaded.preset.draft):
        if ref is None or ref.config is None:
            continue
        snapshot = loaded.snapshot_path(ref)
        relative = snapshot.relative_to((shipped_dir() / "snapshots").resolve())
        fixture = HF_CONFIGS / relative
        if HF_CONFIGS.is_dir():
            assert snapshot.read_bytes() == fixture.read_bytes(), relative


@pytest.mark.parametrize("name", NAMES)
def test_preset_checks_clean_offline(name):
    code, document = run_cli_json("check", "--preset", name, "--offline")
    errors = [f for f in document["findings"] if f["severity"] == "error" and not f["resolved"]]
    assert code == 0 and document["ok"], errors


@pytest.mark.parametrize(("name", "dialect"), [(n, d.value) for n in NAMES for d in load(n).preset.render_dialects])
def test_preset_renders_in_each_declared_dialect(name, dialect):
    result = run_cli("render", "--preset", name, "--to", dialect)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    if dialect == "slime":
        assert "SGLANG_ARGS=(" in text
        assert "--model-path" not in text and "--tp-size" not in text
        # Only SGLang's own flags go inside the array; slime's (--hf-checkpoint, ...) go on train.py's line.
        array = text.split("SGLANG_ARGS=(\n", 1)[1].split("\n)", 1)[0]
        assert all(line.strip().startswith("--sglang-") for line in array.splitlines()), array
        assert text.rstrip().endswith((")", '"${SGLANG_ARGS[@]}"'))
    else:
        module = "sgl_jax.launch_server" if dialect == "sgl-jax" else "sglang.launch_server"
        assert f"python -m {module}" in text
        assert "--sglang-" not in text and "--hf-checkpoint" not in text


@pytest.mark.parametrize("name", NAMES)
def test_preset_renders_as_json_and_yaml(name):
    result = run_cli("render", "--preset", name, "--to", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["preset"] == name and document["argv"]
    as_yaml = run_cli("render", "--preset", name, "--to", "yaml")
    assert as_yaml.returncode == 0, as_yaml.stderr
    assert yaml.safe_load(as_yaml.stdout)["name"] == name


def test_eagle3_llama_shows_what_the_slime_guide_handles():
    """The "done when" of issue 4: dtype and context findings shown as handled, offline."""
    code, document = run_cli_json("check", "--preset", "eagle3-llama3.1-8b", "--offline")
    assert code == 0
    handled = {f["code"]: f for f in document["findings"] if f["applied"]}
    assert {"DM001", "DM002"} <= set(handled)
    assert "--sglang-dtype float16" in handled["DM001"]["message"]
    assert "--sglang-context-length 2048" in handled["DM002"]["message"]
    assert document["draft"]["dtype"] == "float16" and document["draft"]["max_position_embeddings"] == 2048
    assert document["target"]["source"].startswith("preset:eagle3-llama3.1-8b:target snapshot")
    human = run_cli("check", "--preset", "eagle3-llama3.1-8b", "--offline")
    assert human.returncode == 0 and "handled by the preset" in human.stdout


def test_presets_list_and_show():
    listed = run_cli("presets", "list")
    assert listed.returncode == 0
    for name in NAMES:
        assert name in listed.stdout
    shown = run_cli("presets", "show", "eagle3-llama3.1-8b")
    assert shown.returncode == 0, shown.stderr
    assert "sglang-speculative-num-draft-tokens: 32" in shown.stdout and "DM001" in shown.stdout


def test_user_flags_override_the_preset():
    code, document = run_cli_json("check", "--preset", "sglang-oom-recovery", "--offline", "--", "--mem-fraction-static", "0.6")
    assert code == 0
    argv = document["argv"]
    last = len(argv) - 1 - argv[::-1].index("--mem-fraction-static")
    assert argv[last + 1] == "0.6"


def test_fix_write_gives_a_preset_that_rechecks_clean(tmp_path):
    out = tmp_path / "out" / "fixed.yaml"
    result = run_cli("check", "--preset", "sglang-standalone-qwen2.5-7b", "--offline", "--fix", "--write", str(out))
    assert result.returncode == 0, result.stderr
    assert (out.parent / "snapshots" / "Qwen" / "Qwen2.5-7B-Instruct" / "config.json").is_file()
    code, document = run_cli_json("check", "--preset", str(out), "--offline")
    assert code == 0, document
    written = yaml.safe_load(out.read_text())
    assert written["flags"]["speculative-algorithm"] == "STANDALONE"


def test_a_user_preset_file_works_where_a_name_does(tmp_path):
    source = load("eagle3-llama3.1-8b")
    copy = tmp_path / "mine.yaml"
    copy.write_text(source.path.read_text().replace("config: snapshots/meta-llama/Llama-3.1-8B-Instruct/config.json", "config: llama.json"))
    (tmp_path / "llama.json").write_bytes(source.snapshot_path(source.preset.target).read_bytes())
    code, document = run_cli_json("check", "--preset", str(copy), "--offline")
    assert code == 0
    assert document["target"]["max_position_embeddings"] == 131072
    rendered = run_cli("render", "--preset", str(copy), "--to", "sglang")
    assert rendered.returncode == 0 and "--context-length 2048" in rendered.stdout
