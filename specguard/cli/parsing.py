"""The command line's parser: the standard library's argparse, with specguard's conventions.

Why not typer (the first CLI was written with it): importing typer and building a command from
its signature cost ``specguard check`` about 60 ms of its 250 ms budget, to parse twenty simple
options; argparse is already in the interpreter's standard library and costs about 3 ms. What
typer gave is kept here: each option is declared once (``Option``) with its help, the shared
ones live in ``cli/options.py`` so every command says the same thing, choices are ``str``
enums (case-insensitive), and a usage error is one line and exit code 2 (``UsageError``,
turned into that line by ``cli/main.py``).

Commands that take SERVER_ARGS (check, render, launch) let everything that is not one of
their own options pass through in order, as click's ``ignore_unknown_options`` did: SGLang's
flags need no ``--`` before them, and a word is a launch given as text (``split_own``).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any, Generic, NoReturn, TypeVar

from specguard.records import Record

E = TypeVar("E", bound=Enum)
O = TypeVar("O")


class UsageError(Exception):
    """A command line that cannot be parsed: one line, exit code 2, with where to look (``prog``)."""

    def __init__(self, message: str, prog: str = "specguard") -> None:
        super().__init__(message)
        self.message = message
        self.prog = prog


def _help_width() -> int:
    """argparse's own width rule (terminal width - 2, at most 120 wide here) without importing
    shutil, which argparse would import on every parser built."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ else 80
        except (OSError, ValueError):
            columns = 80
    return max(min(columns, 122) - 2, 40)


class _Formatter(argparse.HelpFormatter):
    """A description's paragraphs are wrapped one by one; an indented or bulleted paragraph (the
    exit-code lists) keeps its lines. "Usage:" as click wrote it."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=_help_width(), max_help_position=34)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap  # only when help is printed

        paragraphs = []
        for paragraph in text.strip("\n").split("\n\n"):
            preformatted = paragraph[:1] in (" ", "*", "-")
            paragraphs.append(paragraph if preformatted else textwrap.fill(" ".join(paragraph.split()), width, initial_indent=indent, subsequent_indent=indent))
        return "\n\n".join(paragraphs)

    def add_usage(self, usage: str | None, actions: Any, groups: Any, prefix: str | None = None) -> None:
        super().add_usage(usage, actions, groups, prefix="Usage: " if prefix is None else prefix)


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises ``UsageError`` instead of printing and exiting, never
    abbreviates an option (an abbreviation of ours could be a server flag), and knows which of
    its option strings take a value (``split_own``)."""

    def __init__(self, prog: str, description: str | None = None) -> None:
        self.takes_value: dict[str, bool] = {}  # before argparse adds -h/--help through add_argument
        # Options may come between positionals (`hook scripts --offline a.sh b.sh`): argparse
        # otherwise fills a trailing `nargs="*"` at its first chance, empty, and refuses the rest.
        self.intermixed = False
        super().__init__(prog=prog, description=description, formatter_class=_Formatter, allow_abbrev=False)

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        if self.intermixed:
            return self.parse_intermixed_args(args, namespace)
        return super().parse_args(args, namespace)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        for option in action.option_strings:
            self.takes_value[option] = action.nargs != 0
        return action

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, self.prog)

    def split_own(self, argv: Sequence[str]) -> tuple[list[str], list[str]]:
        """``argv`` as (this command's own options with their values, SERVER_ARGS in order).

        Before the first ``--``: an own option (``--gpu H100``, ``--gpu=H100``, a switch) is taken
        with its value; anything else (a server flag, its value, a launch given as text) passes
        through. After ``--`` everything passes through (an own option there is the server's)."""
        own: list[str] = []
        server: list[str] = []
        index = 0
        while index < len(argv):
            word = argv[index]
            if word == "--":
                server.extend(argv[index + 1 :])
                break
            name = word.split("=", 1)[0]
            if name in self.takes_value:
                own.append(word)
                if self.takes_value[name] and "=" not in word and index + 1 < len(argv):
                    own.append(argv[index + 1])
                    index += 1
            else:
                server.append(word)
            index += 1
        return own, server

    def own_options(self) -> list[str]:
        return [option for option in self.takes_value if option.startswith("--")]


class Invocation(Record, Generic[O], kw_only=False):
    """What a command runs with: its name, its options (the command's typed record), and
    (commands that take them) the SERVER_ARGS and its own option strings (to tell a misspelling
    of one from a server flag)."""

    name: str
    options: O
    server_args: tuple[str, ...] = ()
    own_options: tuple[str, ...] = ()


class Option(Record, kw_only=False):
    """One option, declared once: its flag, help, and how its value is read. A command's record
    names it on a field (``preset: Annotated[str | None, PRESET] = None``): the field gives the
    option its destination and its default.

    ``convert``: the value's type (a function from the text; ``choice``, ``at_least``); a switch
    has none. ``repeat``: the option may be given several times (a list). ``metavar``: how --help
    names the value (default: a choice's values, else the option's name)."""

    flag: str
    help: str
    convert: Callable[[str], Any] | None = None
    switch: bool = False
    repeat: bool = False
    metavar: str | None = None
    required: bool = False
    short: str | None = None  # a one-letter spelling too (-v)

    def add_to(self, parser: Parser, dest: str, default: Any) -> None:
        kwargs: dict[str, Any] = {"help": self.help, "dest": dest, "default": default}
        if self.switch:
            kwargs["action"] = "store_true"
        else:
            metavar = self.metavar or getattr(self.convert, "metavar", None) or dest.upper()
            kwargs.update(required=self.required, metavar=metavar)
            if self.convert is not None:
                kwargs["type"] = self.convert
            if self.repeat:
                kwargs["action"] = "append"
        parser.add_argument(*([self.short] if self.short else []), self.flag, **kwargs)


class Positional(Record, kw_only=False):
    """A positional argument, named on a record's field like an ``Option``."""

    metavar: str
    help: str
    convert: Callable[[str], Any] | None = None
    nargs: str | None = None  # "*", "?": as argparse takes it

    def add_to(self, parser: Parser, dest: str, default: Any) -> None:
        kwargs: dict[str, Any] = {"metavar": self.metavar, "help": self.help}
        if self.convert is not None:
            kwargs["type"] = self.convert
        if self.nargs is not None:
            kwargs.update(nargs=self.nargs, default=default)
        parser.add_argument(dest, **kwargs)


class Subcommands(Record, kw_only=False):
    """A command made of subcommands (``presets list|show|schema``), each with its own record.
    ``default``: the one a bare command runs. ``shared``: fields every subcommand's record has
    that may also be given before the subcommand (``models --format json show X``)."""

    commands: dict[str, tuple[type[Record], str]]  # name -> (its record, its help)
    default: str | None = None
    shared: tuple[str, ...] = ()


def arguments_of(record: type[Record]) -> list[tuple[str, Option | Positional, Any]]:
    """(field, its Option or Positional, its default) for each field of a command's record, in
    order. A field's default is the argument's default (argparse's, when the option is absent);
    a field without one is required."""
    import typing

    hints = typing.get_type_hints(record, include_extras=True)
    fields, defaults = record.__struct_fields__, record.__struct_defaults__
    by_name = dict(zip(fields[len(fields) - len(defaults) :], defaults, strict=True))
    found = []
    for name in fields:
        declared = [meta for meta in getattr(hints[name], "__metadata__", ()) if isinstance(meta, (Option, Positional))]
        if len(declared) != 1:
            raise TypeError(f"{record.__qualname__}.{name} names no Option or Positional")
        default: Any = by_name.get(name)
        factory = getattr(default, "factory", None)  # field(default_factory=...): argparse needs the value itself
        found.append((name, declared[0], factory() if callable(factory) else default))
    return found


def build_parser(parser: Parser, spec: type[Record] | Subcommands) -> None:
    """Add a command's arguments to ``parser``, from its record (or its subcommands' records)."""
    if not isinstance(spec, Subcommands):
        for name, argument, default in arguments_of(spec):
            argument.add_to(parser, name, default)
        return
    shared = {
        name: (argument, default)
        for record, _ in spec.commands.values()
        for name, argument, default in arguments_of(record)
        if name in spec.shared
    }
    for name, (argument, default) in shared.items():
        argument.add_to(parser, name, default)
    actions = parser.add_subparsers(dest="subcommand", metavar="{" + ",".join(spec.commands) + "}", parser_class=Parser)
    for command, (record, help_text) in spec.commands.items():
        sub = actions.add_parser(command, help=help_text)
        for name, argument, default in arguments_of(record):
            # A shared option given before the subcommand stays unless given again after it.
            argument.add_to(sub, name, argparse.SUPPRESS if name in spec.shared else default)


def read_options(spec: type[Record] | Subcommands, namespace: argparse.Namespace, prog: str) -> Record:
    """The command's record from what argparse read (a subcommand's record for a command made of them)."""
    values = vars(namespace)
    if not isinstance(spec, Subcommands):
        return spec(**values)
    command = values.pop("subcommand", None) or spec.default
    if command is None:
        *first, last = spec.commands
        raise UsageError(f"name a subcommand: {', '.join(first)} or {last}", prog)
    record = spec.commands[command][0]
    defaults = {name: default for name, _, default in arguments_of(record)}
    return record(**{name: values.get(name, defaults[name]) for name in record.__struct_fields__})


def choice(enum: type[E]) -> Callable[[str], E]:
    """A value among ``enum``'s, case-insensitive."""

    def convert(text: str) -> E:
        for member in enum:
            if str(member.value).lower() == text.lower():
                return member
        raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(str(m.value) for m in enum)}")

    convert.__name__ = enum.__name__  # argparse names the type in its message
    convert.metavar = f"[{'|'.join(str(m.value) for m in enum)}]"  # type: ignore[attr-defined]  # what --help shows
    return convert


def at_least(kind: Callable[[str], Any], minimum: float, maximum: float | None = None) -> Callable[[str], Any]:
    """An int or float in [minimum, maximum]; never nan or infinite (nan passes every comparison:
    ``--stop-timeout nan`` would mean no grace at all)."""

    def convert(text: str) -> Any:
        # A pasted 5000-digit number is not echoed whole.
        from specguard.spec import shown_value

        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{shown_value(text)} is not a valid {kind.__name__}") from None
        number = text if len(text) <= 40 else shown_value(text)
        if isinstance(value, float) and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{number} is not a finite number")
        if value < minimum or (maximum is not None and value > maximum):
            bound = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
            raise argparse.ArgumentTypeError(f"{number} is not {bound}")
        return value

    convert.__name__ = kind.__name__
    return convert
