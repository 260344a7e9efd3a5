"""Which rules a check runs, and which the user named: ruff's select / ignore / extend-select.

A selector is a rule code (``MM003``), a prefix of codes (``MM``, ``FX08``), a category
(``perf``) or ``ALL``. As in ruff (https://docs.astral.sh/ruff/settings/#lint_select), the
selectors come in layers, the config file's and then the command line's: a layer's ``select``
replaces the set the layers before it left, ``extend-select`` adds to it, ``ignore`` removes
from it; within a layer the most specific selector that names a rule decides for it (a code
over a longer prefix over a shorter one over a category over ALL), and ``ignore`` wins a tie.
Per-file ignores remove their rules last, whatever the layers selected.

Pure: the rules and the selectors come in, a ``Selection`` comes out.
"""

from __future__ import annotations

from collections.abc import Sequence

from specguard.errors import InputError
from specguard.models import Category
from specguard.records import Record
from specguard.rules.base import Rule

ALL = "ALL"


class Layer(Record):
    """The selectors one source gives: the config file, or the command line. ``origin`` prefixes
    an option's name in an error: ``--`` (``--select``), ``specguard.toml: `` (``specguard.toml: select``)."""

    origin: str = "--"
    select: tuple[str, ...] | None = None  # None: this layer keeps what the layers before it chose
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()


class Selection(Record):
    """The rules a check runs (``enabled``) and those a selector named (``named``): a PERF or
    HYGIENE rule speaks at its own severity only when named."""

    enabled: frozenset[str]
    named: frozenset[str] = frozenset()

    def includes(self, rule: Rule) -> bool:
        return rule.code in self.enabled

    def explicitly_selects(self, rule: Rule) -> bool:
        return rule.code in self.named

    @classmethod
    def from_options(
        cls,
        rules: Sequence[Rule],
        select: Sequence[str] | None = None,
        ignore: Sequence[str] = (),
        extend_select: Sequence[str] = (),
        per_file_ignores: Sequence[str] = (),
    ) -> Selection:
        """One layer of selectors (the command line's alone)."""
        layer = Layer(select=tuple(select) if select is not None else None, ignore=tuple(ignore), extend_select=tuple(extend_select))
        return cls.from_layers(rules, (layer,), per_file_ignores)

    @classmethod
    def from_layers(cls, rules: Sequence[Rule], layers: Sequence[Layer], per_file_ignores: Sequence[str] = (), *, per_file_origin: str = "per-file-ignores") -> Selection:
        """The layers in order (the settings file's, then the command line's), then the per-file
        ignores that match the checked file; every selector is checked first, so a typo is named."""
        for layer in layers:
            for option, selectors in (("select", layer.select or ()), ("ignore", layer.ignore), ("extend-select", layer.extend_select)):
                for selector in selectors:
                    require_known(selector, rules, f"{layer.origin}{option}")
        for selector in per_file_ignores:
            require_known(selector, rules, per_file_origin)
        enabled = {rule.code for rule in rules}
        named: set[str] = set()
        for layer in layers:
            chosen = (*(layer.select or ()), *layer.extend_select)
            for rule in rules:
                picked = max((_specificity(s) for s in chosen if _names(s, rule)), default=-1)
                dropped = max((_specificity(s) for s in layer.ignore if _names(s, rule)), default=-1)
                if picked > dropped:
                    enabled.add(rule.code)
                    named.add(rule.code)
                elif dropped >= 0 or layer.select is not None:
                    enabled.discard(rule.code)
                    named.discard(rule.code)
        for rule in rules:
            if any(_names(s, rule) for s in per_file_ignores):
                enabled.discard(rule.code)
        return cls(enabled=frozenset(enabled), named=frozenset(named & enabled))


def _names(selector: str, rule: Rule) -> bool:
    if selector.upper() == ALL:
        return True
    if selector.lower() in _CATEGORIES:
        return rule.category.value == selector.lower()
    return rule.code.startswith(selector.upper())


def _specificity(selector: str) -> int:
    """ALL 0, a category 1, a prefix or code 1 + its length: the longer names fewer rules."""
    if selector.upper() == ALL:
        return 0
    if selector.lower() in _CATEGORIES:
        return 1
    return 1 + len(selector)


_CATEGORIES = frozenset(category.value for category in Category)


def require_known(selector: str, rules: Sequence[Rule], origin: str) -> None:
    """A selector that names no rule is a typo, never silently nothing."""
    if selector and (selector.upper() == ALL or selector.lower() in _CATEGORIES or any(rule.code.startswith(selector.upper()) for rule in rules)):
        return
    from specguard.spelling import closest

    families = {rule.code[:2] for rule in rules}
    close = closest(selector.upper(), [rule.code for rule in rules] + sorted(families)) or closest(selector.lower(), sorted(_CATEGORIES))
    hint = f"did you mean {close[0]}?" if close else f"give a rule code (MM003), a prefix ({', '.join(sorted(families)[:4])}, ...), a category ({', '.join(sorted(_CATEGORIES))}) or ALL"
    raise InputError(f"{origin}: no rule, prefix or category {selector!r}", hint=hint)
