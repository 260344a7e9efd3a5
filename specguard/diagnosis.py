"""From a runtime's log lines to the causes of its crash: the one matcher ``launch`` (its crash
diagnosis and ``--retry-with-fix``) and ``explain`` share.

The signatures it reads are two tables: ``specguard/launch/signatures.py`` (a log line, its
meaning, the rules that explain it, a fallback fix) and the rules' own ``log_signatures`` (the
error message SGLang prints for the failure a rule predicts), made signatures here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING

from packaging.version import Version

from specguard.launch.signatures import SIGNATURES, Signature
from specguard.models import Applicability, Edit

if TYPE_CHECKING:
    from specguard.engine import Outcome
    from specguard.rules.base import CheckContext, Rule
    from specguard.spec import LaunchSpec


@dataclass(frozen=True)
class Diagnosis:
    signature: Signature
    line: str
    rule: str | None
    edits: tuple[Edit, ...]
    fix_title: str | None
    fired: bool = False  # the rule fired on this launch: the strongest evidence, ranked first
    # The signature matched only a message Python or torch prints for many unrelated bugs (a
    # None's missing attribute, a torch.cat size mismatch): weak evidence, ranked after the rest.
    common: bool = False


# Messages Python and torch print for many bugs: a signature that matches only one of them says
# little on its own, so its cause ranks after a specific one (the launch may still confirm it). A
# None's missing attribute is common when the attribute is a tensor's or a dict's, not SGLang's own
# ('prepare_for_decode' names the object that was missing). A failed CUDA-graph capture only says
# that something inside the captured forward failed.
COMMON_MESSAGES = re.compile(
    r"'NoneType' object has no attribute '(?:shape|device|dtype|size|item|data|cpu|to|get)'"
    r"|'NoneType' object (?:is not subscriptable|is not iterable|cannot be interpreted)"
    r"|Sizes of tensors must match"
    r"|Capture (?:draft )?cuda graph failed"
    r"|too many values to unpack|not enough values to unpack",
    re.IGNORECASE,
)


def is_common(signature: Signature, line: str) -> bool:
    """Whether ``signature`` matched ``line`` on a common message alone."""
    found = signature.pattern.search(line)
    return found is not None and COMMON_MESSAGES.search(found.group(0)) is not None


@cache
def all_signatures() -> tuple[Signature, ...]:
    """The table's signatures, most specific first, then the rules' own."""
    from specguard.rules import ALL_RULES

    return (*SIGNATURES, *(rule_signature(rule, pattern) for rule in ALL_RULES for pattern in rule.log_signatures))


def rule_signature(rule: Rule, pattern: str) -> Signature:
    source = next((s for s in rule.sources if s.startswith("https://")), rule.sources[0] if rule.sources else "")
    return Signature(
        key=rule.name, pattern=re.compile(pattern, re.IGNORECASE), meaning=rule.summary, rules=(rule.code,),
        advice=rule.docs.fix, source=source,
    )


class Prefilter:
    """Whether a line may match any signature, cheaply: a log of hundreds of MB is millions of
    lines, and one regex of forty alternatives costs about 40 us a line (two minutes for 300 MB).
    Each signature must contain a literal word (one per alternative) its line holds; a line with
    none of the words is skipped, and only a signature with no such word is searched everywhere."""

    def __init__(self, signatures: Sequence[Signature]) -> None:
        words: list[str] = []
        unfiltered: list[str] = []
        for signature in signatures:
            found = literal_words(signature.pattern.pattern)
            if found is None:
                unfiltered.append(f"(?:{signature.pattern.pattern})")
            else:
                words += found
        self.words = tuple(dict.fromkeys(words))
        self.unfiltered = re.compile("|".join(unfiltered), re.IGNORECASE) if unfiltered else None
        self.pattern = re.compile("|".join(f"(?:{s.pattern.pattern})" for s in signatures), re.IGNORECASE)

    def search(self, line: str) -> bool:
        lowered = line.lower()
        if any(word in lowered for word in self.words):
            return self.pattern.search(line) is not None
        return self.unfiltered is not None and self.unfiltered.search(line) is not None


_MIN_WORD = 4


def literal_words(pattern: str) -> list[str] | None:
    """One literal run (lowercased) from each top-level alternative of ``pattern`` that every
    match of that alternative contains; None when some alternative has no run of 4 characters."""
    import re._parser as parser  # type: ignore[import-not-found]  # the stdlib's own regex parser
    from re._constants import BRANCH, LITERAL, SUBPATTERN  # type: ignore[import-not-found]

    items = list(parser.parse(pattern))
    while len(items) == 1 and items[0][0] is SUBPATTERN:
        items = list(items[0][1][-1])
    branches = items[0][1][1] if len(items) == 1 and items[0][0] is BRANCH else [items]
    words = []
    for branch in branches:
        best, run = "", ""
        for op, value in branch:
            run = run + chr(value) if op is LITERAL else ""
            best = max(best, run, key=len)
        if len(best) < _MIN_WORD:
            return None
        words.append(best.lower())
    return words


@cache
def any_signature() -> Prefilter:
    """The first pass over a long log: may any signature match this line?"""
    return Prefilter(all_signatures())


def match(lines: Iterable[str]) -> list[tuple[Signature, str]]:
    """Every signature found in ``lines``, in table order, each with the first line it matched.
    A rule's own signature adds nothing where a table signature naming that rule explains the
    same line, or where another of the rule's own signatures matched (a traceback's frame and
    its error line are one cause)."""
    lines = list(lines)
    found: list[tuple[Signature, str]] = []
    explained: set[tuple[str, str]] = set()
    own: set[str] = set()
    for index, signature in enumerate(all_signatures()):
        line = next((line for line in lines if signature.pattern.search(line)), None)
        if line is None:
            continue
        if index >= len(SIGNATURES):
            if any((code, line) in explained or code in own for code in signature.rules):
                continue
            own.update(signature.rules)
        explained.update((code, line) for code in signature.rules)
        found.append((signature, line.rstrip()))
    return found


def diagnose(
    lines: Iterable[str], fired: Sequence[object] = (), version: Version | None = None,
    releases: Sequence[Version] | None = None,
) -> list[Diagnosis]:
    """Signatures in the log, each with the rule that explains it here and the fix to try; the
    ones whose rule fired on the launch first, then those on a specific message, then those whose
    rule's window holds a release the launch may have run, each group in table order.

    ``fired``: the launch's findings (``Finding``). A signature's rule that fired with a fix
    gives that fix; else the signature's fallback edits are offered. ``version``: the SGLang
    release launched, whose name of the decode CUDA-graph flag the advice and edits use.
    ``releases``: the releases the launch may have run (a range inferred from its flags), when
    not one named ``version``; empty: unknown, no window ranks.
    """
    by_code = {getattr(f, "code", None): f for f in fired}
    candidates = tuple(releases) if releases is not None else (version,) if version is not None else ()
    diagnoses = []
    for found, line in match(lines):
        signature = _in_release(found, version)
        rule = next((code for code in signature.rules if code in by_code), None)
        finding = by_code.get(rule) if rule else None
        common = is_common(signature, line)
        if finding is not None and finding.fix is not None:  # type: ignore[attr-defined]
            diagnoses.append(Diagnosis(
                signature, line, rule, tuple(finding.fix.edits), finding.fix.title, fired=True, common=common,  # type: ignore[attr-defined]
            ))
        else:
            title = ", ".join(show_edit(e) for e in signature.fallback) or None
            diagnoses.append(Diagnosis(
                signature, line, rule or (signature.rules[0] if signature.rules else None), signature.fallback, title,
                fired=rule is not None, common=common,
            ))
    # A rule that fired is the strongest evidence; then a specific message over a common one;
    # then a rule whose release window holds a release the launch may have run (a bug fixed
    # before it, or not yet in it, explains this crash less well).
    return sorted(diagnoses, key=lambda d: (not d.fired, d.common, not _in_window(d.rule, candidates)))


def _in_window(code: str | None, releases: Sequence[Version]) -> bool:
    from specguard.rules import RULES_BY_CODE
    from specguard.rules.base import version_in_range

    rule = RULES_BY_CODE.get(code or "")
    if rule is None or not releases or not rule.sglang_versions:
        return True
    return any(version_in_range(rule.sglang_versions, release) for release in releases)


def retry_spec(spec: LaunchSpec, edits: Sequence[Edit], check_ctx: CheckContext, outcome: Outcome) -> tuple[LaunchSpec, str | None]:
    """The launch with a crash's fix, checked like the first one: the fix is applied, then the
    safe fixes (so a fallback written as --cuda-graph-max-bs becomes the name this SGLang release
    accepts, VB003); a fix that would bring a new error is refused (the reason is returned)."""
    from specguard import engine
    from specguard.rules import ALL_RULES

    for edit in edits:
        spec = spec.apply(edit)
    retried = engine.check(ALL_RULES, check_ctx.with_spec(spec), fix_level=Applicability.SAFE)
    before = {f.code for f in outcome.errors}
    new_errors = [f for f in retried.errors if f.code not in before]
    if new_errors:
        return spec, "; ".join(f"{f.code}: {f.message}" for f in new_errors)
    return retried.corrected, None


def fixed_in(rule: Rule) -> str | None:
    """The first release without the rule's failure: the upper bound of its release window."""
    if not rule.sglang_versions:
        return None
    for clause in rule.sglang_versions.split(","):
        clause = clause.strip()
        if clause.startswith("<="):
            from specguard.versions import history

            releases = history().releases
            index = history().index_of(clause[2:].strip())
            return releases[index + 1] if index is not None and index + 1 < len(releases) else None
        if clause.startswith("<"):
            return clause[1:].strip()
    return None


# The table writes the decode CUDA-graph cap by its first name; a release from 0.5.14 on calls it
# --cuda-graph-max-bs-decode, and from 0.5.20 on refuses the old name (resolution/cuda_graph.py).
_GRAPH_MAX_BS = re.compile(r"--cuda-graph-max-bs(?![\w-])")


def _in_release(signature: Signature, version: Version | None) -> Signature:
    if version is None:
        return signature
    from specguard.resolution.cuda_graph import graph_max_flag

    name = graph_max_flag(version)
    fallback = tuple(Edit(name=name, value=e.value) if _GRAPH_MAX_BS.fullmatch(e.name) else e for e in signature.fallback)
    return replace(signature, advice=_GRAPH_MAX_BS.sub(name, signature.advice), fallback=fallback)


def show_edit(edit: Edit) -> str:
    if edit.value is True:
        return edit.name
    if edit.value is None or edit.value is False:
        return f"drop {edit.name}"
    return f"{edit.name} {edit.value}"

