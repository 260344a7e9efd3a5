"""What the CLI does with a preset: merge it into a check, show what it handles, write it back."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from specguard.errors import InputError
from specguard.inputs import CheckInputs
from specguard.models import Applicability, Dialect, Edit, Finding, Fix
from specguard.presets.loader import LoadedPreset, load, resolve_inside
from specguard.presets.model import Preset, flags_to_argv
from specguard.presets.yaml_edit import repoint_modeline
from specguard.records import replace
from specguard.spec import LaunchSpec
from specguard.text_input import (
    TooLargeError,
    read_bytes_bounded,
    refuse_unless_regular,
)


def apply_preset(name_or_path: str, inputs: CheckInputs) -> CheckInputs:
    """The preset's launch with the user's inputs on top: where both say something, the user wins.

    The preset's flags come first and the user's server args after them (argparse semantics: the
    last occurrence wins). The preset's facts stand in for a config.json that is not at hand.
    """
    loaded = load(name_or_path)
    preset = loaded.preset
    hardware = preset.hardware
    return replace(
        inputs,
        server_args=[*preset.argv(), *inputs.server_args],
        dialect=inputs.dialect or preset.flag_dialect,
        target=inputs.target or _reference(preset.target.model, preset.target.revision),
        draft=inputs.draft or (_reference(preset.draft.model, preset.draft.revision) if preset.draft else None),
        sglang_version=inputs.sglang_version or preset.sglang_version,
        gpu=inputs.gpu or hardware.gpu,
        gpu_count=inputs.gpu_count or hardware.count,
        target_fallback=loaded.facts("target"),
        draft_fallback=loaded.facts("draft"),
        preset_env={**preset.env, **dict(inputs.preset_env or {})},
    )


def _reference(model: str, revision: str | None) -> str:
    return f"{model}@{revision}" if revision and "@" not in model else model


def handled_findings(name_or_path: str, ctx: Any) -> list[Finding]:
    """Findings the preset's own flags take care of (its ``handles:``), marked applied.

    Each handling flag is taken out of the launch and its rule is run on what is left: what the
    rule says then is the problem the flag handles. A flag the user changed is not claimed.
    """
    from specguard.dialects import parse
    from specguard.rules import RULES_BY_CODE

    preset = load(name_or_path).preset
    found: list[Finding] = []
    for handled in preset.handles:
        rule = RULES_BY_CODE.get(handled.rule)
        if rule is None:
            continue
        own = parse(flags_to_argv({handled.flag: preset.flags[handled.flag]}), preset.flag_dialect)
        if not own.items:
            continue
        item = own.items[0]
        if ctx.spec.item(item.flag) is None or ctx.spec.item(item.flag).values != item.values:
            continue
        without = replace(ctx.spec, items=tuple(i for i in ctx.spec.items if i.flag != item.flag))
        bare = ctx.with_spec(without)
        if not rule.applies_to(bare):
            continue
        written = " ".join(flags_to_argv({handled.flag: preset.flags[handled.flag]}))
        for finding in rule.check(bare):
            note = f" ({handled.note})" if handled.note else ""
            handled_by = Fix(
                title=f"the preset sets {written}",
                applicability=finding.fix.applicability if finding.fix else Applicability.SAFE,
                edits=(Edit(name=item.flag, value=item.values[0] if len(item.values) == 1 else (item.values or True)),),
            )
            found.append(
                replace(finding, applied=True, resolved=True, fix=handled_by, message=f"handled by the preset's {written}{note}: {finding.message}")
            )
    return found


def preset_document(preset: Preset, corrected: LaunchSpec, *, base_env: dict[str, str]) -> dict[str, Any]:
    """The preset with its flags and env replaced by the corrected launch, in its own dialect."""
    from specguard.dialects import render

    argv = render(corrected, preset.flag_dialect)
    env = {k: v for k, v in corrected.env if k in preset.env or base_env.get(k) != v}
    document = preset.model_dump(mode="json", exclude_none=True)
    document["flags"] = argv_to_flags(argv)
    document["env"] = env
    document["handles"] = [h.model_dump(exclude_none=True) for h in preset.handles if h.flag in document["flags"]]
    return _drop_empty(document)


def argv_to_flags(argv: list[str]) -> dict[str, Any]:
    flags: dict[str, Any] = {}
    key: str | None = None
    for token in argv:
        if token.startswith("--") and len(token) > 2 and not _is_number(token):
            option, sep, inline = token[2:].partition("=")
            key = option
            flags.pop(key, None)
            flags[key] = _typed(inline) if sep else True
            continue
        if key is None:
            raise InputError(f"cannot write the positional argument {token!r} into a preset", hint="give it as a flag")
        current = flags[key]
        if current is True:
            flags[key] = _typed(token)
        elif isinstance(current, list):
            current.append(_typed(token))
        else:
            flags[key] = [current, _typed(token)]
    return flags


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _typed(token: str) -> Any:
    for kind in (int, float):
        try:
            value = kind(token)
        except ValueError:
            continue
        if str(value) == token:
            return value
    return token


def _drop_empty(document: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in document.items() if v not in ({}, [], None) or k in ("flags",)}


def dump_yaml(document: dict[str, Any]) -> str:
    import yaml

    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)


def write_corrected_preset(name_or_path: str, corrected: LaunchSpec, path: Path, *, force: bool = False, in_place: bool = False) -> None:
    """Write the corrected launch as a preset at ``path``; snapshots are copied beside it.

    Nothing the user has is lost: an existing file is replaced only with ``force`` (the preset's
    own file only with ``in_place``), a snapshot file already there is never replaced, the user's
    comments and key order survive (ruamel.yaml round trip of the preset's own text), and the file
    is written to a temporary file and renamed over, so a full disk leaves the old one whole.
    A symlink is written through: the file it points to gets the new text, the link stays.

    The file keeps every value as the user wrote it, secrets included (``--api-key``): it is a
    launch that must still run. Only what specguard prints is masked (specguard/redact.py).

    Anything but a regular file where a file is to be read or replaced (a FIFO would block the
    comparison forever, a directory cannot be compared) is refused before anything is written.
    """
    loaded = load(name_or_path)
    document = preset_document(loaded.preset, corrected, base_env=dict(os.environ))
    out = Path(path)
    # Snapshots go beside the file the preset's text goes to (through a symlink: beside its target).
    out_dir = Path(os.path.realpath(out)).parent
    refuse_unless_regular(out, f"--write {path}", hint="--write a preset YAML file")
    is_input = out.exists() and loaded.path is not None and out.resolve() == loaded.path.resolve()
    if is_input and not in_place:
        raise InputError(f"--write {path} is the preset being checked", hint="pass --in-place to rewrite it, or --write another file")
    if out.exists() and not is_input and not force:
        raise InputError(f"--write {path} already exists", hint="pass --force to replace it, or --write another file")
    text = _round_trip_yaml(loaded.path, document) if loaded.path is not None and loaded.path.is_file() else dump_yaml(document)
    # The schema the modeline names stays where it is: the copy names it from its own folder.
    text = repoint_modeline(text, str(loaded.path.resolve().parent), str(out_dir))
    copies: list[tuple[Path, Path]] = []
    for ref in (loaded.preset.target, loaded.preset.draft):
        if ref is None or ref.config is None:
            continue
        source = loaded.snapshot_source(ref)
        destination = resolve_inside(out_dir, ref.config, out)
        if source is None or source.resolve() == destination.resolve():
            continue
        if destination.exists():
            if not _same_snapshot(source, destination):
                raise InputError(f"{destination} already exists and differs from the preset's snapshot", hint="write the preset into another folder; specguard never replaces a snapshot")
            continue
        copies.append((source, destination))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for source, destination in copies:
            destination.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(destination, source.read_bytes())
        write_atomically(out, text.encode("utf-8"))
    except OSError as error:
        raise InputError(f"cannot write the corrected preset to {path} ({error.strerror or error.__class__.__name__}); nothing was replaced", hint="check the directory and the free space") from None


def _same_snapshot(source: Path, destination: Path) -> bool:
    """Whether the file at ``destination`` holds the snapshot's bytes; anything but a regular
    file there is refused with one line (a FIFO would block a plain read forever)."""
    from specguard.facts import MAX_CONFIG_BYTES

    label = f"{destination}, where the preset's snapshot goes,"
    try:
        present = read_bytes_bounded(destination, label, limit=MAX_CONFIG_BYTES, hint="move it away, or write the preset into another folder")
    except TooLargeError:
        return False  # larger than any snapshot can be: not the same
    return present == source.read_bytes()


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, flush it to disk, then rename it over
    ``path``: a failure at any point leaves ``path`` as it was. A symlink at ``path`` is followed:
    the temporary file goes beside the file it points to and replaces that file, so the user's
    link (to a preset kept elsewhere, say) stays a link, and the file behind it gets the new text."""
    import tempfile

    path = Path(os.path.realpath(path))
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        view = memoryview(data)
        while view:
            written = os.write(descriptor, view)
            view = view[written:]
        os.fsync(descriptor)
        os.close(descriptor)
        descriptor = -1
        if path.exists():
            shutil.copymode(path, temporary)
        os.replace(temporary, path)
    except BaseException:
        if descriptor >= 0:
            os.close(descriptor)
        Path(temporary).unlink(missing_ok=True)
        raise


def _round_trip_yaml(original: Path, document: dict[str, Any]) -> str:
    """The preset's own YAML text with ``document``'s values put in, line by line, so that the
    user's comments, order, indentation and wrapping stay where they were (positions from
    ruamel.yaml's round-trip mode; presets/yaml_edit.py)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError

    from specguard.presets.loader import MAX_PRESET_BYTES
    from specguard.presets.yaml_edit import edit_sections
    from specguard.text_input import read_text_bounded

    yaml = YAML()
    text = read_text_bounded(original, f"preset {original}", limit=MAX_PRESET_BYTES, hint="a preset is a short YAML file")
    try:
        tree = yaml.load(text)
    except MarkedYAMLError as error:
        # The loader has read this text already, so this is what ruamel.yaml alone refuses; its
        # message can quote a value (a secret), so only the line is said.
        mark = error.problem_mark or error.context_mark
        where = f": line {mark.line + 1}" if mark else ""
        raise InputError(f"preset {original}{where}: ruamel.yaml cannot rewrite it ({error.__class__.__name__})", hint="fix the YAML there") from None
    # Only the values a correction changes are touched, as text: the rest stays as the user wrote it.
    return edit_sections(text, tree, document, CORRECTED_KEYS, renames=_renamed_flag)


def _renamed_flag(key: str) -> tuple[str, ...]:
    """A preset flag's other names across SGLang releases (``cuda-graph-max-bs`` -> ``-decode``)."""
    from specguard.versions import history

    return tuple(other.removeprefix("--") for other in history().renamed(f"--{key}"))


CORRECTED_KEYS = ("flags", "env", "handles")


def render_dialects(loaded: LoadedPreset) -> list[Dialect]:
    return loaded.preset.render_dialects
