"""Presets: known launch configurations as validated YAML that check, render and launch offline.

``apply_preset`` merges a preset into a check's inputs, ``handled_findings`` shows what the
preset's own flags take care of, ``write_corrected_preset`` writes a check's corrected launch
back as a preset. The shipped presets live in ``presets/`` at the top of the source tree.
"""

from __future__ import annotations

from specguard.presets.commands import (
    apply_preset,
    handled_findings,
    write_corrected_preset,
)
from specguard.presets.loader import LoadedPreset, load, shipped_dir, shipped_names
from specguard.presets.model import Preset

__all__ = [
    "LoadedPreset",
    "Preset",
    "apply_preset",
    "handled_findings",
    "load",
    "shipped_dir",
    "shipped_names",
    "write_corrected_preset",
]
