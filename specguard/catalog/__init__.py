"""The catalog: public copies of config.json shipped with specguard, for checks without a download.

``models/ORG/NAME/`` holds one model: ``config.json`` (a byte copy of a public copy of the HF file)
or ``facts.json`` (facts a shipped preset states, with its source, where no copy was found), and
``source.json`` (where the copy came from: ``repo@commit:path``, that commit's date, and the
sha256 of the bytes read from it, which the tests hold the shipped file to). A lookup
opens only the asked-for model's folder (and ``snapshot.json``, the catalog's date); ``index.json``
(every entry) is read only to list the catalog or to match a repo id whose case differs.
Rebuild with ``python scripts/build_catalog.py``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from specguard.records import Record

CATALOG = Path(__file__).resolve().parent
MODELS = CATALOG / "models"
INDEX = CATALOG / "index.json"
SNAPSHOT = CATALOG / "snapshot.json"


class CatalogEntry(Record, kw_only=False):
    model: str
    kind: str  # "config": a copy of config.json; "facts": facts a preset states
    source: str
    date: str | None
    fidelity: str
    folder: Path

    @property
    def path(self) -> Path:
        return self.folder / ("config.json" if self.kind == "config" else "facts.json")

    def document(self) -> dict[str, Any]:
        return json.loads(self.path.read_text(encoding="utf-8"))


@cache
def index() -> dict[str, Any]:
    return json.loads(INDEX.read_text(encoding="utf-8"))


@cache
def snapshot_date() -> str:
    return json.loads(SNAPSHOT.read_text(encoding="utf-8"))["snapshot_date"]


def lookup(repo_id: str) -> CatalogEntry | None:
    """The entry for ``org/name`` (hub repo ids are case-insensitive, as here), or None."""
    org, _, name = repo_id.partition("/")
    if not org or not name or "/" in name or org.startswith(".") or name.startswith("."):
        return None
    folder = MODELS / org / name
    if not (folder / "source.json").is_file():
        match = next((m["model"] for m in index()["models"] if m["model"].lower() == repo_id.lower()), None)
        if match is None:
            return None
        folder = MODELS / match
    meta = json.loads((folder / "source.json").read_text(encoding="utf-8"))
    return CatalogEntry(
        model=meta["model"], kind=meta["kind"], source=meta["source"], date=meta.get("date"),
        fidelity=meta.get("fidelity", ""), folder=folder,
    )
