"""What a rule is: metadata, documentation, examples and one pure check function.

A rule module defines ``RULE = Rule(...)`` and a ``check(ctx)`` generator that yields findings
made with ``RULE.finding(...)``. It reads only ``ctx``: never a file, the network, the process
environment or a GPU.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from enum import Enum
from functools import cache
from typing import Any

import msgspec
from packaging.version import Version

from specguard.models import (
    Applicability,
    Category,
    Dialect,
    Edit,
    Environment,
    Finding,
    Fix,
    FlagValue,
    ModelFacts,
    RequestFeature,
    Severity,
)
from specguard.records import Record, field
from specguard.resolution import Resolution, canonical_algorithm, predict
from specguard.spec import LaunchSpec

_COMPARISONS = {
    "==": operator.eq,
    "!=": operator.ne,
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}


@cache
def _clauses(specifier: str) -> tuple[tuple[str, Version], ...]:
    clauses = []
    for clause in specifier.split(","):
        clause = clause.strip()
        op = next((op for op in ("==", "!=", ">=", "<=", ">", "<") if clause.startswith(op)), None)
        if op is None or "*" in clause or clause.startswith(("~=", "===")):
            raise ValueError(f"unsupported version range {specifier!r}: use ==, !=, >=, <=, > or < clauses")
        clauses.append((op, Version(clause[len(op) :].strip())))
    return tuple(clauses)


def version_in_range(specifier: str, version: Version) -> bool:
    """Whether ``version`` satisfies a rule's ``sglang_versions`` (comma-joined comparison clauses).

    The subset of PEP 440 specifiers the rules use, evaluated like
    ``packaging.specifiers.SpecifierSet(spec).contains(version, prereleases=True)`` (a test holds
    the two equal for every rule). ``packaging.specifiers`` itself costs the check path ~12 ms of
    imports (``packaging.tags``, ``sysconfig``, ``logging``) for a handful of comparisons.
    """
    return all(_COMPARISONS[op](version, bound) for op, bound in _clauses(specifier))


class CheckContext(Record, kw_only=False):
    """Everything a rule may look at. Build it with ``CheckContext.build``."""

    spec: LaunchSpec
    target: ModelFacts | None
    draft: ModelFacts | None
    env: Environment
    resolution: Resolution  # what SGLang will set: derived from the four above (build)

    @classmethod
    def build(cls, spec: LaunchSpec, target: ModelFacts | None, draft: ModelFacts | None, env: Environment) -> CheckContext:
        return cls(spec=spec, target=target, draft=draft, env=env, resolution=predict(spec, target, draft, env))

    def with_spec(self, spec: LaunchSpec) -> CheckContext:
        env = self.env
        if env.sglang_version_inferred:  # the version follows the flags: a fix may move it
            from specguard.environment import with_release_of

            env = with_release_of(env, spec)
        return CheckContext.build(spec, self.target, self.draft, env)

    @property
    def algorithm(self) -> str | None:
        """The algorithm after SGLang's aliasing (NEXTN is EAGLE), or None without speculation."""
        return canonical_algorithm(self.spec.get("speculative_algorithm"))

    @property
    def version(self) -> Version:
        return self.env.version

    @property
    def drafts_from_target_checkpoint(self) -> bool:
        """No separate draft checkpoint: --speculative-draft-model-path unset or the target's own path, so
        the draft's layers (MTP/NextN) come from the target's checkpoint and its config.json."""
        draft_path = self.spec.get("speculative_draft_model_path")
        return draft_path is None or draft_path == self.spec.get("model_path")

    def flag(self, name: str) -> str:
        """How to name a flag to this user: in their dialect's spelling."""
        from specguard.dialects import (
            _spelling,  # local: dialects imports spec, not rules
        )

        return _spelling(name, self.spec.dialect)


class Example(Record):
    """A configuration in data: the bad one must make the rule fire, the good one must not."""

    argv: tuple[str, ...]
    target: dict[str, Any] | None = None
    draft: dict[str, Any] | None = None
    env: dict[str, str] = field(default_factory=dict)
    gpu: str | None = None
    sglang_version: str | None = None
    # How the release was named, when not given: "inferred from flags", "dated from a report".
    sglang_version_origin: str | None = None
    sgl_jax_version: str | None = None  # an sgl-jax build, as --sgl-jax-version takes it
    slime_version: str | None = None  # a slime release or commit, as --slime-version takes it
    dialect: Dialect = Dialect.SGLANG

    def context(self) -> CheckContext:
        """The example as a context, exactly as a rule sees it (no I/O: facts are inline)."""
        from specguard.dialects import parse
        from specguard.environment import NEWEST_KNOWN_SGLANG, gpu_by_name

        spec = parse(self.argv, self.dialect, env=tuple(self.env.items()))
        env = Environment(
            sglang_version=self.sglang_version or NEWEST_KNOWN_SGLANG,
            sglang_version_origin=self.sglang_version_origin or ("given" if self.sglang_version else "default"),
            gpu=gpu_by_name(self.gpu) if self.gpu else None,
            gpu_origin="given" if self.gpu else "unknown",
            slime_version=self.slime_version,
        )
        if self.dialect is Dialect.SGL_JAX:
            from specguard.environment import with_sgl_jax_build

            env = with_sgl_jax_build(env, self.sgl_jax_version, detect=False)
        # Facts written as data (lists, nested dicts, enum values): typed here, where they are read.
        target = msgspec.convert({"source": "example:target", **self.target}, ModelFacts) if self.target is not None else None
        draft = msgspec.convert({"source": "example:draft", **self.draft}, ModelFacts) if self.draft is not None else None
        return CheckContext.build(spec, target, draft, env)

    def command(self) -> str:
        env = " ".join(f"{k}={v}" for k, v in self.env.items())
        prefix = {Dialect.SGLANG: "", Dialect.SLIME: "(slime) ", Dialect.SGL_JAX: "(sgl-jax) "}[self.dialect]
        return f"{prefix}{env + ' ' if env else ''}{' '.join(self.argv)}"


class RuleDocs(Record):
    what: str
    why: str
    fix: str
    fix_safety: str


class FixAvailability(str, Enum):
    """Whether a rule's findings carry a fix (ruff's FixAvailability): declared, so the tests can
    hold a rule to it and the docs can say it."""

    NEVER = "never"
    SOMETIMES = "sometimes"
    ALWAYS = "always"


# The launches SGLang itself runs (its own spelling, or slime's --sglang-* one); a rule about
# SGLang's code path declares these, so it stays quiet on sgl-jax, which has its own.
SGLANG_DIALECTS = (Dialect.SGLANG, Dialect.SLIME)


class Rule(Record, kw_only=False):
    code: str
    name: str
    summary: str
    severity: Severity
    docs: RuleDocs
    bad: Example
    good: Example
    sources: tuple[str, ...]
    check: Callable[[CheckContext], Iterable[Finding]]
    category: Category  # what its findings mean for the launch; with the severity it sets how loud (severity.py)
    sglang_versions: str | None = None
    dialects: tuple[Dialect, ...] | None = None
    fix_availability: FixAvailability = FixAvailability.SOMETIMES
    # The kind of request the rule's bug needs, when only some requests hit it (severity.py).
    needs: RequestFeature | None = None
    # The rules whose finding this rule's finding makes redundant (the same cause, told more
    # specifically): the engine drops theirs when this rule's finding names all of their flags.
    supersedes: tuple[str, ...] = ()
    # What the failure looks like in a runtime's log: regexes for the error SGLang prints, which
    # `explain` and `launch`'s crash diagnosis match (specguard/diagnosis.py).
    log_signatures: tuple[str, ...] = ()

    def applies_to(self, ctx: CheckContext) -> bool:
        if self.dialects is not None and ctx.spec.dialect not in self.dialects:
            return False
        if self.sglang_versions:
            # A window of SGLang releases: sgl-jax is none of them (its builds are dated instead,
            # see sglang_facts.sgl_jax), so only a rule that names sgl-jax itself runs there.
            if ctx.spec.dialect is Dialect.SGL_JAX:
                return self.dialects is not None and Dialect.SGL_JAX in self.dialects
            return version_in_range(self.sglang_versions, ctx.version)
        return True

    def finding(
        self,
        message: str,
        *,
        flags: Iterable[str] = (),
        fix: Fix | None = None,
        severity: Severity | None = None,
    ) -> Finding:
        if fix is not None and self.fix_availability is FixAvailability.NEVER:
            raise ValueError(f"{self.code} declares fix_availability NEVER but offers a fix")  # a rule's own bug
        return Finding(
            code=self.code,
            name=self.name,
            severity=severity or self.severity,
            message=message,
            flags=tuple(flags),
            fix=fix,
            sources=self.sources,
        )


def set_flags(title: str, applicability: Applicability, **values: FlagValue) -> Fix:
    """A fix that sets flags, named by their SGLang dest (``context_length=2048``)."""
    from specguard.flags import FLAGS_BY_DEST

    edits = tuple(Edit(name=FLAGS_BY_DEST[dest].flag, value=value) for dest, value in values.items())
    return Fix(title=title, applicability=applicability, edits=edits)


def fix_of(title: str, applicability: Applicability, *edits: Edit) -> Fix:
    return Fix(title=title, applicability=applicability, edits=tuple(edits))
