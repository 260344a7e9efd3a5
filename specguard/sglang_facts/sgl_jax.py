"""Which sgl-jax build a launch runs, and the changes of sgl-jax that specguard's rules depend on.

sgl-jax (github.com/sgl-project/sglang-jax) publishes few versions: PyPI holds only ``sglang-jax``
0.0.1 and 0.0.1.post1 (both built 2025-08-25, before speculative decoding arrived), and the
repository's tags are release candidates. Users run a checkout, so a build is known by its date:
a tag, a PyPI version or a commit that specguard has dated (below), or the commit date itself
(``git -C sglang-jax log -1 --format=%cs``). Every date was read from the repository's history
(``git log --format='%h %cs %s'``) or from the wheel's file dates.
"""

from __future__ import annotations

from datetime import date

from specguard.records import Record
from specguard.refs import same_commit


class JaxChange(Record, kw_only=False):
    """The first sgl-jax build (by commit date) with a behaviour, and the commit it arrived in."""

    first: date
    ref: str  # "sglang-jax #1293 (b735f16e)"
    source: str  # the file that shows it

    def present_in(self, built: date) -> bool:
        return built >= self.first


SPECULATIVE_DECODING = JaxChange(
    date(2025, 11, 19), "sglang-jax #378 (f671c326)",
    "python/sgl_jax/srt/server_args.py: --speculative-algorithm choices EAGLE, EAGLE3, NEXTN, STANDALONE",
)
NEXTN_RUNS = JaxChange(
    date(2026, 5, 28), "sglang-jax #1192 (10fe9e8b)",
    "python/sgl_jax/srt/speculative/spec_info.py:85-95: SpeculativeAlgorithm.from_string maps NEXTN; from #378 "
    "(f671c326 spec_info.py:30-39) to 10fe9e8b^ it had no NEXTN key, though --speculative-algorithm listed NEXTN",
)
OVERLAP_RELAXED = JaxChange(
    date(2026, 6, 24), "sglang-jax #1293 (b735f16e)",
    "python/sgl_jax/srt/server_args.py: before it, any --speculative-algorithm without "
    "--disable-overlap-schedule raised 'Speculative decoding does not support overlap scheduler' (b735f16e^ :1513-1517)",
)
EAGLE3_OVERLAP = JaxChange(
    date(2026, 8, 21), "sglang-jax #1534 (0348ee13)",
    "python/sgl_jax/srt/server_args.py:1873-1878: EAGLE3 on fa with topk 1 and draft tokens = steps + 1 joins "
    "the overlap scheduler's list (0348ee13^ :1867-1880 allowed only NEXTN chains and DFLASH)",
)
PATHWAYS_PD = JaxChange(
    date(2026, 7, 6), "sglang-jax #1428 (94ce2692)",
    "python/sgl_jax/srt/disaggregation/pathways_scheduler.py:67 (cddbf6f1 :98): --pd-disaggregation arrives, and "
    "PathwaysPDSchedulerMixin._pd_init_workers asserts no speculative algorithm",
)
RECURRENT_EXTRA_BUFFER = JaxChange(
    date(2026, 7, 9), "sglang-jax #1408 (8340cd76)",
    "python/sgl_jax/srt/server_args.py (cddbf6f1 :447-452): --enable-recurrent-extra-buffer arrives, and "
    "ServerArgs.__post_init__ raises for it with any --speculative-algorithm",
)
DFLASH = JaxChange(
    date(2026, 7, 28), "sglang-jax #1467 (4406938a)",
    "python/sgl_jax/srt/server_args.py:1433: DFLASH joins the --speculative-algorithm choices",
)


class JaxBuild(Record, kw_only=False):
    names: tuple[str, ...]  # how users write it: a PyPI version, a tag, a commit
    built: date
    source: str


# Builds specguard can date by name. Commits are matched by prefix (7+ hex digits).
KNOWN_BUILDS: tuple[JaxBuild, ...] = (
    JaxBuild(("0.0.1",), date(2025, 8, 25), "PyPI sglang-jax 0.0.1 (wheel files dated 2025-08-25)"),
    JaxBuild(("0.0.1.post1",), date(2025, 8, 25), "PyPI sglang-jax 0.0.1.post1 (wheel files dated 2025-08-25)"),
    JaxBuild(("f671c326",), SPECULATIVE_DECODING.first, "commit f671c326 (#378)"),
    JaxBuild(("v0.0.3rc0", "0.0.3rc0", "v0.0.3rc1", "0.0.3rc1"), date(2026, 5, 27), "tag of 2026-05-27"),
    # Tagged on 2026-05-29 on a release branch whose code is main's at 889b3ceb (2026-05-27, `git merge-base`):
    # dated by that code, which lacks main's changes of 2026-05-28 (#1192 among them).
    JaxBuild(("v0.0.3rc97", "0.0.3rc97", "v0.0.3rc98", "0.0.3rc98"), date(2026, 5, 27),
             "tag of 2026-05-29 on a release branch from main's 889b3ceb (2026-05-27)"),
    JaxBuild(("b735f16e",), OVERLAP_RELAXED.first, "commit b735f16e (#1293)"),
    JaxBuild(("94ce2692",), PATHWAYS_PD.first, "commit 94ce2692 (#1428)"),
    JaxBuild(("8340cd76",), RECURRENT_EXTRA_BUFFER.first, "commit 8340cd76 (#1408)"),
    JaxBuild(("4406938a",), DFLASH.first, "commit 4406938a (#1467)"),
    JaxBuild(("0348ee13",), EAGLE3_OVERLAP.first, "commit 0348ee13 (#1534)"),
    JaxBuild(("cddbf6f1",), date(2026, 8, 21), "commit cddbf6f1, the HEAD specguard's sgl-jax rules were read at"),
)
# With no build named, the rules speak of the HEAD they were read at.
RULES_READ_AT = KNOWN_BUILDS[-1]


def dated_build(text: str) -> JaxBuild | None:
    """The build ``text`` names: an ISO date, or a known PyPI version, tag or commit; None if unknown."""
    text = text.strip()
    try:
        return JaxBuild((text,), date.fromisoformat(text), "build date as given")
    except ValueError:
        pass
    for build in KNOWN_BUILDS:
        for name in build.names:
            if text.lower() == name.lower() or same_commit(text, name):
                return build
    return None


def server_flags() -> frozenset[str]:
    """Every option string sgl-jax's launcher parses at the HEAD the rules were read at
    (specguard/data/sgl-jax-flags.json, with its source)."""
    import json
    from pathlib import Path

    path = Path(__file__).parent.parent / "data" / "sgl-jax-flags.json"
    return frozenset(json.loads(path.read_text(encoding="utf-8"))["flags"])
