"""What the CLI does with a preset: merge it into a check, show what it handles, write it back."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

from specguard.errors import InputError
from specguard.inputs import CheckInputs
from specguard.models import Applicability, Dialect, Edit, Finding, Fix
from specguard.presets.loader import LoadedPreset, load, resolve_inside
from specguard.presets.model import Preset, flags_to_argv
from specguard.spec import LaunchSpec


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
        without = ctx.spec.model_copy(update={"items": tuple(i for i in ctx.spec.items if i.flag != item.flag)})
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
                finding.model_copy(
                    update={"applied": True, "fix": handled_by, "message": f"handled by the preset's {written}{note}: {finding.message}"}
                )
            )
    return found


def preset_document(preset: Preset, corrected: LaunchSpec, *, base_env: dict[str, str]) -> dict[str, Any]:
    """The preset with its flags and env replaced by the corrected launch, in its own dialect."""
    from specguard.dialects import render

    argv = render(corrected, preset.flag_dialect)
    env = {k: v for k, v in corrected.env if k in preset.env or base_env.get(k) != v}
    document = preset.model_dump(mode="json", exclude_none=True, exclude_defaults=False)
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


def write_corrected_preset(name_or_path: str, corrected: LaunchSpec, path: Path) -> None:
    """Write the corrected launch as a preset at ``path``; snapshots are copied beside it."""
    loaded = load(name_or_path)
    document = preset_document(loaded.preset, corrected, base_env=dict(os.environ))
    out = Path(path)
    out_dir = out.parent if str(out.parent) else Path(".")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for ref in (loaded.preset.target, loaded.preset.draft):
            if ref is None or ref.config is None:
                continue
            source = loaded.snapshot_path(ref)
            destination = resolve_inside(out_dir, ref.config, out)
            if source is not None and source != destination:
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, destination)
        out.write_text(dump_yaml(document), encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot write the corrected preset to {path} ({error.__class__.__name__})", hint="check the directory") from None


def render_dialects(loaded: LoadedPreset) -> list[Dialect]:
    return loaded.preset.render_dialects
