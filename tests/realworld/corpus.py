"""The real-world corpus: cases from public bug reports and documented-good launches, each run
through ``specguard check --format json`` exactly as a user would, and judged.

One YAML file per case under ``cases/<domain>/``; the format is documented in README.md beside
this file and enforced by :class:`Case` (unknown keys are errors). This module has no pytest
dependency so ``scripts/realworld_figures.py`` can print the same figures the tests compute.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

HERE = Path(__file__).resolve().parent
CASES_DIR = HERE / "cases"
REPO = HERE.parent.parent
HF_FIXTURES = REPO.parent / "shared" / "fixtures" / "hf-configs"

# Domain -> issue part. Part 1: model families and hardware; part 2: feature interactions and
# the RL and TPU launchers.
DOMAINS: dict[str, int] = {
    "hybrid-linear-attention": 1,
    "sliding-window": 1,
    "mla": 1,
    "multimodal": 1,
    "quantization": 1,
    "draft-checkpoint": 1,
    "hardware": 1,
    "cache": 2,
    "grammar": 2,
    "features": 2,  # LoRA, metrics, profiling, expert distribution, torch.compile
    "pd-disaggregation": 2,
    "parallelism": 2,
    "adaptive-specv2": 2,
    "ngram": 2,
    "dflash": 2,
    "slime": 2,
    "sgl-jax": 2,
}


class Verdict(str, Enum):
    REJECT = "reject"  # the launch must not run as written: an error finding
    FIX = "fix"  # the launch runs once a flag changes: a finding naming that flag
    WARN = "warn"  # the launch runs but badly (slow, silent fallback): a warning or error finding
    OK = "ok"  # a documented-good launch: no warning or error finding (a false-alarm trap)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Source(_Strict):
    report: str = Field(description="owner/repo#N of the thread (issue or PR) or a doc/script path")
    url: str
    opened: str | None = Field(None, description="YYYY-MM-DD the thread was opened")
    quote: str = Field(description="a short quote of the report or of the fix")
    fix: str | None = Field(None, description="the PR or release file:line that fixed or explains it")

    @field_validator("url")
    @classmethod
    def _public_url(cls, url: str) -> str:
        if not url.startswith("https://"):
            raise ValueError("source.url must be a public https URL")
        return url


class ModelInput(_Strict):
    """The config.json facts that matter, as config.json keys. ``fixture`` names a real config
    under shared/fixtures/hf-configs; ``config`` keys (from the thread or a real public
    config.json, said in ``config_from``) are laid over it. Keys not given stay unknown."""

    fixture: str | None = None
    config: dict[str, Any] = {}
    config_from: str | None = None

    @model_validator(mode="after")
    def _cited(self) -> ModelInput:
        if self.config and not self.config_from:
            raise ValueError("config keys need config_from: the thread or the public config.json they come from")
        return self

    def config_json(self) -> dict[str, Any]:
        base: dict[str, Any] = {}
        if self.fixture:
            path = HF_FIXTURES / self.fixture / "config.json"
            base = json.loads(path.read_text())
        return {**base, **self.config}


class Hardware(_Strict):
    gpu: str | None = None
    count: int | None = None


class Expect(_Strict):
    verdict: Verdict
    flags: tuple[str, ...] = ()
    rules: tuple[str, ...] = Field((), description="the rules that catch it: only their findings count (a case naming none is xfail)")

    @model_validator(mode="after")
    def _flags_for_failures(self) -> Expect:
        # A warn case names its flags too: otherwise any unrelated warning (an open --host, say)
        # would count as catching it.
        if self.verdict is not Verdict.OK and not self.flags:
            raise ValueError("a reject, fix or warn case names the flags that must change (expect.flags)")
        return self


class Case(_Strict):
    id: str
    title: str
    domain: str
    source: Source
    sglang_version: str
    version_basis: str = Field(description="'stated in the thread', or how the thread was dated")
    hardware: Hardware = Hardware()
    dialect: Literal["sglang", "slime", "sgl-jax"] | None = None
    argv: tuple[str, ...]
    env: dict[str, str] = {}
    target: ModelInput | None = None
    draft: ModelInput | None = None
    symptom: str
    expect: Expect
    xfail: str | None = Field(None, description="why the rules cannot catch it yet")
    log: str | None = Field(None, description="the error message or traceback the source quotes, verbatim (up to ~40 lines)")
    log_source: str | None = Field(None, description="the https URL of the issue, PR or comment the log was copied from")

    @field_validator("domain")
    @classmethod
    def _known_domain(cls, domain: str) -> str:
        if domain not in DOMAINS:
            raise ValueError(f"unknown domain {domain!r}: one of {', '.join(DOMAINS)}")
        return domain

    @model_validator(mode="after")
    def _log_cited(self) -> Case:
        if (self.log is None) != (self.log_source is None):
            raise ValueError("log and log_source go together: the verbatim error text and the public URL it was copied from")
        if self.log is not None:
            if not self.log.strip():
                raise ValueError("log must be the quoted error text, not empty")
            if not (self.log_source or "").startswith("https://"):
                raise ValueError("log_source must be a public https URL")
            if not self.is_failure:
                raise ValueError("only a failure case quotes an error (log)")
        return self

    @property
    def part(self) -> int:
        return DOMAINS[self.domain]

    @property
    def is_failure(self) -> bool:
        return self.expect.verdict is not Verdict.OK


def launch_key(case: Case) -> tuple[Any, ...]:
    """What makes two cases the same launch: the command, its environment, release, hardware and
    model facts (the same argv on another release or model is another launch)."""
    models = tuple(None if m is None else json.dumps(m.config_json(), sort_keys=True) for m in (case.target, case.draft))
    return (case.dialect, case.argv, tuple(sorted(case.env.items())), case.sglang_version, case.hardware, *models)


def load_cases(root: Path = CASES_DIR) -> tuple[Case, ...]:
    cases = []
    for path in sorted(root.rglob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        case = Case.model_validate(data)
        if case.id != path.stem:
            raise ValueError(f"{path}: id {case.id!r} differs from the file name")
        if path.parent.name != case.domain:
            raise ValueError(f"{path}: domain {case.domain!r} differs from its folder")
        cases.append(case)
    return tuple(cases)


@dataclass(frozen=True)
class Result:
    case: Case
    exit_code: int
    findings: tuple[dict[str, Any], ...]
    error: str | None

    def _catches(self) -> list[dict[str, Any]]:
        """The findings of the rules the case names (``expect.rules``) that name a flag it says
        must change: another rule's finding catches nothing (an open --host is no crash)."""
        if self.error is not None or not self.case.is_failure:
            return []
        wanted, rules = set(self.case.expect.flags), set(self.case.expect.rules)
        return [f for f in self.findings if f["code"] in rules and wanted & set(f["flags"])]

    @property
    def caught(self) -> bool:
        """A failure case counts when one of its rules reports it on a flag it names: as an error
        for a reject case, else as a warning or error, or as info where the severity policy makes
        that rule quiet by default (:attr:`caught_quietly`)."""
        if self.case.expect.verdict is Verdict.REJECT:
            return any(f["severity"] == "error" for f in self._catches())
        return any(f["severity"] in ("warning", "error") for f in self._catches()) or self.caught_quietly

    @property
    def caught_quietly(self) -> bool:
        """Caught only as info, because the policy quiets the rule by default: a slower or
        exposed launch, or a bug only some requests hit (specguard.severity). The figures count
        these apart, so a catch the default output shows as info is never passed off as a warning."""
        from specguard.rules import RULES_BY_CODE
        from specguard.severity import LOUD_CATEGORIES

        if self.case.expect.verdict is Verdict.REJECT:
            return False
        catches = self._catches()
        if any(f["severity"] in ("warning", "error") for f in catches):
            return False
        quiet = {f["code"] for f in catches if RULES_BY_CODE[f["code"]].category not in LOUD_CATEGORIES or RULES_BY_CODE[f["code"]].needs}
        return bool(quiet)

    @property
    def warned(self) -> bool:
        """A good case that gets a warning or an error: it fails the corpus (a warning must mean
        the launch fails or degrades for you, and this one is documented to work)."""
        return not self.case.is_failure and any(f["severity"] in ("warning", "error") for f in self.findings)

    @property
    def false_alarm(self) -> bool:
        """A good case that specguard cannot read or that gets an error finding."""
        if self.case.is_failure:
            return False
        return self.error is not None or any(f["severity"] == "error" for f in self.findings)

    def describe(self) -> str:
        if self.error:
            return f"specguard could not read the case: {self.error}"
        shown = [f"{f['code']} {f['severity']} {f['flags']}: {f['message'][:160]}" for f in self.findings if f["code"] != "RS001"]
        return "findings:\n  " + ("\n  ".join(shown) if shown else "(none)")


def command(case: Case, target_dir: Path | None, draft_dir: Path | None) -> list[str]:
    # "~": each case's release is dated from its report; the build it ran may be a later one.
    args = ["check", "--offline", "--format", "json", "--sglang-version", f"~{case.sglang_version}"]
    if case.hardware.gpu:
        args += ["--gpu", case.hardware.gpu]
    if case.hardware.count:
        args += ["--gpu-count", str(case.hardware.count)]
    if case.dialect:
        args += ["--dialect", case.dialect]
    if target_dir is not None:
        args += ["--target", str(target_dir)]
    if draft_dir is not None:
        args += ["--draft", str(draft_dir)]
    for key, value in case.env.items():
        args += ["--env", f"{key}={value}"]
    return [*args, "--", *case.argv]


def run_case(case: Case) -> Result:
    """Write the config.json facts into model directories and run the real CLI on the launch."""
    with tempfile.TemporaryDirectory(prefix=f"sg-{case.id[:40]}-") as tmp:
        dirs: dict[str, Path | None] = {}
        for role, model in (("target", case.target), ("draft", case.draft)):
            if model is None:
                dirs[role] = None
                continue
            folder = Path(tmp) / role
            folder.mkdir()
            (folder / "config.json").write_text(json.dumps(model.config_json()))
            dirs[role] = folder
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_", "SGL_", "HF_"))}
        clean.update({"HF_HUB_OFFLINE": "1", "NO_COLOR": "1"})
        proc = subprocess.run(
            [sys.executable, "-m", "specguard", *command(case, dirs["target"], dirs["draft"])],
            capture_output=True, text=True, env=clean, cwd=tmp, timeout=120,
        )
    try:
        document = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return Result(case, proc.returncode, (), f"exit {proc.returncode}, no JSON: {(proc.stderr or proc.stdout).strip()[-300:]}")
    if "error" in document:
        return Result(case, proc.returncode, (), document["error"])
    return Result(case, proc.returncode, tuple(document["findings"]), None)


@cache
def all_results() -> dict[str, Result]:
    """Every case's result, two at a time (the CLI is a subprocess; the machine has two cores)."""
    cases = load_cases()
    with ThreadPoolExecutor(max_workers=2) as pool:
        return {result.case.id: result for result in pool.map(run_case, cases)}


@dataclass(frozen=True)
class Tally:
    failures: int = 0
    caught: int = 0
    goods: int = 0
    false_alarms: int = 0
    xfail: int = 0
    caught_quietly: int = 0
    warned: int = 0

    def add(self, result: Result) -> Tally:
        if result.case.is_failure:
            return replace(self, failures=self.failures + 1, caught=self.caught + result.caught,
                           caught_quietly=self.caught_quietly + result.caught_quietly, xfail=self.xfail + bool(result.case.xfail))
        return replace(self, goods=self.goods + 1, false_alarms=self.false_alarms + result.false_alarm,
                       warned=self.warned + result.warned, xfail=self.xfail + bool(result.case.xfail))


def _rate(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "n/a"


def figures_table(results: Iterable[Result]) -> str:
    """The figures as a Markdown table: per domain, per part, and overall."""
    results = list(results)
    rows: list[tuple[str, Tally]] = []
    for part in (1, 2):
        for domain, domain_part in DOMAINS.items():
            if domain_part != part:
                continue
            tally = Tally()
            for result in results:
                if result.case.domain == domain:
                    tally = tally.add(result)
            if tally.failures or tally.goods:
                rows.append((f"{domain} (part {part})", tally))
        tally = Tally()
        for result in results:
            if result.case.part == part:
                tally = tally.add(result)
        rows.append((f"**part {part}**", tally))
    total = Tally()
    for result in results:
        total = total.add(result)
    rows.append(("**all**", total))
    lines = [
        "| domain | failure cases | caught | of them as info | catch rate | marked xfail | good cases | warnings on good | false alarms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, t in rows:
        lines.append(
            f"| {name} | {t.failures} | {t.caught} | {t.caught_quietly} | {_rate(t.caught, t.failures)} | {t.xfail} | {t.goods} "
            f"| {t.warned} ({_rate(t.warned, t.goods)}) | {t.false_alarms} |"
        )
    return "\n".join(lines)


# --- `specguard explain` on the quoted error text (issue #24) -----------------------------------

SGLANG_PYTHON = REPO / ".venv-sglang" / "bin" / "python"

# Run inside SGLang's venv: the launch each case's argv makes, as SGLang's own parser builds it and
# its ServerArgs.__repr__ prints it (unresolved: resolution needs the model's files). None where
# SGLang's parser refuses the argv (say, no --model-path: the report names no model).
_SGLANG_ECHO = r"""
import contextlib, io, json, sys
from sglang.srt.server_args import prepare_server_args
out = {}
for key, argv in json.load(sys.stdin).items():
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            out[key] = "server_args=" + repr(prepare_server_args(list(argv)))
    except BaseException:
        out[key] = None
print(json.dumps(out))
"""


def _literal(value: str) -> Any:
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def echo_by_hand(argv: Iterable[str]) -> str:
    """The launch in the form SGLang prints it (``server_args=ServerArgs(name=value, ...)``), built
    from the argv alone: each flag as its field name, a bare flag as True, numbers as numbers.
    Used where SGLang's own parser cannot build the record (see :func:`launch_echoes`)."""
    argv = list(argv)
    fields: list[tuple[str, Any]] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if not arg.startswith("--"):
            continue
        name, eq, inline = arg[2:].partition("=")
        values = [inline] if eq else []
        while not eq and i < len(argv) and not argv[i].startswith("--"):
            values.append(argv[i])
            i += 1
        value: Any = True if not values else _literal(values[0]) if len(values) == 1 else [_literal(v) for v in values]
        fields.append((name.replace("-", "_"), value))
    return "server_args=ServerArgs(" + ", ".join(f"{k}={v!r}" for k, v in fields) + ")"


def _sglang_argv(case: Case) -> list[str] | None:
    """The SGLang server argv of a case: as given, or slime's --sglang-* flags without the prefix;
    None for sgl-jax (another server with its own arguments)."""
    if case.dialect == "sgl-jax":
        return None
    if case.dialect == "slime":
        argv: list[str] = []
        keep = False
        for arg in case.argv:
            if arg.startswith("--"):
                keep = arg.startswith("--sglang-")
                if keep:
                    argv.append("--" + arg[len("--sglang-"):])
            elif keep:
                argv.append(arg)
        return argv
    return list(case.argv)


@cache
def launch_echoes(case_ids: tuple[str, ...] | None = None) -> dict[str, tuple[str, str]]:
    """Case id -> (the ``server_args=ServerArgs(...)`` line, who built it: "sglang" or "by hand"),
    for the cases with a ``log``. SGLang's own prepare_server_args (the venv at .venv-sglang) builds
    it where it can; :func:`echo_by_hand` otherwise."""
    cases = [c for c in load_cases() if c.log is not None and (case_ids is None or c.id in case_ids)]
    wanted = {c.id: argv for c in cases if (argv := _sglang_argv(c)) is not None}
    built: dict[str, str | None] = {}
    if wanted and SGLANG_PYTHON.is_file():
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_", "SGL_"))}
        clean.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
        try:
            proc = subprocess.run([str(SGLANG_PYTHON), "-c", _SGLANG_ECHO], input=json.dumps(wanted), capture_output=True,
                                  text=True, env=clean, timeout=600)
            built = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else {}
        except (subprocess.TimeoutExpired, json.JSONDecodeError):
            built = {}
    echoes = {}
    for case in cases:
        line = built.get(case.id)
        echoes[case.id] = (line, "sglang") if line else (echo_by_hand(_sglang_argv(case) or case.argv), "by hand")
    return echoes


class ExplainUnavailable(RuntimeError):
    """This specguard has no ``explain`` command (issue #24): the figures are unavailable, not 0%."""


def explain_rules(text: str) -> list[str | None]:
    """The rules of the causes ``specguard explain --format json -`` names for ``text``, best first
    (None for a cause no rule names). A run that fails or prints no JSON names none."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_", "SGL_", "HF_"))}
    clean.update({"HF_HUB_OFFLINE": "1", "NO_COLOR": "1"})
    proc = subprocess.run([sys.executable, "-m", "specguard", "explain", "--format", "json", "-"], input=text,
                          capture_output=True, text=True, env=clean, timeout=120)
    if "no such command" in proc.stderr:
        raise ExplainUnavailable(proc.stderr.strip().splitlines()[-1])
    try:
        document = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return []
    return [cause.get("rule") for cause in document.get("causes", [])]


@dataclass(frozen=True)
class Explained:
    case: Case
    alone: tuple[str | None, ...]  # the rules explain names for the log alone, best first
    with_launch: tuple[str | None, ...]  # ... for the launch echo line, then the log
    echo_by: str  # "sglang" or "by hand"

    @property
    def in_first_three(self) -> bool:
        return bool(set(self.alone[:3]) & set(self.case.expect.rules))

    @property
    def first_with_launch(self) -> bool:
        return bool(self.with_launch) and self.with_launch[0] in self.case.expect.rules


def explain_case(case: Case, echo: tuple[str, str]) -> Explained:
    assert case.log is not None
    alone = explain_rules(case.log)
    with_launch = explain_rules(f"{echo[0]}\n{case.log}")
    return Explained(case, tuple(alone), tuple(with_launch), echo[1])


@cache
def explain_results() -> tuple[Explained, ...] | str:
    """Every logged case through ``specguard explain``, or why the figures are unavailable."""
    cases = [c for c in load_cases() if c.log is not None]
    echoes = launch_echoes()
    try:
        explain_rules("")
    except ExplainUnavailable as unavailable:
        return str(unavailable)
    with ThreadPoolExecutor(max_workers=2) as pool:
        return tuple(pool.map(lambda c: explain_case(c, echoes[c.id]), cases))


def explain_table(explained: tuple[Explained, ...] | str, cases: Iterable[Case]) -> str:
    """The explain figures as a Markdown table, per part and overall: of the failure cases whose
    source quotes an error (``log``), how many ``explain`` names one of the case's rules for among
    its first three causes on the log alone, and first with the launch echoed before it."""
    cases = list(cases)
    lines = [
        "| explain | failure cases | with a quoted error | rule in first three (log alone) | rule first (launch echoed) | launch echoed by SGLang's parser |",
        "|---|---|---|---|---|---|",
    ]
    for name, part in (("part 1", 1), ("part 2", 2), ("**all**", None)):
        failures = [c for c in cases if c.is_failure and (part is None or c.part == part)]
        logged = [c for c in failures if c.log is not None]
        if isinstance(explained, str):
            lines.append(f"| {name} | {len(failures)} | {len(logged)} | unavailable | unavailable | – |")
            continue
        mine = [e for e in explained if part is None or e.case.part == part]
        top3 = sum(e.in_first_three for e in mine)
        first = sum(e.first_with_launch for e in mine)
        by_sglang = sum(e.echo_by == "sglang" for e in mine)
        lines.append(f"| {name} | {len(failures)} | {len(logged)} | {top3} ({_rate(top3, len(mine))}) "
                     f"| {first} ({_rate(first, len(mine))}) | {by_sglang} of {len(mine)} |")
    if isinstance(explained, str):
        lines.append(f"\n`specguard explain` is unavailable here ({explained}): these figures are not 0%.")
    return "\n".join(lines)
