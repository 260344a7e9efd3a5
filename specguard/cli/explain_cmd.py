"""``specguard explain [LOG ...|-]``: from a crash log to its cause, its fix and the release that fixes it.

The log is read here, as a stream (specguard/log_digest.py keeps the few lines that matter);
the launch it recorded is rebuilt and checked offline; the crash lines are matched by the
matcher ``launch`` uses (specguard/diagnosis.py).
"""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Iterator
from functools import lru_cache
from typing import IO, Annotated, Any

from specguard.cli.errors import clean_errors
from specguard.cli.options import FORMAT, GPU, SGLANG_VERSION, OutputFormat
from specguard.cli.parsing import Invocation, Parser, Positional, UsageError
from specguard.errors import InputError
from specguard.log_digest import (
    MAX_LINE_BYTES,
    LogDigest,
    TruncatedServerArgs,
    argv_from_fields,
    server_args_fields,
)
from specguard.records import Record, field
from specguard.text_input import open_regular

SCHEMA_VERSION = 1
WIDTH = 80
MAX_UNPLACED = 20
_HINT = "give a log file (SGLang, slime, sgl-jax or `docker logs` output), or - for stdin"

DETAILS = {
    "explain": "Reads SGLang server logs, slime job logs, sgl-jax logs or `docker logs` output (colours, timestamps and "
    "rank prefixes are fine; a log of any size is read as a stream). The launch is rebuilt from the `server_args=ServerArgs(...)` "
    "line (parsed, never evaluated) or the command line, and checked offline at the release the log names; the error "
    "lines are matched against known crash signatures and the rules' own error messages, a cause whose rule also fires "
    "on the rebuilt launch first.\n\n"
    "Exit codes: 0 no cause a configuration error explains (\"no known cause\" included); 1 a cause whose rule is an "
    "error; 2 unreadable input (a directory, a device, a binary or empty file) or a usage error.",
}


class ExplainOptions(Record):
    logs: Annotated[list[str], Positional("LOG", "Log files to read (- or none: stdin).", nargs="*")] = field(default_factory=list)
    sglang_version: Annotated[str | None, SGLANG_VERSION] = None
    gpu: Annotated[str | None, GPU] = None
    output_format: Annotated[OutputFormat, FORMAT] = OutputFormat.human


OPTIONS = {"explain": ExplainOptions}


def configure(parser: Parser, name: str) -> None:
    parser.usage = "specguard explain [OPTIONS] [LOG ...|-]"


class Recovered(Record, kw_only=False):
    """The launch the log recorded, and what of it the log says."""

    argv: tuple[str, ...]
    dialect: str
    where: str
    sglang_version: str | None
    from_log: tuple[str, ...]
    unknown: tuple[str, ...]


def run(invocation: Invocation[ExplainOptions]) -> int:
    o = invocation.options
    formats: dict[OutputFormat, bool | str] = {OutputFormat.json: True, OutputFormat.sarif: "sarif"}
    machine = formats.get(o.output_format, False)
    with clean_errors(lambda: machine):
        logs = list(o.logs) or ["-"]
        if logs.count("-") > 1:
            raise UsageError("stdin (-) can be read once", "specguard explain")
        if logs == ["-"] and sys.stdin.isatty():
            raise UsageError("no LOG given and stdin is a terminal: name a log file, or pipe one in", "specguard explain")
        found = read_logs(logs)
        document, exit_code, notes = explain(found, o.sglang_version, o.gpu)
    if o.output_format is OutputFormat.human and not document["causes"] and document["launch"] is None:
        # Nothing the log explains and no launch in it: one line says so, with the reason a
        # launch line did not count (a cut ServerArgs line) rather than a second line for it.
        print(nothing_found(document, notes))
        return exit_code
    for note in notes:
        print(f"specguard: note: {note}", file=sys.stderr)
    if o.output_format is OutputFormat.json:
        from specguard.report import json_text

        print(json_text(document))
    elif o.output_format is OutputFormat.sarif:
        from specguard.report import json_text

        print(json_text(sarif(document, found)))
    else:
        print(human(document))
    return exit_code


# ------------------------------------------------------------------------------ reading


def read_logs(paths: list[str]) -> LogDigest:
    """One digest of every log, read line by line; refuses what is not a log."""
    from specguard.diagnosis import any_signature

    candidate = any_signature()
    found = LogDigest()
    total = 0
    for path in paths:
        label = "<stdin>" if path == "-" else path
        with _open(path) as stream:
            for number, line in enumerate(_lines(stream, label), 1):
                total += 1
                found.add(f"{label}:{number}", line, candidate)
    if total == 0:
        named = ", ".join("<stdin>" if path == "-" else path for path in paths)
        raise InputError(f"{named}: empty, nothing to explain", hint=_HINT)
    return found


def _open(path: str) -> IO[bytes]:
    if path == "-":
        return os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    try:
        fd = open_regular(path, path, noun="a log file", hint=_HINT)
    except OSError as error:
        raise InputError(f"{path}: cannot read it ({error.strerror or error.__class__.__name__})", hint=_HINT) from None
    return os.fdopen(fd, "rb")


def _lines(stream: IO[bytes], path: str) -> Iterator[str]:
    """The lines as text; one longer than ``MAX_LINE_BYTES`` is cut there (its rest skipped)."""
    head = 0
    while line := stream.readline(MAX_LINE_BYTES):
        if head < 8192:
            if b"\0" in line:
                raise InputError(f"{path}: binary data (NUL bytes), not a log", hint=_HINT)
            head += len(line)
        if len(line) == MAX_LINE_BYTES and not line.endswith(b"\n"):
            while (rest := stream.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass
        yield line.decode("utf-8", errors="replace")


# ------------------------------------------------------------------------------ the launch


def recover(found: LogDigest, sglang_version: str | None, notes: list[str]) -> Recovered | None:
    """The launch from the ServerArgs line, else from the first command line."""
    version = sglang_version or (found.version[1] if found.version else None)
    from_log = [f"SGLang version {version} ({found.version[0]})"] if found.version and not sglang_version else []
    dialect = "sgl-jax" if found.sgl_jax else "sglang"
    # sgl-jax builds are dated, not SGLang releases: no SGLang version is missing for them.
    unknown = [] if version or dialect == "sgl-jax" else ["SGLang version (not in the log: the check assumed the one shown)"]
    if found.server_args is not None:
        where, text = found.server_args
        try:
            fields, skipped = server_args_fields(text)
        except TruncatedServerArgs as error:
            notes.append(f"{where}: {error}; the launch is not recovered from it")
        else:
            dated = () if version or dialect == "sgl-jax" else _releases_with_fields([*fields, *skipped])
            if dated:
                # A whole ServerArgs repr is one release's field set: stronger evidence than the flags.
                version = dated[-1]
                span = dated[0] if len(dated) == 1 else f"{dated[0]} to {dated[-1]}"
                from_log.append(f"SGLang version {span} (the only releases whose ServerArgs has these fields; checked at {version})")
                unknown = [fact for fact in unknown if not fact.startswith("SGLang version")]
            release = defaults_release(fields, skipped, version, dialect)
            if release is not None and not version:
                from_log.append(f"field defaults: SGLang {release}'s (its ServerArgs has the logged fields)")
            argv, unmapped = argv_from_fields(fields, release=release, resolved=text.lstrip().startswith("{"))
            if not fields.get("model_path"):
                notes.append(f"{where}: the ServerArgs line names no model_path; the launch is not recovered from it")
            else:
                # A field no flag sets is SGLang's own state (watermark_*): nothing a launch chose.
                ignored = f"; {len(unmapped)} fields no flag sets left out" if unmapped else ""
                from_log.append(f"flags: the ServerArgs line ({where}){ignored}")
                unknown += [f"field {name} (not a literal)" for name in skipped]
                return Recovered(tuple(argv), dialect, where, version, tuple(from_log), tuple(unknown))
    from specguard.launch_text import find_launches

    for where, line in found.commands:
        try:
            launches = find_launches(line, where)
        except InputError:
            continue
        if launches:
            from_log.append(f"flags: the command line ({where})")
            launch = launches[0]
            if launch.dialect.value == "sgl-jax":
                unknown = [fact for fact in unknown if not fact.startswith("SGLang version")]
            return Recovered(launch.argv, launch.dialect.value, where, version, tuple(from_log), tuple(unknown))
    return None


def _releases_with_fields(names: list[str]) -> tuple[str, ...]:
    from specguard.serverargs_defaults import releases_with_fields

    return releases_with_fields(names)


def defaults_release(fields: dict[str, Any], skipped: tuple[str, ...], version: str | None, dialect: str) -> str | None:
    """The release whose defaults the logged fields are read at: the one the log (or
    --sglang-version) names, else the one its ServerArgs's field names date; None for sgl-jax
    (its ServerArgs is not SGLang's: 0.5.23's parser defaults stand)."""
    if dialect == "sgl-jax":
        return None
    if version:
        return version
    from specguard.serverargs_defaults import release_of_fields

    return release_of_fields([*fields, *skipped])


def _check(recovered: Recovered, gpu: str | None, notes: list[str]) -> tuple[Any, Any] | None:
    """The full check of the recovered launch at its release, offline."""
    from specguard.checking import run_check
    from specguard.cli.check import build_inputs
    from specguard.launch_text import FoundLaunch
    from specguard.models import Dialect

    file, _, line = recovered.where.rpartition(":")
    found = FoundLaunch(argv=recovered.argv, env=(), dialect=Dialect(recovered.dialect), source=file, line=int(line or 0))
    try:
        inputs = build_inputs(
            list(recovered.argv), preset=None, target=None, draft=None, dialect=None, sglang_version=recovered.sglang_version,
            gpu=gpu, gpu_count=None, env=None, offline=True, found=found,
        )
        return run_check(inputs, None, notes)
    except InputError as error:
        notes.append(f"the recovered launch could not be checked: {error.one_line()}")
        return None


# ------------------------------------------------------------------------------ the answer


def explain(found: LogDigest, sglang_version: str | None, gpu: str | None) -> tuple[dict[str, Any], int, list[str]]:
    """The explain document, its exit code, and notes for stderr."""
    from packaging.version import InvalidVersion, Version

    from specguard.diagnosis import all_signatures, diagnose, fixed_in
    from specguard.redact import redact_argv, redact_text
    from specguard.rules import RULES_BY_CODE

    notes: list[str] = []
    recovered = recover(found, sglang_version, notes)
    checked = _check(recovered, gpu, notes) if recovered else None
    ctx, outcome = checked if checked else (None, None)
    named = str(ctx.env.sglang_version) if ctx else sglang_version or (found.version[1] if found.version else None)
    try:
        version = Version(named) if named else None
    except InvalidVersion:
        version = None
    lines = [line for _, line in found.candidates]
    raised = {line: hit for _, line in found.errors if (hit := raised_at(line)) is not None}
    releases = _possible_releases(ctx, sglang_version, found, list(raised.values()))
    diagnoses = diagnose(lines, outcome.findings if outcome else (), version, releases)
    causes = [
        {
            "rule": d.rule,
            "signature": d.signature.key,
            "line": redact_text(d.line.strip()),
            "meaning": d.signature.meaning,
            # How far the log supports it: the rule fired on the logged launch, a message of this
            # failure, or a message many bugs print (worth checking, not conclusive).
            "evidence": "rule fired on the launch" if d.fired else "common message" if d.common else "message",
            "fix": _fix(d, ctx, outcome),
            "fixed_in": fixed_in(RULES_BY_CODE[d.rule]) if d.rule in RULES_BY_CODE else None,
            "sources": _sources(d.signature.source, RULES_BY_CODE.get(d.rule or "")),
            "raised_at": raised_json(raised_at(d.line)),
        }
        for d in diagnoses
    ]
    patterns = [s.pattern for s in all_signatures()]
    unplaced = [redact_text(line.strip()) for _, line in found.errors if not any(p.search(line) for p in patterns)]
    launch = None
    if recovered is not None:
        unknown = list(recovered.unknown)
        if ctx is not None:
            if ctx.env.gpu is None:
                unknown.append("GPU (--gpu names it)")
            if ctx.target is None:
                unknown.append("target model facts (not in the catalog)")
            if ctx.spec.get("speculative_draft_model_path") and ctx.draft is None:
                unknown.append("draft model facts (not in the catalog)")
        launch = {
            "dialect": recovered.dialect,
            "argv": redact_argv(recovered.argv),
            "sglang_version": str(ctx.env.sglang_version) if ctx else recovered.sglang_version,
            "from_log": list(recovered.from_log),
            "unknown": unknown,
        }
    check = None
    if ctx is not None and outcome is not None:
        from specguard.report import outcome_json

        check = outcome_json(outcome, ctx)
    errors = any(c["rule"] in RULES_BY_CODE and RULES_BY_CODE[c["rule"]].severity.value == "error" for c in causes)
    document = {
        "schema_version": SCHEMA_VERSION, "causes": causes, "launch": launch, "check": check, "unplaced": unplaced[:MAX_UNPLACED],
        # Where SGLang raises each unplaced line (its crash strings), when it is one of them.
        "unplaced_raised_at": [raised_json(raised_at(line)) for line in unplaced[:MAX_UNPLACED]],
    }
    return document, 1 if errors else 0, notes


def _possible_releases(ctx: Any, sglang_version: str | None, found: LogDigest, raised: list[Any]) -> tuple[Any, ...] | None:
    """The releases the logged launch may have run, for ranking causes by their rules' windows:
    None where one release is named (--sglang-version, the log's version line); else those its
    flags fit (where the check inferred the release) and that hold every message the log shows
    SGLang raising (``raised``: its crash strings); empty where nothing dates it (the check's
    default release is an assumption, not evidence against a rule's window)."""
    from packaging.version import Version

    from specguard.versions import history

    if sglang_version or found.version:
        return None
    data = history()
    span = ctx.env.sglang_version_range if ctx is not None else None
    possible = set(data.between(*span)) if span else None
    for hit in raised:
        if holding := set(data.between(hit.first, hit.last)):
            possible = holding if possible is None else possible & holding
    if not possible:
        return ()
    return tuple(Version(release) for release in data.releases if release in possible)


def raised_at(line: str) -> Any:
    """Where SGLang raises ``line``'s message, and the releases that hold it (the release ledger's
    crash strings, ``specguard/crash_strings.py``): the most specific template found in it, or None.
    A cause's line is most often an error line already looked up: each is matched once."""
    return _raised_at(line.strip())


@lru_cache(maxsize=256)
def _raised_at(line: str) -> Any:
    from specguard.crash_strings import matching

    found = matching(line)
    return found[0] if found else None


def raised_json(hit: Any) -> dict[str, str] | None:
    if hit is None:
        return None
    from specguard.versions import history

    releases = history().releases
    # The first release without the message, where the ledger has it (a fix, a reworded message, a refactor).
    gone = releases[releases.index(hit.last) + 1] if hit.last in releases[:-1] else None
    return {"file": f"sglang/{hit.file}", "function": hit.function, "exception": hit.exception, "first": hit.first, "last": hit.last,
            "gone_from": gone}


def _fix(diagnosis: Any, ctx: Any, outcome: Any) -> list[str] | None:
    """The corrected launch's flags (as `check --fix` gives them); the fix's own flags where no
    launch was recovered; None where the cause has no fix in flags."""
    from specguard.diagnosis import retry_spec
    from specguard.dialects import render
    from specguard.redact import redact_spec
    from specguard.spec import LaunchSpec

    if not diagnosis.edits:
        return None
    if ctx is None:
        spec = LaunchSpec()
        for edit in diagnosis.edits:
            spec = spec.apply(edit)
        return render(spec) or None
    spec, refusal = retry_spec(ctx.spec, diagnosis.edits, ctx, outcome)
    return None if refusal else render(redact_spec(spec))


def _sources(signature_source: str, rule: Any) -> list[str]:
    """The thread that quotes the line, then the rule's own threads (its other sources name
    files of SGLang or design notes, which the rule's docs show)."""
    rule_sources = [s for s in rule.sources if s.startswith("https://")] if rule is not None else []
    return list(dict.fromkeys([signature_source, *rule_sources]))


# ------------------------------------------------------------------------------ output


def human(document: dict[str, Any]) -> str:
    """The answer in 80 columns."""
    out: list[str] = []

    def say(label: str, text: str) -> None:
        out.extend(textwrap.wrap(text, WIDTH, initial_indent=f"  {label:<10}", subsequent_indent=" " * 12, break_on_hyphens=False) or [f"  {label}"])

    for number, cause in enumerate(document["causes"], 1):
        title = f"{cause['rule']} " if cause["rule"] else ""
        out.append(textwrap.shorten(f"cause {number}: {title}{cause['signature']}", WIDTH))
        say("log:", textwrap.shorten(cause["line"], 3 * (WIDTH - 12)))
        say("meaning:", cause["meaning"])
        if cause["evidence"] != "message":
            say("evidence:", cause["evidence"])
        if cause["fix"]:
            say("fix:", " ".join(cause["fix"]))
        if cause["fixed_in"]:
            say("fixed in:", f"SGLang {cause['fixed_in']}")
        if cause["raised_at"]:
            say("raised in:", _raised_words(cause["raised_at"]))
        for source in cause["sources"]:
            say("source:", source)
    if not document["causes"]:
        unplaced = document["unplaced"]
        out.append("no known cause" + (": no signature fits the error line" if unplaced else ": the log holds no error line"))
        if unplaced:
            say("log:", textwrap.shorten(unplaced[0], 3 * (WIDTH - 12)))
            if document["unplaced_raised_at"][0]:
                say("raised in:", _raised_words(document["unplaced_raised_at"][0]))
    launch = document["launch"]
    if launch is not None:
        out.append("launch (sgl-jax):" if launch["dialect"] == "sgl-jax" else f"launch (SGLang {launch['sglang_version']}):")
        say("flags:", " ".join(launch["argv"]))
        for fact in launch["from_log"]:
            say("from log:", fact)
        for fact in launch["unknown"]:
            say("unknown:", fact)
        check = document["check"]
        if check is not None:
            codes = ", ".join(f"{f['code']} ({f['severity']})" for f in check.get("findings", []))
            say("check:", codes or "no findings")
    else:
        out.append("launch: not in the log (no ServerArgs line, no command line)")
    return "\n".join(out)


def _raised_words(raised: dict[str, str]) -> str:
    releases = raised["first"] if raised["first"] == raised["last"] else f"{raised['first']} to {raised['last']}"
    where = f"{raised['file']} {raised['function']} (SGLang {releases}"
    return where + (f"; gone from {raised['gone_from']})" if raised["gone_from"] else ")")


def nothing_found(document: dict[str, Any], notes: list[str]) -> str:
    """The one line for a log with no known cause and no launch."""
    unplaced = document["unplaced"]
    line = f"no known cause: no signature fits `{textwrap.shorten(unplaced[0], WIDTH)}`" if unplaced else (
        "no known cause: the log holds no error line"
    )
    raised = document["unplaced_raised_at"][0] if unplaced else None
    return "; ".join([line, *([f"SGLang raises it in {_raised_words(raised)}"] if raised else []), *notes])


def sarif(document: dict[str, Any], found: LogDigest) -> dict[str, Any]:
    """The causes as SARIF results, each at the log line it matched."""
    from specguard import __version__
    from specguard.rules import RULES_BY_CODE

    where_of = {line.strip(): where for where, line in found.candidates}
    results = []
    for cause in document["causes"]:
        rule = RULES_BY_CODE.get(cause["rule"] or "")
        level = {"error": "error", "warning": "warning"}.get(rule.severity.value, "note") if rule else "note"
        file, _, line = where_of.get(cause["line"], "<log>:1").rpartition(":")
        results.append({
            "ruleId": cause["rule"] or cause["signature"], "level": level,
            "message": {"text": f"{cause['meaning']}; fix: {' '.join(cause['fix']) if cause['fix'] else 'see the sources'}"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": file}, "region": {"startLine": int(line or 1)}}}],
        })
    driver = {"name": "specguard", "version": __version__, "informationUri": "https://github.com/sgl-project/sglang"}
    return {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [{"tool": {"driver": driver}, "results": results}]}
