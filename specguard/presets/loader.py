"""Find and read presets: shipped ones by name, a user's by path. Untrusted input throughout.

- YAML is read with ``yaml.safe_load`` only (no Python objects), from a regular file of at most
  ``MAX_PRESET_BYTES`` (which also bounds what an alias bomb can expand to: a bounded
  document with more than ``MAX_ALIASES`` aliases is refused before it is built). A key given
  twice in one mapping is refused with both lines (PyYAML would keep the last one silently,
  and the round trip that rewrites a preset refuses it anyway).
- A path inside a preset (a config.json snapshot) is resolved relative to the preset file and
  refused if it leaves that file's directory. A snapshot that is not there (a preset saved from
  `presets show` into another folder) is looked up by the model's id among the snapshots shipped
  with specguard, then in its catalog; nothing else is ever read.
- The document is validated by the pydantic models of presets/model.py, which report every
  problem at once; each is said on its own line with the YAML line of its key
  (``PresetProblems``).
- Every failure is an ``InputError``: one line naming the file (and line), exit code 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specguard.errors import InputError
from specguard.facts import MAX_CONFIG_BYTES, catalog_facts, facts_from_config
from specguard.folders import escape
from specguard.json_input import parse_json
from specguard.models import ModelFacts
from specguard.presets.model import ModelRef, Preset
from specguard.refs import looks_like_repo_id
from specguard.spelling import closest
from specguard.text_input import file_kind, read_text_bounded

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

MAX_PRESET_BYTES = 256 * 1024
MAX_ALIASES = 64
SUFFIXES = (".yaml", ".yml")


def shipped_dir() -> Path:
    """The presets that ship with specguard: ``presets/`` at the top of the source tree, copied
    into the package as ``specguard/presets/_shipped`` when it is built (a symlink in the tree)."""
    return Path(__file__).resolve().parent / "_shipped"


@dataclass(frozen=True)
class LoadedPreset:
    preset: Preset
    path: Path

    @property
    def label(self) -> str:
        return self.preset.name

    def snapshot_path(self, ref: ModelRef) -> Path | None:
        if ref.config is None:
            return None
        # Beside the file itself: a preset reached through a symlink keeps its snapshots with it.
        return resolve_inside(self.path.resolve().parent, ref.config, self.path)

    def snapshot_source(self, ref: ModelRef) -> Path | None:
        """The config.json the facts for ``ref`` are read from: the snapshot beside the preset, else
        (a preset saved elsewhere, e.g. `presets show NAME > mine.yaml`, leaves its snapshots behind)
        the one specguard ships for the same model id; None when neither is there."""
        snapshot = self.snapshot_path(ref)
        if snapshot is None or snapshot.exists():
            return snapshot
        return shipped_snapshot(ref.model)

    def facts(self, role: str) -> ModelFacts | None:
        """The facts the preset carries for ``target`` or ``draft``: its snapshot (the catalog's copy of
        the model when no snapshot is at hand), else its stated facts."""
        ref = self.preset.target if role == "target" else self.preset.draft
        if ref is None:
            return None
        snapshot = self.snapshot_path(ref)
        if snapshot is not None:
            source = self.snapshot_source(ref)
            if source == snapshot:
                return self._snapshot_facts(ref, role, snapshot)
            why = f"{ref.config} is not beside {self.path}"
            if source is not None:
                return self._snapshot_facts(ref, role, source, f"{why}: specguard's own snapshot of {ref.model} stood in ({source})")
            return self._catalog_facts(ref, role, snapshot, why)
        if ref.facts is not None:
            return ModelFacts(
                source=f"preset:{self.label}:{role} facts for {ref.model}",
                origin="preset",
                revision=ref.revision,
                **ref.facts.as_model_facts_kwargs(),
            )
        return ModelFacts(source=f"preset:{self.label}:{role} {ref.model} (no facts stated)", origin="preset", revision=ref.revision)

    def _snapshot_facts(self, ref: ModelRef, role: str, snapshot: Path, detail: str | None = None) -> ModelFacts:
        origin = (ref.config_source or "").split(":", 1)[0].strip()
        provenance = f" ({origin})" if origin else ""
        return facts_from_config(
            _read_snapshot(snapshot, self.path), source=f"preset:{self.label}:{role} snapshot of {ref.model}{provenance}",
            revision=ref.revision, origin="preset", origin_detail=detail, where=snapshot,
        )

    def _catalog_facts(self, ref: ModelRef, role: str, missing: Path, why: str) -> ModelFacts:
        found = catalog_facts(ref.model, source=f"preset:{self.label}:{role} {ref.model}", revision=ref.revision, reason=why) if looks_like_repo_id(ref.model) else None
        if found is None:
            raise InputError(
                f"preset {self.path}: snapshot {missing} does not exist, and specguard has no copy of {ref.model} to stand in",
                hint="put the config.json there, or fix config: in the preset",
            )
        return found


def shipped_snapshot(model: str) -> Path | None:
    """The config.json snapshot shipped for a hub model id (``snapshots/ORG/NAME/config.json``), if any."""
    if not looks_like_repo_id(model) or ".." in model.split("/"):
        return None
    candidate = shipped_dir() / "snapshots" / model / "config.json"
    return candidate if candidate.is_file() else None


def shipped_names() -> list[str]:
    directory = shipped_dir()
    if not directory.is_dir():
        return []
    return sorted(p.stem for p in directory.iterdir() if p.suffix in SUFFIXES and p.is_file())


def looks_like_path(name_or_path: str) -> bool:
    return name_or_path.endswith(SUFFIXES) or "/" in name_or_path or "\\" in name_or_path


def locate(name_or_path: str) -> Path:
    """A shipped preset's file by name, or the user's preset file by path."""
    if looks_like_path(name_or_path) or Path(name_or_path).is_file():
        path = Path(name_or_path).expanduser()
        if path.exists() and not path.is_file():
            raise InputError(f"preset file {name_or_path} is {file_kind(path.stat().st_mode)}, not a file", hint="give a preset YAML file")
        if not path.is_file():
            raise InputError(f"preset file {name_or_path} does not exist", hint="check the path, or give a shipped preset name (specguard presets list)")
        return path
    names = shipped_names()
    if name_or_path in names:
        for suffix in SUFFIXES:
            candidate = shipped_dir() / f"{name_or_path}{suffix}"
            if candidate.is_file():
                return candidate
    close = closest(name_or_path, names, count=3, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}?" if close else "run `specguard presets list` for the names, or give a preset YAML file"
    raise InputError(f"unknown preset {name_or_path!r}", hint=hint)


def load(name_or_path: str) -> LoadedPreset:
    path = locate(name_or_path)
    try:
        stat = path.stat()
    except OSError as error:
        raise InputError(f"cannot read preset {path} ({error.__class__.__name__})", hint="check the file's permissions") from None
    return _load(path, stat.st_mtime_ns, stat.st_size)


@cache
def _load(path: Path, mtime_ns: int, size: int) -> LoadedPreset:
    """One read and validation per preset file and version of it: a check asks for its preset
    several times (the launch, the facts, the findings it handles)."""
    from pydantic import ValidationError

    document, root = read_yaml(path)
    try:
        preset = Preset.model_validate(document)
    except ValidationError as error:
        said = sorted((_said(problem, root) for problem in error.errors(include_url=False)), key=lambda line_said: line_said[0])
        raise PresetProblems(path, [f"line {line}: {what}" for line, what in said]) from None
    loaded = LoadedPreset(preset=preset, path=path)
    _validate_references(loaded)
    return loaded


def read_yaml(path: Path) -> tuple[dict[str, Any], Any]:
    """The document, and its node tree (which knows each key's line)."""
    import yaml  # only when a preset is used: keeps `check` without --preset fast

    text = read_text_bounded(path, f"preset {path}", limit=MAX_PRESET_BYTES, hint="a preset is a short YAML file")
    try:
        if _count_aliases(yaml, text) > MAX_ALIASES:
            raise InputError(f"preset {path} uses more than {MAX_ALIASES} YAML aliases", hint="write the values out")
        # What yaml.load does, keeping the node tree; a safe loader: libyaml's or PyYAML's.
        loader = _unique_keys_loader(yaml)(text)
        try:
            root = loader.get_single_node()
            document = loader.construct_document(root) if root is not None else None
        finally:
            loader.dispose()
    except DuplicateKey as error:
        raise InputError(f"preset {path}: line {error.line}: {error}", hint="keep one of them") from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise InputError(f"preset {path}:{where}: YAML syntax error ({error.problem or error.context})", hint="fix the YAML") from None
    except yaml.YAMLError as error:
        raise InputError(f"preset {path}: not valid YAML ({error.__class__.__name__})", hint="fix the YAML") from None
    if not isinstance(document, dict):
        raise InputError(f"preset {path} holds a YAML {type(document).__name__}, not a mapping", hint="a preset starts with name:, description:, ...")
    return document, root


def _count_aliases(yaml: Any, text: str) -> int:
    return sum(1 for token in yaml.scan(text, Loader=_safe_loader(yaml)) if isinstance(token, yaml.AliasToken))


class DuplicateKey(Exception):
    """A key given twice in one YAML mapping: the message names it and both lines."""

    def __init__(self, key: str, line: int, first_line: int) -> None:
        super().__init__(f"the key {key!r} is given twice in one mapping (first on line {first_line})")
        self.key, self.line, self.first_line = key, line, first_line


@cache
def _unique_keys_loader(yaml: Any) -> Any:
    """The safe loader, refusing a key given twice in one mapping."""

    class UniqueKeys(_safe_loader(yaml)):  # type: ignore[misc]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            first: dict[tuple[str, str], int] = {}
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key, line = (key_node.tag, key_node.value), key_node.start_mark.line + 1
                if key in first:
                    raise DuplicateKey(key_node.value, line, first[key])
                first[key] = line
            return super().construct_mapping(node, deep=deep)

    return UniqueKeys


def _safe_loader(yaml: Any) -> Any:
    """libyaml's safe loader where PyYAML was built with it (its wheels are), else PyYAML's own:
    the same documents and errors, about ten times faster on a preset."""
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


SCHEMA_HINT = "`specguard presets schema` prints what a preset may hold"


class PresetProblems(InputError):
    """Every problem the schema finds in a preset, one line each: ``preset FILE: line N: ...``."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        lines = [f"preset {path}: {problem}" for problem in problems]
        super().__init__("\n".join(lines), hint=SCHEMA_HINT)
        self.problems = problems


def _said(problem: ErrorDetails, root: Any) -> tuple[int, str]:
    """One of pydantic's errors: the line of its key, and ``KEY: what is wrong``."""
    location = problem["loc"]
    is_key = bool(location) and location[-1] == "[key]"  # a dict key refused, not its value
    if is_key:
        location = location[:-1]
    where = ".".join(str(part) for part in location)
    line = _line_of(root, location)
    if problem["type"] == "extra_forbidden":
        return line, f"unknown key {where!r}"
    if problem["type"] == "missing":
        return line, f"missing key {where!r}"
    said = f"{problem['msg']}{_yaml_tip(problem)}"
    if is_key:
        return line, f"{'.'.join(str(part) for part in location[:-1])}: key {location[-1]!r}: {said}"
    return line, f"{where or '(top level)'}: {said}"


def _yaml_tip(problem: ErrorDetails) -> str:
    """Why a value YAML typed otherwise than its writer meant is refused, and how to write it."""
    value, kind = problem.get("input"), problem["type"]
    if kind in ("int_type", "float_type") and isinstance(value, str) and value.isascii():
        try:
            number = float(value)
        except ValueError:
            return ""
        if kind == "int_type" and not number.is_integer():
            return ""
        written = str(int(number)) if kind == "int_type" else repr(number)
        return f" (YAML reads {value!r} as a string; write {written})"
    if kind == "int_type" and isinstance(value, float) and value.is_integer():
        return f" (write {int(value)})"
    if kind in ("int_type", "float_type") and isinstance(value, bool):
        return " (YAML reads true/false, yes/no and on/off as booleans)"
    if kind == "string_type" and isinstance(value, (bool, int, float)):
        return " (quote it to make it a string)"
    return ""


def _line_of(root: Any, location: tuple[str | int, ...]) -> int:
    """The line of the key at ``location`` in the YAML node tree, or of the deepest mapping or
    list item on the way to it that is there (a missing key: the mapping that lacks it)."""
    from yaml import MappingNode, ScalarNode, SequenceNode

    node, line = root, root.start_mark.line + 1
    for part in location:
        child = None
        if isinstance(node, MappingNode):
            for key, value in node.value:
                if isinstance(key, ScalarNode) and key.value == str(part):
                    child, line = value, key.start_mark.line + 1
        elif isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            child = node.value[part]
            line = child.start_mark.line + 1
        if child is None:
            break
        node = child
    return line


def resolve_inside(base: Path, relative: str, preset_path: Path) -> Path:
    """``relative`` under ``base``; refused if it is absolute or leaves ``base`` (symlinks included)."""
    candidate = Path(relative)
    if candidate.is_absolute() or relative.startswith("~"):
        raise InputError(f"preset {preset_path}: {relative!r} must be a path relative to the preset file", hint="put the snapshot beside the preset")
    problem = escape(base, relative)
    if problem is not None:
        raise InputError(f"preset {preset_path}: {relative!r} leaves the preset's directory ({problem})", hint="a preset may only name files under its own directory")
    return (base.resolve() / candidate).resolve()


def _read_snapshot(path: Path, preset_path: Path) -> dict[str, Any]:
    if not path.exists():
        raise InputError(f"preset {preset_path}: snapshot {path} does not exist", hint="check config: in the preset")
    label = f"preset {preset_path}: snapshot {path}"
    config = parse_json(read_text_bounded(path, label, limit=MAX_CONFIG_BYTES, hint="check config: in the preset"), label, hint="check config: in the preset")
    if not isinstance(config, dict):
        raise InputError(f"preset {preset_path}: snapshot {path} is not a JSON object", hint="a config.json is a JSON object")
    return config


def _validate_references(loaded: LoadedPreset) -> None:
    """Fail at load time, naming the preset, for a snapshot that escapes or a flag that does not parse."""
    from specguard.dialects import parse

    for role in ("target", "draft"):
        loaded.facts(role)
    try:
        parse(loaded.preset.argv(), loaded.preset.flag_dialect)
    except InputError as error:
        raise InputError(f"preset {loaded.path}: flags: {error.message}", hint=error.hint or "fix the flag in the preset") from None
