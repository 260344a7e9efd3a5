"""SGLang flags renamed between releases: which spelling each release accepts.

Each row was read in the wheels (the releases are named changes in ``sglang_facts.changes``) (``pip download --no-deps sglang==X``):

- ``--cuda-graph-max-bs`` / ``--cuda-graph-bs``: the only spellings up to 0.5.13 (0.5.13
  ``server_args.py:6507``, ``:6513``); deprecated aliases of ``--cuda-graph-max-bs-decode`` /
  ``--cuda-graph-bs-decode`` in 0.5.14-0.5.19 (0.5.14 ``server_args.py:6358-6373``; 0.5.19
  ``server_args.py:3928-3943``); gone from 0.5.20, where argparse's prefix matching makes them
  ambiguous with the ``-decode``/``-prefill`` pair (catalogue P01).
- ``--speculative-dflash-draft-window-size``: introduced in 0.5.11 (``server_args.py:5418``);
  from 0.5.12 a second spelling of ``--speculative-draft-window-size`` (``server_args.py:5873-5874``),
  deprecated from 0.5.14 (``server_args.py:6341-6348``), gone from 0.5.20.
- ``--attn-dp-size``: a flag from 0.5.22 (``arg_groups/fields/parallel.py:81``; in 0.5.21 it is
  derived, ``fields/parallel.py:285``); ``--enable-dp-attention`` is deprecated in its favour
  from 0.5.22 (``server_args.py:416-424``), catalogue P03.
"""

from __future__ import annotations

from packaging.version import Version

from specguard.records import Record
from specguard.sglang_facts.changes import (
    CUDA_GRAPH_DECODE_FLAGS,
    CUDA_GRAPH_OLD_FLAGS_REMOVED,
    DFLASH_DRAFT_WINDOW_DEPRECATED,
    DFLASH_DRAFT_WINDOW_FLAG,
    DFLASH_DRAFT_WINDOW_REMOVED,
    DRAFT_WINDOW_FLAG,
    NGRAM_FLAGS,
    NGRAM_MATCH_WINDOW_FLAGS_REMOVED,
    NGRAM_TRIE_DEPTH_FLAG,
)


class Rename(Record, kw_only=False):
    old: str
    new: str
    new_since: Version  # first release that knows ``new``
    old_deprecated_since: Version | None  # first release that warns about ``old``
    old_removed_since: Version | None  # first release that rejects ``old``
    old_since: Version | None = None  # first release that knows ``old`` (None: always)


CUDA_GRAPH_RENAMES = tuple(
    Rename(old, new, CUDA_GRAPH_DECODE_FLAGS.release, CUDA_GRAPH_DECODE_FLAGS.release, CUDA_GRAPH_OLD_FLAGS_REMOVED.release)
    for old, new in (("--cuda-graph-max-bs", "--cuda-graph-max-bs-decode"), ("--cuda-graph-bs", "--cuda-graph-bs-decode"))
)
DRAFT_WINDOW_RENAME = Rename(
    "--speculative-dflash-draft-window-size",
    "--speculative-draft-window-size",
    DRAFT_WINDOW_FLAG.release,
    DFLASH_DRAFT_WINDOW_DEPRECATED.release,
    DFLASH_DRAFT_WINDOW_REMOVED.release,
    old_since=DFLASH_DRAFT_WINDOW_FLAG.release,
)


def knows(rename: Rename, flag: str, version: Version) -> bool:
    if flag == rename.new:
        return version >= rename.new_since
    if rename.old_since is not None and version < rename.old_since:
        return False
    return rename.old_removed_since is None or version < rename.old_removed_since

# NGRAM's trie flags (read in the wheels): 0.5.3-0.5.9 spell the depth --speculative-ngram-branch-length
# and have --speculative-ngram-min/max-match-window-size (0.5.9 server_args.py:4026-4060); 0.5.10 renamed
# the depth to --speculative-ngram-max-trie-depth (server_args.py:4880, PR 21181) and removed both window
# flags, matching every suffix of the trie instead (PR 21225); neither old name is left in 0.5.10.
NGRAM_DEPTH_RENAME = Rename(
    "--speculative-ngram-branch-length",
    "--speculative-ngram-max-trie-depth",
    NGRAM_TRIE_DEPTH_FLAG.release,
    None,
    NGRAM_TRIE_DEPTH_FLAG.release,
    old_since=NGRAM_FLAGS.release,
)
NGRAM_WINDOW_FLAGS_REMOVED = {
    "--speculative-ngram-min-match-window-size": NGRAM_MATCH_WINDOW_FLAGS_REMOVED.release,
    "--speculative-ngram-max-match-window-size": NGRAM_MATCH_WINDOW_FLAGS_REMOVED.release,
}


# Spellings whose history VB003, VB005 and VB060 explain with their own rule: the generic
# unknown-flag (VB004) and other-releases (VB010) checks leave them to those.
SPELLINGS_WITH_OWN_RULES = frozenset(
    {r.old for r in CUDA_GRAPH_RENAMES} | {r.new for r in CUDA_GRAPH_RENAMES}
    | {DRAFT_WINDOW_RENAME.old, DRAFT_WINDOW_RENAME.new}
    | {NGRAM_DEPTH_RENAME.old, NGRAM_DEPTH_RENAME.new} | set(NGRAM_WINDOW_FLAGS_REMOVED)
)
