"""Find every launch in launch text: one command string, stdin, a shell script, ``docker run``.

One reader for every textual form, so a launch pasted as one string and the same launch inside
a slime script are read alike. It understands the shell that published launch scripts use,
without running anything:

- comments, ``\\``-newline continuations, single and double quotes, ``;``/``&&``/``|`` lists;
- variables and bash arrays (``SGLANG_ARGS=( ... )``, ``+=``), ``export``, env prefixes
  (``SGLANG_ENABLE_SPEC_V2=1 python -m ...``), ``$VAR``, ``${VAR:-default}``, ``${ARR[@]}``;
- ``$(seq ...)`` (used for ``--cuda-graph-bs``), and the ``$(cd "$(dirname ...)" && pwd)`` idiom
  for the script's own folder, so ``source "${SCRIPT_DIR}/models/x.sh"`` is read too;
- entry points: ``python[3] -m sglang.launch_server`` and ``sglang serve`` (SGLang),
  ``python[3] -m sgl_jax.launch_server`` (sgl-jax), slime's ``train.py``/``train_async.py``
  (also behind ``ray job submit ... --``), each optionally inside ``docker run ... IMAGE``.

Anything else a command substitution would compute is unknown and kept as written.

The text is untrusted, and shell expansion can grow without end (``A=$A$A`` forty times is a
terabyte; a script that sources itself four times is 4^8 reads), so reading is bounded the way
the preset reader bounds YAML aliases. Each bound is a one-line ``InputError`` naming the file,
the line and the limit:

- ``MAX_LAUNCH_TEXT_BYTES`` of text in all: the script (or stdin, or the command string) and
  every file it sources together; a script is opened with ``specguard.text_input``, which
  refuses FIFOs, devices and directories before reading anything;
- ``MAX_EXPANSION_CHARS`` for what one word, one variable or array, or one command's arguments
  expand to, and ``MAX_EXPANDED_TOTAL`` for all expansions of one reading together;
- ``MAX_LAUNCHES`` launches in one text; array indexes of at most ``MAX_INDEX_DIGITS`` digits.

A file sourced while it is already being read (a source cycle: bash recurses until a guard
such as ``[ -n "$LOADED" ] && return`` stops it, which this reader cannot evaluate) is skipped
with a note on the launch that follows: its definitions are those of the read already under way,
which is what the guard makes bash do. A sourced file that is missing or not a regular file is
not at hand here (the script was written for another machine): skipped too, the latter with a note.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from specguard.errors import InputError
from specguard.models import Dialect
from specguard.spec import RELEVANT_ENV_PREFIXES
from specguard.text_input import TooLargeError, read_bytes_bounded, read_text_bounded

# Published launch scripts are a few KiB (slime's largest, with its model files, under 40 KiB).
MAX_LAUNCH_TEXT_BYTES = 256 * 1024
# A launch's arguments are at most a few KiB; $(seq 1 9999) is 59 KiB.
MAX_EXPANSION_CHARS = 64 * 1024
MAX_EXPANDED_TOTAL = 4 * 1024 * 1024
MAX_LAUNCHES = 64
MAX_SOURCE_DEPTH = 8
# Nine digits index any array a script can hold; Python refuses to read 4300 digits or more.
MAX_INDEX_DIGITS = 9
_TEXT_HINT = "give a launch script of a few KiB (the launch itself, not a log or a binary)"

# Entry points: the module (after ``python -m``) or script name, and the flag dialect it reads.
ENTRY_MODULES: dict[str, Dialect] = {
    "sglang.launch_server": Dialect.SGLANG,
    "sgl_jax.launch_server": Dialect.SGL_JAX,
}
SLIME_ENTRY_SCRIPTS = ("train.py", "train_async.py")
SLIME_ARGS_ARRAY = "SGLANG_ARGS"
_PYTHON = re.compile(r"^(?:.*/)?python(?:3(?:\.\d+)?)?$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\+?)=(.*)$", re.DOTALL)
# Docker's own options that take a value as the next word (docker run --help).
_DOCKER_VALUE_OPTIONS = {
    "-e", "--env", "--env-file", "-v", "--volume", "-p", "--publish", "--name", "--gpus", "--shm-size",
    "--ipc", "--network", "--net", "-w", "--workdir", "--entrypoint", "-u", "--user", "--runtime",
    "--ulimit", "--device", "--mount", "--cpus", "--memory", "-m", "--label", "-l",
    "--cap-add", "--security-opt", "--add-host", "--hostname", "-h", "--platform", "--pid", "--restart",
}
_SHELL_KEYWORDS = {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "in", "case", "esac", "{", "}", "!", "time"}


@dataclass(frozen=True)
class FoundLaunch:
    """One launch: its server arguments, env vars, dialect, docker image and where it was written."""

    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    dialect: Dialect
    source: str
    line: int
    image: str | None = None
    # Where each argument was written: (file, line); an array's element keeps its own line,
    # also when the array comes from a sourced file.
    arg_locations: tuple[tuple[str, int], ...] = ()
    # What the reader skipped before this launch (a source cycle, a sourced FIFO), for the report.
    notes: tuple[str, ...] = ()

    def location_of(self, index: int) -> tuple[str, int]:
        return self.arg_locations[index] if index < len(self.arg_locations) else (self.source, self.line)


@dataclass(slots=True)
class _Segment:
    text: str
    kind: str  # "lit" (may be word-split/expanded as written), "quoted" (literal), "dq" (double-quoted, expands), "sub" (command substitution)
    quoted: bool = False


@dataclass(slots=True)
class _Word:
    segments: list[_Segment]
    line: int
    opens_array: bool = False  # NAME=( : the word ended with '=' right before '('


@dataclass(slots=True)
class _Op:
    text: str
    line: int


@dataclass
class _Shell:
    script_dir: Path | None
    variables: dict[str, list[str]] = field(default_factory=dict)
    array_locations: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    exported: dict[str, str] = field(default_factory=dict)
    # The files being read, outermost first (resolved paths; a label for stdin or a string).
    chain: list[Path | str] = field(default_factory=list)
    text_bytes: int = 0
    expanded_chars: int = 0
    launches: int = 0
    notes: list[str] = field(default_factory=list)

    def take_notes(self) -> tuple[str, ...]:
        notes, self.notes = tuple(self.notes), []
        return notes

    def charge_expansion(self, chars: int, where: tuple[str, int]) -> None:
        self.expanded_chars += chars
        if self.expanded_chars > MAX_EXPANDED_TOTAL:
            raise InputError(
                f"{where[0]}:{where[1]}: the variables expand to more than {MAX_EXPANDED_TOTAL // (1024 * 1024)} MiB "
                "in all by this line, the most specguard expands",
                hint=_GROWS,
            )


def find_launches(text: str, source: str, *, script_dir: Path | None = None, script_path: Path | None = None) -> list[FoundLaunch]:
    """Every launch in ``text`` in order. ``source`` names it in messages (a file, ``<stdin>``);
    ``script_path`` is the file it was read from, if any (a source cycle back to it is skipped)."""
    shell = _Shell(script_dir=script_dir, chain=[script_path.resolve() if script_path else source])
    _charge_text(shell, len(text.encode("utf-8", "surrogatepass")), source, None)
    launches = list(_run(text, source, shell))
    notes = shell.take_notes()
    if notes and launches:  # notes after the last launch go with it
        last = launches[-1]
        launches[-1] = replace(last, notes=(*last.notes, *notes))
    if not launches and shell.variables.get(SLIME_ARGS_ARRAY):
        # slime's guide publishes the SGLANG_ARGS=( ... ) array alone (and `specguard render
        # --to slime` writes it): the array is the launch's SGLang part.
        locations = shell.array_locations[SLIME_ARGS_ARRAY]
        launches.append(
            FoundLaunch(
                argv=tuple(shell.variables[SLIME_ARGS_ARRAY]), env=tuple(
                    (k, v) for k, v in shell.exported.items() if k.startswith(RELEVANT_ENV_PREFIXES)
                ), dialect=Dialect.SLIME, source=source, line=locations[0][1], arg_locations=tuple(locations), notes=notes,
            )
        )
    return launches


def read_launches(path: Path) -> list[FoundLaunch]:
    """Every launch in the script at ``path`` (``--script``): a regular UTF-8 file of at most
    ``MAX_LAUNCH_TEXT_BYTES``."""
    text = read_text_bounded(path, f"--script {path}", limit=MAX_LAUNCH_TEXT_BYTES, hint=_TEXT_HINT)
    return find_launches(text, str(path), script_dir=path.resolve().parent, script_path=path)


def _charge_text(shell: _Shell, size: int, source: str, sourced_at: tuple[str, int] | None) -> None:
    shell.text_bytes += size
    if shell.text_bytes > MAX_LAUNCH_TEXT_BYTES:
        raise _too_much_text(source, sourced_at)


def _too_much_text(source: str, sourced_at: tuple[str, int] | None) -> InputError:
    limit = f"{MAX_LAUNCH_TEXT_BYTES // 1024} KiB"
    if sourced_at is None:
        return InputError(f"{source} is larger than {limit}, the most launch text specguard reads", hint=_TEXT_HINT)
    return InputError(
        f"{sourced_at[0]}:{sourced_at[1]}: sourcing {source} takes the launch text past {limit} "
        "(the script and the files it sources together), the most specguard reads",
        hint="check that the sourced file is a script of a few KiB",
    )


def _run(text: str, source: str, shell: _Shell) -> Iterator[FoundLaunch]:
    tokens = _tokenize(text, source)
    index = 0
    while index < len(tokens):
        command: list[_Word] = []
        while index < len(tokens) and not isinstance(tokens[index], _Op):
            word = tokens[index]
            index += 1
            if word.opens_array and index < len(tokens) and isinstance(tokens[index], _Op) and tokens[index].text == "(":
                index = _assign_array(word, tokens, index + 1, shell, source)
                continue
            command.append(word)
        if index < len(tokens):
            index += 1  # the operator ends the command; a stray '(' or ')' is skipped with it
        if command:
            yield from _command(command, source, shell)


def _assign_array(word: _Word, tokens: list, index: int, shell: _Shell, source: str) -> int:
    name, append = _assignment_name(word)
    values: list[str] = [*(shell.variables.get(name, []) if name and append else [])]
    locations: list[tuple[str, int]] = [*(shell.array_locations.get(name, []) if name and append else [])]
    size = _size(values)
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if isinstance(token, _Op):
            if token.text == ")":
                break
            continue  # newlines inside ( ... ) separate nothing
        expanded = _expand(token, shell, source)
        size += _size(expanded)
        if size > MAX_EXPANSION_CHARS:
            raise _too_long(f"the array {name or '(...)'}", (source, token.line))
        values.extend(expanded)
        locations.extend([(source, token.line)] * len(expanded))
    if name:
        shell.variables[name] = values
        shell.array_locations[name] = locations
    return index


def _size(values: list[str]) -> int:
    """The expanded length of a value: its elements and a separator after each."""
    return sum(len(value) + 1 for value in values)


_GROWS = "a variable or array that grows with every use? give the launch with its arguments written out"


def _too_long(what: str, where: tuple[str, int], hint: str = _GROWS) -> InputError:
    return InputError(
        f"{where[0]}:{where[1]}: {what} expands to more than {MAX_EXPANSION_CHARS // 1024} KiB, the most specguard expands",
        hint=hint,
    )


def _written(word: _Word) -> str:
    """A word as written, cut short for a message."""
    text = "".join(segment.text for segment in word.segments)
    return text if len(text) <= 40 else text[:37] + "..."





def _assignment_name(word: _Word) -> tuple[str | None, bool]:
    first = word.segments[0].text if word.segments and word.segments[0].kind == "lit" else ""
    match = _ASSIGNMENT.match(first)
    if not match or len(word.segments) != 1 or match.group(3):
        return None, False
    return match.group(1), bool(match.group(2))


def _expanded_command(words: list[_Word], source: str, shell: _Shell) -> list[tuple[str, tuple[str, int]]]:
    """The command's words after expansion, each with where it was written; leading shell
    keywords (``if``, ``do``, ``{``) dropped."""
    expanded: list[tuple[str, tuple[str, int]]] = []
    size = 0
    for word in words:
        values = _expand(word, shell, source)
        size += _size(values)
        if size > MAX_EXPANSION_CHARS:
            raise _too_long("the command", (source, word.line), hint="a launch's arguments are a few KiB: check what the script holds")
        expanded.extend(zip(values, _array_locations(word, shell, len(values), source)))
    keywords = 0
    while keywords < len(expanded) and expanded[keywords][0] in _SHELL_KEYWORDS:
        keywords += 1
    return expanded[keywords:]


def _count_launch(shell: _Shell, where: tuple[str, int]) -> None:
    shell.launches += 1
    if shell.launches > MAX_LAUNCHES:
        raise InputError(
            f"{where[0]}:{where[1]}: more than {MAX_LAUNCHES} launches in one text, the most specguard checks at once",
            hint="split the script, or check the launches you mean one by one",
        )


def _command(words: list[_Word], source: str, shell: _Shell) -> Iterator[FoundLaunch]:
    expanded = _expanded_command(words, source, shell)
    names = [w for w, _ in expanded]
    if not names:
        return
    prefix_env: list[tuple[str, str]] = []
    start = 0
    while start < len(names) and (match := _ASSIGNMENT.match(names[start])) and not match.group(2):
        prefix_env.append((match.group(1), match.group(3)))
        start += 1
    if start == len(names):
        for key, value in prefix_env:  # plain assignments: shell variables
            shell.variables[key] = [value]
        return
    head = names[start]
    if head in ("source", ".") and start + 1 < len(names):
        yield from _source(names[start + 1], source, expanded[start][1][1], shell)
        return
    if head == "export":
        for assignment in names[start + 1 :]:
            match = _ASSIGNMENT.match(assignment)
            if match:
                shell.variables[match.group(1)] = [match.group(3)]
                shell.exported[match.group(1)] = match.group(3)
            elif _NAME.match(assignment) and assignment in shell.variables:
                shell.exported[assignment] = " ".join(shell.variables[assignment])
        return
    entry = _entry_point(names, start)
    inline = _inline_script(names, start, entry[0] if entry else len(names))
    if inline is not None:
        yield from _inline_launches(names, expanded, start, inline, prefix_env, source, shell)
        return
    if entry is None:
        return
    entry_index, args_index, dialect = entry
    # Exported variables reach the launch; only SGLang's own are worth carrying from a script's
    # environment (PYTHONUNBUFFERED is not), while a prefix on the command is meant for it.
    env = {k: v for k, v in shell.exported.items() if k.startswith(RELEVANT_ENV_PREFIXES)}
    env.update(prefix_env)
    image = _docker(names, start, entry_index, env)
    # `env K=V cmd`, `ray job submit ... -- K=V cmd`: assignments right after `env` or `--` (or
    # after such an assignment); a docker option's value (--env K=V) is docker's, read above.
    in_assignments = False
    for position in range(start + 1, entry_index):
        match = _ASSIGNMENT.match(names[position])
        in_assignments = bool(match) and (in_assignments or names[position - 1] in ("env", "--"))
        if in_assignments and match:
            env[match.group(1)] = match.group(3)
    line = expanded[entry_index][1][1]
    _count_launch(shell, (source, line))
    yield FoundLaunch(
        argv=tuple(names[args_index:]),
        env=tuple(env.items()),
        dialect=dialect,
        source=source,
        line=line,
        image=image,
        arg_locations=tuple(location for _, location in expanded[args_index:]),
        notes=shell.take_notes(),
    )


_SHELLS = ("bash", "sh", "dash", "zsh")
_COMMAND_STRING = re.compile(r"^-[a-z]*c[a-z]*$")  # -c, and -lc / -ec / -xc as images' commands write it


def _inline_script(names: list[str], start: int, before: int) -> int | None:
    """The index of the shell (``bash -c 'SCRIPT'``) that runs the launch as a string, as
    ``docker run IMAGE bash -c '...'`` does; None when the launch is written out."""
    for index in range(start, min(before, len(names) - 2)):
        if Path(names[index]).name in _SHELLS and _COMMAND_STRING.match(names[index + 1]):
            return index
    return None


def _inline_launches(
    names: list[str], expanded: list[tuple[str, tuple[str, int]]], start: int, shell_index: int,
    prefix_env: list[tuple[str, str]], source: str, shell: _Shell,
) -> Iterator[FoundLaunch]:
    """The launches in a ``bash -c`` string, read as a script: each takes the image and the env
    vars of the command around it, and is said to be where that string is written."""
    env = dict(prefix_env)
    image = _docker(names, start, shell_index, env)
    where = expanded[shell_index + 2][1]
    for found in _run(names[shell_index + 2], source, shell):
        yield replace(
            found,
            env=tuple({**env, **dict(found.env)}.items()),
            image=found.image or image,
            line=where[1],
            arg_locations=tuple(where for _ in found.arg_locations),
        )


def _entry_point(names: list[str], start: int) -> tuple[int, int, Dialect] | None:
    """(index of the entry word, index of the first server argument, dialect)."""
    for index in range(start, len(names)):
        word = names[index]
        if _PYTHON.match(word):
            first = index + 1  # the first word after python and its -u/-O/-B
            while first < len(names) and names[first] in ("-u", "-O", "-B"):
                first += 1
            if names[first : first + 1] == ["-m"] and first + 1 < len(names) and names[first + 1] in ENTRY_MODULES:
                return index, first + 2, ENTRY_MODULES[names[first + 1]]
            if first < len(names) and Path(names[first]).name in SLIME_ENTRY_SCRIPTS:
                return index, first + 1, Dialect.SLIME
        # `sglang serve` (sglang 0.5.23: sglang/cli/main.py, console script `sglang`) passes the
        # rest to the server's argument parser.
        if Path(word).name == "sglang" and names[index + 1 : index + 2] == ["serve"]:
            return index, index + 2, Dialect.SGLANG
    return None


def _docker(names: list[str], start: int, entry_index: int, env: dict[str, str]) -> str | None:
    """The image of ``docker run [OPTIONS] IMAGE <entry>``; docker's ``-e K=V`` join the env."""
    try:
        run = names.index("run", start, entry_index)
    except ValueError:
        return None
    if run == start or names[run - 1] != "docker":
        return None
    index = run + 1
    while index < entry_index - 1:
        option = names[index]
        value = names[index + 1] if option in _DOCKER_VALUE_OPTIONS else None
        setting = value if option in ("-e", "--env") else (option.split("=", 1)[1] if option.startswith("--env=") else None)
        key, equals, val = (setting or "").partition("=")
        if equals and key.startswith(RELEVANT_ENV_PREFIXES):  # not HF_TOKEN: only what SGLang reads
            env[key] = val
        index += 2 if value is not None else 1
    return names[entry_index - 1] if entry_index - 1 > run else None


def _source(path_text: str, source: str, line: int, shell: _Shell) -> Iterator[FoundLaunch]:
    path = Path(path_text)
    if not path.is_absolute() and shell.script_dir is not None:
        path = shell.script_dir / path
    try:
        resolved = path.resolve()
        present = resolved.exists()
    except (OSError, RuntimeError, ValueError):  # a symlink loop, a NUL in the name
        present = False
    if not present:
        return  # a sourced file that is not at hand (the script's machine has it) defines nothing we can read
    where = f"{source}:{line}: source {path_text}"
    if resolved in shell.chain:
        shell.notes.append(f"{where} skipped: {path} is already being read (a source cycle); its definitions are those read so far")
        return
    if len(shell.chain) > MAX_SOURCE_DEPTH:
        shell.notes.append(f"{where} skipped: sourced files nest more than {MAX_SOURCE_DEPTH} deep")
        return
    try:
        data = read_bytes_bounded(resolved, str(path), limit=MAX_LAUNCH_TEXT_BYTES, hint=_TEXT_HINT)
    except TooLargeError:
        raise _too_much_text(str(path), (source, line)) from None
    except InputError as error:  # not a regular file, unreadable: not at hand either
        shell.notes.append(f"{where} skipped: {error.message}")
        return
    _charge_text(shell, len(data), str(path), (source, line))
    shell.chain.append(resolved)
    try:
        yield from _run(data.decode("utf-8", errors="replace"), str(path), shell)
    finally:
        shell.chain.pop()


def _array_locations(word: _Word, shell: _Shell, count: int, source: str) -> list[tuple[str, int]]:
    """Each value's location: an array's element keeps the line it was written on."""
    if len(word.segments) == 1 and word.segments[0].kind in ("lit", "dq"):
        match = re.fullmatch(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}", word.segments[0].text)
        locations = shell.array_locations.get(match.group(1)) if match else None
        if locations and len(locations) == count:
            return list(locations)
    return [(source, word.line)] * count


# ---------------------------------------------------------------- expansion


_VARIABLE = re.compile(
    r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?P<index>\[[@*0-9]+\])?(?::?-(?P<default>[^}]*))?\}|(?P<plain>[A-Za-z_][A-Za-z0-9_]*)|(?P<special>[0-9@*#?$!]))"
)


class _Fields:
    """The words one shell word expands to, built piece by piece, at most ``MAX_EXPANSION_CHARS``
    of them: each piece is counted before it is kept, so a doubling stops at the limit."""

    def __init__(self, shell: _Shell, word: _Word, source: str) -> None:
        self.fields: list[list[str]] = [[]]  # each field is a list of pieces; [] means "nothing yet"
        self.has_content = False
        self.size = 0
        self.shell, self.word, self.where = shell, word, (source, word.line)

    def _charge(self, chars: int) -> None:
        self.size += chars
        if self.size > MAX_EXPANSION_CHARS:
            raise _too_long(f"the word {_written(self.word)}", self.where)
        self.shell.charge_expansion(chars, self.where)

    def append_text(self, text: str) -> None:
        """Text that stays in the current word (quoted, or a literal)."""
        self._charge(len(text))
        self.fields[-1].append(text)
        self.has_content = True

    def append_split(self, values: list[str]) -> None:
        """Values that each start a new word after the first (an unquoted expansion)."""
        self._charge(_size(values))
        for position, value in enumerate(values):
            if position:
                self.fields.append([])
            self.fields[-1].append(value)
            self.has_content = True

    def words(self) -> list[str]:
        words = ["".join(f) for f in self.fields]
        if not self.has_content:
            return []
        return [w for w in words if w or len(words) == 1]


def _expand(word: _Word, shell: _Shell, source: str) -> list[str]:
    """The words ``word`` becomes: unquoted arrays and substitutions split on whitespace."""
    fields = _Fields(shell, word, source)
    for segment in word.segments:
        if segment.kind == "quoted":
            fields.append_text(segment.text)
        elif segment.kind == "sub":
            result = _substitute(segment.text, shell)
            if result is None:
                fields.append_text(f"$({segment.text})")
            elif segment.quoted:
                fields.append_text(" ".join(result))
            else:
                fields.append_split(result)
        else:
            _expand_variables(segment, only_segment=len(word.segments) == 1, shell=shell, fields=fields)
    return fields.words()


def _expand_variables(segment: _Segment, *, only_segment: bool, shell: _Shell, fields: _Fields) -> None:
    """A literal or double-quoted segment: its text with each $VARIABLE replaced."""
    quoted = segment.kind == "dq"
    position = 0
    for match in _VARIABLE.finditer(segment.text):
        literal = segment.text[position : match.start()]
        if literal:
            fields.append_text(literal)
        position = match.end()
        values = _variable(match, shell, fields.where)
        if values is _UNSET and match.group(0) == segment.text and only_segment:
            values = []  # a word that is only an unset variable is no word at all, as in bash
        if values is None or values is _UNSET:
            # Unknown here ($1, or set outside the script): kept as written, so that
            # "$BASE_DIR/DeepSeek-R1" still says where the model is.
            fields.append_text(match.group(0))
        elif quoted and match.group("index") in ("[@]",):
            fields.append_split(values)  # "${ARR[@]}": one word per element
            fields.has_content = True
        elif quoted:
            fields.append_text(" ".join(values))
        else:
            fields.append_split(" ".join(values).split())
    tail = segment.text[position:]
    if tail:
        fields.append_text(tail)
    if quoted and not segment.text:
        fields.has_content = True


_UNSET: list[str] = []  # marker (by identity): a variable neither set in the script nor defaulted


def _variable(match: re.Match, shell: _Shell, where: tuple[str, int]) -> list[str] | None:
    name = match.group("braced") or match.group("plain")
    if name is None:
        return None  # $0, $@, $1 ...: the script's arguments are not known here
    values = shell.variables.get(name)
    index = match.group("index")
    if values is None:
        default = match.group("default")
        return [default.strip("\"'")] if default is not None else _UNSET
    if index and index not in ("[@]", "[*]"):
        digits = index[1:-1]
        if len(digits) > MAX_INDEX_DIGITS or not digits.isdigit():
            raise InputError(
                f"{where[0]}:{where[1]}: the array index of ${{{name}[...]}} has {len(digits)} characters; "
                f"specguard reads indexes of at most {MAX_INDEX_DIGITS} digits",
                hint="index the array with a number such as ${ARGS[0]}, or ${ARGS[@]} for all of it",
            )
        position = int(digits)
        return values[position : position + 1]
    if not index and len(values) > 1:
        return values[:1]  # $ARR is its first element in bash
    return list(values)


_SEQ_NUMBER = re.compile(r"-?[0-9]{1,9}")


def _substitute(command: str, shell: _Shell) -> list[str] | None:
    """The output of the command substitutions launch scripts use, else None (unknown)."""
    words = command.split()
    if words[:1] == ["seq"] and 2 <= len(words) <= 4:
        # Numbers of at most nine digits: a longer one is not a batch size, and its digits alone
        # could be megabytes of output.
        numbers = [int(w) for w in words[1:]] if all(_SEQ_NUMBER.fullmatch(w) for w in words[1:]) else []
        if numbers:
            first, step, last = (1, 1, numbers[0]) if len(numbers) == 1 else (
                (numbers[0], 1, numbers[1]) if len(numbers) == 2 else tuple(numbers)
            )
            if step and abs((last - first) // step) < 10_000:
                return [str(n) for n in range(first, last + (1 if step > 0 else -1), step)]
    if words[:1] == ["mktemp"]:
        # A temporary file's path: one word, as mktemp prints it (the template's X's stand for the
        # random part; without a template, coreutils' tmp.XXXXXXXXXX under /tmp). Left unknown, the
        # placeholder's spaces split it in two where an array is expanded unquoted (slime's
        # run-glm5.2-744B-A40B.sh: --sglang-config "$SGLANG_CONFIG_FILE" inside ${SGLANG_ARGS[@]}).
        templates = [w for w in words[1:] if not w.startswith("-")]
        return [templates[-1] if templates else "/tmp/tmp.XXXXXXXXXX"]
    if "BASH_SOURCE" in command and "pwd" in command and shell.script_dir is not None:
        return [str(shell.script_dir)]
    if re.fullmatch(r"\s*dirname\s+\"?\$(?:\{BASH_SOURCE(?:\[0\])?\}|0)\"?\s*", command) and shell.script_dir is not None:
        return [str(shell.script_dir)]
    return None


# ---------------------------------------------------------------- tokens


def _tokenize(text: str, source: str) -> list:
    """Words (with quoting kept for expansion) and operators, each with its line number."""
    return _Tokenizer(text, source).run()


_PLACEHOLDER = re.compile(r"<[A-Za-z][\w.-]*>(?=[\s;|&)]|$)")
# Characters no _take_* method starts on inside a word ('#' starts a comment only between words).
_PLAIN = re.compile(r"[^ \t\r\n\\'\"$;&|()<>]*")


class _Tokenizer:
    """One pass over the text; each ``_take_*`` consumes what starts at ``index`` if it is its kind."""

    def __init__(self, text: str, source: str) -> None:
        self.text, self.source = text, source
        self.tokens: list = []
        self.segments: list[_Segment] = []
        self.word_line = 1
        self.line = 1
        self.index = 0

    def run(self) -> list:
        while self.index < len(self.text):
            if not (self._take_blank() or self._take_quoted() or self._take_dollar() or self._take_operator()):
                # A run of plain characters in one step: a long word costs one call, not one per character.
                plain = _PLAIN.match(self.text, self.index + 1)
                end = plain.end() if plain else self.index + 1
                self.add("lit", self.text[self.index : end])
                self.index = end
        self.flush()
        return self.tokens

    def flush(self) -> None:
        if self.segments:
            self.tokens.append(_Word(segments=self.segments, line=self.word_line))
            self.segments = []

    def add(self, kind: str, piece: str, quoted: bool = False) -> None:
        if not self.segments:
            self.word_line = self.line
        if kind == "lit" and self.segments and self.segments[-1].kind == "lit":
            self.segments[-1].text += piece
        else:
            self.segments.append(_Segment(piece, kind, quoted))

    def _take_blank(self) -> bool:
        """A backslash escape or line continuation, a comment, blanks, a newline."""
        text, index, char = self.text, self.index, self.text[self.index]
        if char == "\\" and index + 1 < len(text):
            if text[index + 1] == "\n":
                self.line += 1
            else:
                self.add("quoted", text[index + 1])
            self.index += 2
        elif char == "#" and not self.segments:
            end = text.find("\n", index)
            self.index = len(text) if end < 0 else end
        elif char in " \t\r":
            self.flush()
            self.index += 1
        elif char == "\n":
            self.flush()
            self.tokens.append(_Op("\n", self.line))
            self.line += 1
            self.index += 1
        else:
            return False
        return True

    def _take_quoted(self) -> bool:
        text, index, char = self.text, self.index, self.text[self.index]
        if char == "'":
            end = text.find("'", index + 1)
            if end < 0:
                raise InputError(f"{self.source}:{self.line}: unterminated single quote", hint="close the quote")
            piece = text[index + 1 : end]
            self.add("quoted", piece)
            self.line += piece.count("\n")
            self.index = end + 1
        elif char == '"':
            self.index, self.line = _double_quoted(text, index + 1, self.line, self.source, self.add)
        else:
            return False
        return True

    def _take_dollar(self) -> bool:
        """A command substitution (expanded later), an arithmetic or braced expansion (kept as text)."""
        text, index = self.text, self.index
        if text.startswith("$(", index) and not text.startswith("$((", index):
            end = _matching_paren(text, index + 2, self.source, self.line)
            self.add("sub", text[index + 2 : end])
            self.line += text[index:end].count("\n")
            self.index = end + 1
        elif text.startswith("$((", index):
            end = text.find("))", index)
            end = len(text) - 2 if end < 0 else end
            self.add("lit", text[index : end + 2])
            self.index = end + 2
        elif text.startswith("${", index):
            end = text.find("}", index)
            end = len(text) - 1 if end < 0 else end
            self.add("lit", text[index : end + 1])
            self.index = end + 1
        else:
            return False
        return True

    def _take_operator(self) -> bool:
        """A placeholder, an array's opening, a redirection (skipped), or an operator."""
        text, index, char = self.text, self.index, self.text[self.index]
        placeholder = _PLACEHOLDER.match(text, index) if char == "<" else None
        if placeholder:  # `--model <your-model>` in documentation: a placeholder, not a redirection
            self.add("lit", placeholder.group(0))
            self.index = placeholder.end()
            return True
        if char not in ";&|()<>":
            return False
        if char == "(" and self.segments and self.segments[-1].kind == "lit" and self.segments[-1].text.endswith("="):
            self.tokens.append(_Word(segments=self.segments, line=self.word_line, opens_array=True))
            self.segments = []
        elif char in "<>" or (char == "&" and text.startswith("&>", index)):
            if self.segments and all(s.kind == "lit" and s.text.isdigit() for s in self.segments):
                self.segments = []  # the 2 of 2>&1 is a file descriptor, not a word
            self.index = _skip_redirection(text, index)
            return True
        else:
            self.flush()
        operator = text[index : index + 2] if text[index : index + 2] in ("&&", "||", ";;") else char
        self.tokens.append(_Op(operator, self.line))
        self.index += len(operator)
        return True


def _double_quoted(text: str, index: int, line: int, source: str, add) -> tuple[int, int]:
    start_line = line
    piece = ""
    while index < len(text):
        char = text[index]
        if char == '"':
            add("dq", piece)
            return index + 1, line
        if char == "\\" and index + 1 < len(text) and text[index + 1] in '"\\$`\n':
            if text[index + 1] == "\n":
                line += 1
            else:
                piece += "\\" + text[index + 1] if text[index + 1] == "$" else text[index + 1]
            index += 2
            continue
        if text.startswith("$(", index) and not text.startswith("$((", index):
            if piece:
                add("dq", piece)
                piece = ""
            end = _matching_paren(text, index + 2, source, line)
            add("sub", text[index + 2 : end], True)
            line += text[index:end].count("\n")
            index = end + 1
            continue
        if char == "\n":
            line += 1
        piece += char
        index += 1
    raise InputError(f"{source}:{start_line}: unterminated double quote", hint="close the quote")


def _matching_paren(text: str, index: int, source: str, line: int) -> int:
    depth = 1
    quote = None
    while index < len(text):
        char = text[index]
        if quote:
            if char == quote:
                quote = None
            elif char == "\\" and quote == '"':
                index += 1
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    raise InputError(f"{source}:{line}: unterminated $(", hint="close the command substitution")


def _skip_redirection(text: str, index: int) -> int:
    """Skip ``> file``, ``2>&1``, ``&>/dev/null``, ``<<EOF`` up to the target word."""
    while index < len(text) and text[index] in "<>&0123456789":
        index += 1
    while index < len(text) and text[index] in " \t":
        index += 1
    while index < len(text) and text[index] not in " \t\n;|&)":
        index += 1
    return index
