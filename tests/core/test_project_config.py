"""Finding and reading specguard.toml / [tool.specguard] (specguard/project_config.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from specguard.errors import InputError
from specguard.project_config import find_settings, read_settings


def test_the_closest_file_wins_and_specguard_toml_before_pyproject(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    (tmp_path / "specguard.toml").write_text("", encoding="utf-8")
    assert find_settings(deep) == (tmp_path / "specguard.toml").resolve()
    (tmp_path / "a" / "pyproject.toml").write_text('[project]\nname = "x"\n[project.scripts]\nspecguard = "m:f"\n', encoding="utf-8")
    assert find_settings(deep) == (tmp_path / "specguard.toml").resolve()  # no [tool.specguard]: passed over
    (tmp_path / "a" / "pyproject.toml").write_text('[tool.specguard]\nignore = ["MM"]\n', encoding="utf-8")
    assert find_settings(deep) == (tmp_path / "a" / "pyproject.toml").resolve()
    (tmp_path / "a" / "specguard.toml").write_text("", encoding="utf-8")
    assert find_settings(deep) == (tmp_path / "a" / "specguard.toml").resolve()


def test_read_settings_and_per_file_ignores(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text('[tool.specguard]\nselect = ["MM"]\nextend-select = ["perf"]\n[tool.specguard.per-file-ignores]\n"scripts/*.sh" = ["MM003"]\n"*.yaml" = ["SV"]\n', encoding="utf-8")
    settings = read_settings(path)
    assert settings.select == ("MM",) and settings.extend_select == ("perf",) and settings.ignore == ()
    assert settings.ignores_for(tmp_path / "scripts" / "run.sh") == ("MM003",)
    assert settings.ignores_for(tmp_path / "deep" / "p.yaml") == ("SV",)
    assert settings.ignores_for(tmp_path / "run.sh") == ()
    assert settings.ignores_for(None) == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("select = [1]\n", "select: must be a list"),
        ("per-file-ignores = []\n", "per-file-ignores: must be a table"),
        ('[per-file-ignores]\n"*.sh" = "MM"\n', "per-file-ignores.*.sh: must be a list"),
        ("ignore-all = true\n", "ignore-all: unknown setting"),
    ],
)
def test_malformed_settings(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "specguard.toml").write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as error:
        read_settings(tmp_path / "specguard.toml")
    assert error.value.one_line().startswith(f"{tmp_path / 'specguard.toml'}: {message}")
