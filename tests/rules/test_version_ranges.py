"""Rules' version ranges are evaluated exactly as packaging's SpecifierSet would."""

from __future__ import annotations

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from specguard.rules import ALL_RULES
from specguard.rules.base import version_in_range

VERSIONS = [f"0.4.{i}" for i in range(11)] + [f"0.5.{i}" for i in range(30)] + ["0.5.1.post3", "0.5.23rc1", "0.6.0", "1.0.0"]
RANGES = sorted({r.sglang_versions for r in ALL_RULES if r.sglang_versions} | {">=0.5.1,<0.5.14", "!=0.5.3", "<=0.5.2", ">0.5.20"})


@pytest.mark.parametrize("specifier", RANGES)
def test_matches_packaging(specifier: str) -> None:
    for raw in VERSIONS:
        version = Version(raw)
        assert version_in_range(specifier, version) == SpecifierSet(specifier).contains(version, prereleases=True), (specifier, raw)


@pytest.mark.parametrize("specifier", ["~=0.5.1", "==0.5.*", "0.5.1"])
def test_unsupported_forms_are_refused(specifier: str) -> None:
    with pytest.raises(ValueError):
        version_in_range(specifier, Version("0.5.1"))
