"""Read and write launch flags in SGLang's, slime's and sgl-jax's spelling.

- SGLang: ``--speculative-num-steps 3`` (``python -m sglang.launch_server``).
- slime: every SGLang flag behind ``--sglang-`` (``--sglang-speculative-num-steps 3``), plus
  slime's own flags, some of which set SGLang fields: ``--hf-checkpoint`` is the model path,
  ``--fp16`` sets dtype float16, ``--rollout-num-gpus-per-engine`` sets the TP size (slime
  derives ``tp = gpus_per_engine // pp``). Source: ``THUDM/slime``
  ``slime/backends/sglang_utils/arguments.py`` and ``sglang_engine.py`` (design/dialects.md §1).
- sgl-jax: SGLang's spelling (``python -m sgl_jax.launch_server``); its own choices are checked
  by the JX rules.

A flag specguard does not model is kept verbatim and in order. Its arity comes from SGLang's
own parser table when shipped, else every following token up to the next option is its value.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from typing import Literal

from specguard.errors import InputError
from specguard.flags import FLAGS_BY_NAME, FlagSpec, ValueKind, extracted_flags
from specguard.models import Dialect
from specguard.records import Record, replace
from specguard.spec import FlagItem, LaunchSpec

SLIME_PREFIX = "--sglang-"


class SlimeAlias:
    """A slime flag that stands for an SGLang field (with a fixed value for switches)."""

    def __init__(self, slime_flag: str, sglang_flag: str, fixed_value: str | None = None) -> None:
        self.slime_flag = slime_flag
        self.sglang_flag = sglang_flag
        self.fixed_value = fixed_value


SLIME_ALIASES: dict[str, SlimeAlias] = {
    alias.slime_flag: alias
    for alias in (
        SlimeAlias("--hf-checkpoint", "--model-path"),
        SlimeAlias("--fp16", "--dtype", fixed_value="float16"),
        SlimeAlias("--rollout-num-gpus-per-engine", "--tp-size"),
    )
}
# How a corrected SGLang field is written back in slime, where slime owns the field.
SLIME_SPELLING: dict[str, str] = {
    "--model-path": "--hf-checkpoint",
    "--tp-size": "--rollout-num-gpus-per-engine",
}

_NUMBER = re.compile(r"^-\d+(\.\d+)?$|^-\.\d+$")


def _is_option(token: str) -> bool:
    return token.startswith("-") and len(token) > 1 and not _NUMBER.match(token)


def detect_dialect(argv: Sequence[str]) -> Dialect:
    if any(token.startswith(SLIME_PREFIX) for token in argv):
        return Dialect.SLIME
    return Dialect.SGLANG


def parse(
    argv: Sequence[str], dialect: Dialect | None = None, env: Sequence[tuple[str, str]] = (), release: str | None = None
) -> LaunchSpec:
    """Parse server arguments (abbreviations read with ``release``'s parser when given). Raises
    ``InputError`` naming the flag when a value is missing; a value present but refused is kept."""
    dialect = dialect or detect_dialect(argv)
    items: list[FlagItem] = []
    index = 0
    while index < len(argv):
        token = argv[index]
        index += 1
        if not _is_option(token):
            items.append(FlagItem(flag="", values=(token,), known=False))
            continue
        written, inline_value = token.split("=", 1) if "=" in token else (token, None)
        flag, extra, fixed_value = _canonical(written, dialect, release)
        modeled = FLAGS_BY_NAME.get(flag)
        if fixed_value is not None:
            values: tuple[str, ...] = (fixed_value,)
        elif inline_value is not None:
            values = (inline_value,)
        else:
            count = _arity(flag, extra)
            if count == "greedy":
                values, index = _take_greedy(argv, index)
            else:
                values = tuple(argv[index : index + count])
                if len(values) < count or any(_is_option(v) for v in values):
                    raise InputError(f"{written} expects a value", hint=f"write {written} VALUE")
                index += count
        # A value SGLang refuses (a wrong type, a choice it lacks, a switch given one) is kept as
        # written: it is a finding (VB013, flag_values), and every other rule still runs.
        if modeled is not None and modeled.choices is not None and modeled.upper_case and values:
            values = tuple(v.upper() for v in values)
        resolved = modeled.flag if modeled else flag
        items.append(
            FlagItem(
                flag=resolved,
                values=values,
                # Only the dialect's own spelling of the resolved flag is implied; an alias, a
                # prefixed slime field (--sglang-tp-size) or a slime flag is kept as written.
                written=None if written == _spelling(resolved, dialect) else written,
                inline=inline_value is not None,
                known=modeled is not None or flag in extracted_flags() or not extra,
                extra=extra,
            )
        )
    return LaunchSpec(dialect=dialect, items=tuple(items), env=tuple(env))


def sglang_spelling(flag: str, written: str | None, extra: bool, dialect: Dialect) -> str | None:
    """The option SGLang's parser receives for one flag of a launch (None: not SGLang's)."""
    if extra or not flag or dialect is Dialect.SGL_JAX:
        return None
    if written is None:
        return flag
    if dialect is Dialect.SLIME:
        return "--" + written[len(SLIME_PREFIX) :] if written.startswith(SLIME_PREFIX) else flag
    return written


class LaunchEvidence(Record, kw_only=False):
    """What a launch's words say of the SGLang release it was written for: its options as SGLang's
    parser receives them (an abbreviation as written: each release's parser reads it its own way),
    its SGLANG_* env vars, and the value of each option that takes one of a list of choices."""

    flags: tuple[str, ...]
    env: tuple[str, ...]
    values: tuple[tuple[str, str], ...]


def launch_evidence(argv: Sequence[str], dialect: Dialect, env: Sequence[tuple[str, str]] = ()) -> LaunchEvidence | None:
    """The release evidence in a launch's words, read before the launch is parsed (parsing reads
    an abbreviation with the release's own parser, so the release comes first). None for sgl-jax,
    whose parser is its own. Each option's candidate value is the word after it (or after ``=``):
    the inference reads only the values of flags whose releases list choices (a flag with choices
    takes exactly one value) and ignores the rest; an abbreviated option gives its name as
    evidence, not its value."""
    if dialect is Dialect.SGL_JAX:
        return None
    flags: list[str] = []
    values: list[tuple[str, str]] = []
    for index, token in enumerate(argv):
        if not _is_option(token):
            continue
        written, inline_value = token.split("=", 1) if "=" in token else (token, None)
        flag, extra, fixed_value = _canonical(written, dialect, exact=True)
        modeled = FLAGS_BY_NAME.get(flag)
        resolved = modeled.flag if modeled else flag
        name = sglang_spelling(resolved, None if written == _spelling(resolved, dialect) else written, extra, dialect)
        if name is None:
            continue
        flags.append(name)
        if fixed_value is not None:
            continue
        value = inline_value if inline_value is not None else (argv[index + 1] if index + 1 < len(argv) else None)
        if value is not None and not _is_option(value):
            values.append((resolved, value.upper() if modeled is not None and modeled.upper_case else value))
    return LaunchEvidence(tuple(flags), tuple(key for key, _ in env if key.startswith("SGLANG_")), tuple(values))


def canonical_flag(written: str, dialect: Dialect) -> str:
    """SGLang's own name of an option as written in ``dialect`` (``--sglang-tp-size`` -> ``--tp-size``)."""
    flag, _, _ = _canonical(written, dialect)
    modeled = FLAGS_BY_NAME.get(flag)
    return modeled.flag if modeled else flag


def _canonical(written: str, dialect: Dialect, release: str | None = None, *, exact: bool = False) -> tuple[str, bool, str | None]:
    """(SGLang flag, is a dialect-only flag, fixed value) for an option as written (``exact``: an
    abbreviation stays as written)."""
    if dialect is Dialect.SLIME:
        if written.startswith(SLIME_PREFIX):
            return "--" + written[len(SLIME_PREFIX) :], False, None
        alias = SLIME_ALIASES.get(written)
        if alias is not None:
            return alias.sglang_flag, False, alias.fixed_value
        return written, True, None
    modeled = FLAGS_BY_NAME.get(written) or (None if exact else _abbreviated(written, release))
    return (modeled.flag if modeled else written), False, None


def _abbreviated(written: str, release: str | None = None) -> FlagSpec | None:
    """The modeled flag an argparse abbreviation stands for (``--speculative-algo``), read as
    SGLang's parser reads it (allow_abbrev, catalogue P02): a prefix of the options of exactly one
    argument, in ``release``'s parser when the release is known (else 0.5.23's table). The item
    keeps its written spelling, so VB004 still says to write it out; a prefix of several arguments
    stays unknown (VB004: argparse exits)."""
    if not written.startswith("--"):
        return None
    if release is not None:
        from specguard.versions import (  # the release history: only for abbreviations
            flags_at,
            history,
            prefix_arguments,
        )

        index = history().index_of(release)
        if index is None or written in flags_at(index):
            return None
        arguments = prefix_arguments(written, index)
    else:
        table = extracted_flags()
        if written in table:
            return None
        arguments = {tuple(entry.option_strings) for name, entry in table.items() if name.startswith(written)}
        arguments |= {(spec.flag,) for name, spec in FLAGS_BY_NAME.items() if name.startswith(written)}
    targets = {FLAGS_BY_NAME[option].flag for argument in arguments for option in argument if option in FLAGS_BY_NAME}
    # Every matching argument must be the same modeled flag (its options and aliases).
    if len(targets) != 1 or any(not any(option in FLAGS_BY_NAME for option in argument) for argument in arguments):
        return None
    return FLAGS_BY_NAME[targets.pop()]


def _arity(flag: str, extra: bool) -> int | Literal["greedy"]:
    modeled = FLAGS_BY_NAME.get(flag)
    if modeled is not None:
        if modeled.kind is ValueKind.SWITCH:
            return 0
        if modeled.kind in (ValueKind.INT_LIST, ValueKind.STR_LIST):
            return "greedy"
        return 1
    extracted = None if extra else extracted_flags().get(flag)
    if extracted is None:
        return "greedy"
    if extracted.nargs == 0 or extracted.action in ("store_true", "store_false", "store_const"):
        return 0
    if extracted.nargs is None:
        return 1
    if isinstance(extracted.nargs, int):
        return extracted.nargs
    return "greedy"


def _take_greedy(argv: Sequence[str], index: int) -> tuple[tuple[str, ...], int]:
    start = index
    while index < len(argv) and not _is_option(argv[index]):
        index += 1
    return tuple(argv[start:index]), index


def spelled(flag: str, dialect: Dialect) -> str:
    """SGLang's ``flag`` as the user writes it in ``dialect`` (slime: ``--sglang-dtype``)."""
    return _spelling(flag, dialect)


def _spelling(flag: str, dialect: Dialect) -> str:
    if dialect is Dialect.SLIME:
        return SLIME_SPELLING.get(flag, SLIME_PREFIX + flag[2:])
    return flag


def render(spec: LaunchSpec, dialect: Dialect | None = None) -> list[str]:
    """Server arguments in ``dialect`` (default: the one they were written in)."""
    dialect = dialect or spec.dialect
    same = dialect is spec.dialect
    argv: list[str] = []
    for item in spec.items:
        if item.flag == "":
            argv.extend(item.values)
            continue
        if item.extra and not same:
            # A slime-only flag means nothing to SGLang's own launcher: it is not rendered there.
            continue
        option = item.written if (same and item.written) else _spelling(item.flag, dialect)
        alias = SLIME_ALIASES.get(option) if dialect is Dialect.SLIME else None
        if alias is not None and alias.fixed_value is not None:
            if item.values == (alias.fixed_value,):
                argv.append(option)
                continue
            option = _spelling(item.flag, dialect)
        if item.inline and same and len(item.values) == 1:
            argv.append(f"{option}={item.values[0]}")
        else:
            argv.append(option)
            argv.extend(item.values)
    return argv


def render_env(spec: LaunchSpec) -> dict[str, str]:
    return dict(spec.env)


def render_command(spec: LaunchSpec, dialect: Dialect | None = None) -> str:
    """A command a user can paste: a launch line, or slime's ``SGLANG_ARGS=( ... )`` array."""
    dialect = dialect or spec.dialect
    argv = render(spec, dialect)
    env_prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in spec.env)
    if dialect is Dialect.SLIME:
        return _slime_command(spec)
    module = "sgl_jax.launch_server" if dialect is Dialect.SGL_JAX else "sglang.launch_server"
    lines = _group_lines(argv)
    head = f"{env_prefix} " if env_prefix else ""
    body = " \\\n    ".join(" ".join(shlex.quote(t) for t in line) for line in lines)
    return f"{head}python -m {module} \\\n    {body}" if body else f"{head}python -m {module}"


def _slime_command(spec: LaunchSpec) -> str:
    """slime's ``SGLANG_ARGS=( ... )`` array holds only SGLang's flags (``--sglang-*``); slime's
    own flags, and its aliases of SGLang's (``--hf-checkpoint``), go on the ``train.py`` line
    that expands the array, as slime's scripts write them."""
    sglang_items: list[FlagItem] = []
    slime_items: list[FlagItem] = []
    owner = sglang_items
    for item in spec.items:
        if item.flag != "":  # a bare token stays with the flag before it
            option = item.written if (spec.dialect is Dialect.SLIME and item.written) else _spelling(item.flag, Dialect.SLIME)
            owner = sglang_items if option.startswith(SLIME_PREFIX) and not item.extra else slime_items
        owner.append(item)
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in spec.env)
    array = _group_lines(render(replace(spec, items=tuple(sglang_items)), Dialect.SLIME))
    body = "\n".join("   " + " ".join(shlex.quote(t) for t in line) for line in array)
    command = f"{exports}SGLANG_ARGS=(\n{body}\n)"
    if not slime_items:
        return command
    train = _group_lines(render(replace(spec, items=tuple(slime_items)), Dialect.SLIME))
    lines = [" ".join(shlex.quote(t) for t in line) for line in train]
    return command + "\npython3 train.py \\\n    " + " \\\n    ".join([*lines, '"${SGLANG_ARGS[@]}"'])


def _group_lines(argv: list[str]) -> list[list[str]]:
    lines: list[list[str]] = []
    for token in argv:
        if _is_option(token) or not lines:
            lines.append([token])
        else:
            lines[-1].append(token)
    return lines
