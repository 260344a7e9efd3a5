"""Every SGLang version boundary specguard uses, one named change each.

A change is the first release that behaves the new way, and where that was read (a release file
and line, a PR). Rules, the resolution, memory and the runtime import these names; none of them
writes a ``Version("0.x")`` of its own, so one boundary is never written twice with two values.

    if ctx.version >= SPEC_V2_DEFAULT_ON.release: ...
    if SPEC_V2_DEFAULT_ON.present_in(ctx.version): ...
"""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.version import Version


@dataclass(frozen=True)
class Change:
    """The first SGLang release with a behaviour, and the source it was read from."""

    first_release: str
    source: str
    release: Version = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "release", Version(self.first_release))

    def present_in(self, version: Version) -> bool:
        return version >= self.release


# ---- corpus-features ----
# 0.5.13 ships only the SpecV2 EAGLE worker (speculative/ has eagle_worker_v2.py and no eagle_worker.py;
# 0.5.12 still has both), so turning the overlap scheduler off no longer brings back V1's verify.
EAGLE_V1_WORKER_REMOVED = Change("0.5.13", "speculative/ of 0.5.13: no eagle_worker.py (0.5.12 has it)")
