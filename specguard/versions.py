"""Every SGLang release's flag surface, and where the version a launch is checked against comes from.

The data (``specguard/data/sglang-history.json``) is written by ``scripts/extract_sglang_flags.py``
from the released wheels themselves: for each flag, ``SGLANG_*`` env var and model architecture,
the spans of releases (indexes into its ``releases`` list) that have it; renames as pairs. It is
read lazily, the first time a question needs it.

Pure functions over that data; the only I/O is reading the shipped file.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from functools import cache, cached_property
from pathlib import Path

from packaging.version import InvalidVersion, Version

from specguard.records import Record
from specguard.refs import is_commit_prefix, same_commit

HISTORY_FILE = Path(__file__).with_name("data") / "sglang-history.json"

# lmsysorg/sglang:v0.5.3, :v0.5.3-cu129, :v0.5.2rc2-cu126, :0.4.6.post1 (Docker Hub tags of SGLang's
# image), and slimerl/sglang:v0.5.12.post1-cu129 (slime's patched build of that release).
_SGLANG_IMAGE_TAG = re.compile(r"^(?:docker\.io/)?(?:lmsysorg|slimerl)/sglang:v?(\d+\.\d+\.\d+(?:\.\d+)?(?:rc\d+|\.post\d+)?)(?:[-_].*)?$")


class SlimePin(Record, kw_only=False):
    image: str  # the FROM image of slime's docker/Dockerfile at that release or commit
    sglang: str  # the release checked for it
    why: str  # how the release follows from the image


# The SGLang each slime commit and release ran (``specguard/data/slime-sglang-pins.json``, written by
# ``scripts/extract_slime_pins.py`` from slime's git history: the FROM image of docker/Dockerfile
# at every commit and tag). A nightly image is checked as the last release published before its
# date; ``latest`` and ``dev`` name no release.
SLIME_PINS_FILE = HISTORY_FILE.with_name("slime-sglang-pins.json")


@cache
def _slime_pins() -> dict:
    return json.loads(SLIME_PINS_FILE.read_text(encoding="utf-8"))


def slime_releases() -> tuple[str, ...]:
    """The slime releases (tags) whose image names an SGLang release."""
    data = _slime_pins()
    return tuple(tag for tag, commit in data["tags"].items() if data["pins"][data["commits"][commit]]["sglang"])


def slime_history_source() -> str:
    return str(_slime_pins()["source"])


def slime_pin(ref: str) -> SlimePin | None:
    """The SGLang a slime release (``v0.3.1`` or ``0.3.1``) or commit (7 or more hex digits) ran;
    None when specguard does not know it, or its image names no release (``latest``)."""
    data = _slime_pins()
    ref = ref.strip()
    commit = data["tags"].get(ref.removeprefix("v"))
    if commit is None and is_commit_prefix(ref):
        found = [c for c in data["commits"] if same_commit(ref, c)]
        # An abbreviation several commits share is known only if they all ran the same image.
        commit = found[0] if len({data["commits"][c] for c in found}) == 1 else None
    if commit is None:
        return None
    pin = data["pins"][data["commits"][commit]]
    if not pin["sglang"]:
        return None
    return SlimePin(pin["image"], pin["sglang"], f"docker/Dockerfile at {commit}: {pin['why']}")


def version_from_image(image: str | None) -> str | None:
    """The SGLang release an ``lmsysorg/sglang`` (or slime's ``slimerl/sglang``) image tag names
    (``latest``, ``dev``, nightlies name none)."""
    if not image:
        return None
    match = _SGLANG_IMAGE_TAG.match(image.strip())
    return match.group(1) if match else None


# A requirements.txt / pip freeze pin: sglang==0.5.5, sglang[all]==0.4.6.post1 (extras, spaces,
# a trailing marker or comment allowed).
_SGLANG_PIN = re.compile(r"^\s*sglang(?:\[[^\]]*\])?\s*===?\s*v?([0-9][0-9A-Za-z.]*)\s*(?:[;#].*)?$", re.MULTILINE | re.IGNORECASE)


def version_from_requirements(text: str) -> str | None:
    """The SGLang release a requirements file or ``pip freeze`` output pins (``sglang==X``)."""
    found = _SGLANG_PIN.findall(text)
    return found[-1] if found else None


Spans = tuple[tuple[int, int], ...]


class History(Record, kw_only=False, dict=True):  # dict: room for the cached_properties
    """The shipped flag history: which releases accept each flag and read each env var."""

    releases: tuple[str, ...]
    flags: dict[str, tuple[tuple[int, int, int], ...]]  # flag -> (first, last, info index)
    infos: tuple[dict, ...]  # per info: switch, choices, group (the flag's spellings), deprecated
    renames: tuple[tuple[str, str], ...]
    env: dict[str, Spans]
    architectures: dict[str, Spans]

    @property
    def newest(self) -> str:
        return self.releases[-1]

    @cached_property
    def _versions(self) -> tuple[Version, ...]:
        return tuple(Version(r) for r in self.releases)

    def index_of(self, version: str | Version) -> int | None:
        """The release whose flags ``version`` has: itself, else the newest release before it
        (an unlisted .postN or rc); a version newer than all is the newest. None before the first."""
        try:
            wanted = version if isinstance(version, Version) else Version(str(version))
        except InvalidVersion:
            return None
        found = None
        for index, known in enumerate(self._versions):
            if known <= wanted:
                found = index
        return found

    def is_newer_than_known(self, version: str | Version) -> bool:
        return Version(str(version)) > self._versions[-1]

    # ------------------------------------------------------------------ flags

    def flag_releases(self, flag: str) -> frozenset[int]:
        return frozenset(i for first, last, _ in self.flags.get(flag, ()) for i in range(first, last + 1))

    def flag_info(self, flag: str, index: int) -> dict | None:
        return next((self.infos[info] for first, last, info in self.flags.get(flag, ()) if first <= index <= last), None)

    @cached_property
    def _sorted_flags(self) -> tuple[str, ...]:
        return tuple(sorted(self.flags))

    def accepted_by(self, flag: str) -> frozenset[int]:
        """The releases whose parser takes ``flag``: exactly, or as argparse's unique abbreviation
        of one argument (SGLang's parser keeps ``allow_abbrev``; catalogue P02)."""
        exact = self.flag_releases(flag)
        names = self._sorted_flags
        start = bisect_left(names, flag)
        longer = []
        for name in names[start:]:
            if not name.startswith(flag):
                break
            if name != flag:
                longer.append(name)
        if not longer:
            return exact
        abbreviated = set()
        for index in range(len(self.releases)):
            if index in exact:
                continue
            groups = {tuple(info["group"]) for name in longer if (info := self.flag_info(name, index)) is not None}
            if len(groups) == 1:
                abbreviated.add(index)
        return exact | abbreviated

    def takes_value(self, flag: str, value: str) -> frozenset[int]:
        """The releases whose parser takes ``value`` for ``flag``: it has the flag, and lists no
        choices for it or lists ``value`` among them."""
        return frozenset(
            index for index in self.flag_releases(flag)
            if not (choices := (self.flag_info(flag, index) or {}).get("choices")) or value in map(str, choices)
        )

    def between(self, first: str, last: str) -> tuple[str, ...]:
        """The releases from ``first`` to ``last``, both included (none where either is unknown)."""
        if first not in self.releases or last not in self.releases:
            return ()
        return self.releases[self.releases.index(first) : self.releases.index(last) + 1]

    def lists_value(self, flag: str, value: str) -> bool:
        """Whether some release lists ``value`` among ``flag``'s choices."""
        return any(value in map(str, info.get("choices") or ()) for index in self.flag_releases(flag) if (info := self.flag_info(flag, index)))

    def renamed(self, flag: str) -> tuple[str, ...]:
        """The other spellings of ``flag`` across releases (old -> new and new -> old)."""
        return tuple(new if old == flag else old for old, new in self.renames if flag in (old, new))

    # ------------------------------------------------------------------ env vars, architectures

    def env_releases(self, name: str) -> frozenset[int]:
        return frozenset(i for first, last in self.env.get(name, ()) for i in range(first, last + 1))

    def architecture_releases(self, name: str) -> frozenset[int]:
        return frozenset(i for first, last in self.architectures.get(name, ()) for i in range(first, last + 1))

    # ------------------------------------------------------------------ words

    def describe(self, indexes: Iterable[int]) -> str:
        """Release indexes in words: 'up to 0.5.19', 'from 0.5.14', '0.5.11 to 0.5.19', joined."""
        parts = []
        for first, last in _spans(indexes):
            if first == 0 and last == len(self.releases) - 1:
                parts.append(f"every release from {self.releases[0]} to {self.newest}")
            elif first == 0:
                parts.append(f"up to {self.releases[last]}")
            elif last == len(self.releases) - 1:
                parts.append(f"from {self.releases[first]}")
            elif first == last:
                parts.append(f"only in {self.releases[first]}")
            else:
                parts.append(f"{self.releases[first]} to {self.releases[last]}")
        return ", ".join(parts) if parts else "no release"


def _spans(indexes: Iterable[int]) -> list[tuple[int, int]]:
    result: list[list[int]] = []
    for index in sorted(set(indexes)):
        if result and result[-1][1] == index - 1:
            result[-1][1] = index
        else:
            result.append([index, index])
    return [(first, last) for first, last in result]


@cache
def flags_at(index: int) -> dict[str, dict]:
    """Release ``index``'s parser: each option string and its description (``group``: the
    spellings of the same argument)."""
    data = history()
    return {name: info for name in data.flags if (info := data.flag_info(name, index)) is not None}


def prefix_arguments(prefix: str, index: int) -> set[tuple[str, ...]]:
    """argparse's allow_abbrev (catalogue P02) in release ``index``: the arguments, each as its
    group of option strings, that ``prefix`` could stand for (one: a valid abbreviation)."""
    return {tuple(info["group"]) for name, info in flags_at(index).items() if name.startswith(prefix)}


@cache
def history() -> History:
    data = json.loads(HISTORY_FILE.read_text(encoding="utf-8"))
    return History(
        releases=tuple(data["releases"]),
        flags={name: tuple(tuple(row) for row in rows) for name, rows in data["flags"].items()},
        infos=tuple(data["infos"]),
        renames=tuple(tuple(pair) for pair in data["renames"]),
        env={name: tuple(tuple(span) for span in spans) for name, spans in data["env"].items()},
        architectures={name: tuple(tuple(span) for span in spans) for name, spans in data["architectures"].items()},
    )


# ---------------------------------------------------------------------------------------------
# Version inference from the launch itself
# ---------------------------------------------------------------------------------------------


class Inferred(Record, kw_only=False):
    """The releases whose parser accepts every flag and reads every env var of a launch."""

    version: str  # the release to check against
    candidates: tuple[str, ...]  # every release that accepts the launch (empty: none does)
    conflict: str | None = None  # when none does: the flags from different eras, in words

    @property
    def source(self) -> str:
        return "inferred from flags" if self.candidates and self.version != history().newest else "default"

    @property
    def note(self) -> str | None:
        if self.conflict:
            return self.conflict
        if self.version == history().newest:
            return None
        return f"accepted by {history().describe(history().releases.index(v) for v in self.candidates)}; checked as {self.version}"


def infer_version(flags: Sequence[str], env_names: Sequence[str], values: Sequence[tuple[str, str]] = ()) -> Inferred:
    """The newest release that accepts every flag (SGLang spelling), takes every value among its
    flag's choices (``values``: flag and value) and reads every env var.

    Names no release knows (a typo, another package's env var) and values no release takes do
    not narrow anything: they are the unknown-flag and refused-value rules' business, not
    evidence of an era."""
    data = history()
    everything = frozenset(range(len(data.releases)))
    candidates = set(everything)
    evidence: list[tuple[str, frozenset[int]]] = []
    for flag in dict.fromkeys(flags):
        accepted = data.accepted_by(flag)
        if accepted and accepted != everything:
            evidence.append((flag, accepted))
    for flag, value in dict.fromkeys(values):
        taken = data.takes_value(flag, value)
        # A value no release lists (a typo) dates nothing, though releases listing no choices take it.
        if data.lists_value(flag, value) and taken != data.flag_releases(flag):
            evidence.append((f"{flag} {value}", taken))
    for name in dict.fromkeys(env_names):
        read = data.env_releases(name)
        if read and read != everything:
            evidence.append((name, read))
    for _, accepted in evidence:
        candidates &= accepted
    if candidates:
        ordered = tuple(data.releases[i] for i in sorted(candidates))
        return Inferred(version=ordered[-1], candidates=ordered)
    # Name the flags that never coexist (pairs no release accepts together), not every narrowing one.
    apart = [entry for entry in evidence if any(not (entry[1] & other[1]) for other in evidence)] or evidence
    described = "; ".join(f"{name} ({data.describe(accepted)})" for name, accepted in apart)
    return Inferred(
        version=data.newest,
        candidates=(),
        conflict=f"no single SGLang release accepts every flag of this launch: {described}; checked as {data.newest}",
    )
