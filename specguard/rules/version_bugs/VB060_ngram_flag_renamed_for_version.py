"""VB060 ngram-flag-renamed-for-version."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B
from specguard.rules.version_bugs._renames import (
    NGRAM_DEPTH_RENAME,
    NGRAM_WINDOW_FLAGS_REMOVED,
    knows,
)
from specguard.sglang_facts.changes import NGRAM_FLAGS


def _value(ctx: CheckContext, flag: str) -> str | bool:
    item = ctx.spec.item(flag)
    return item.values[0] if item is not None and len(item.values) == 1 else True


def check(ctx: CheckContext) -> Iterator[Finding]:
    version = ctx.version
    if version < NGRAM_FLAGS.release:
        return  # no NGRAM at all (PL004's version range)
    rename = NGRAM_DEPTH_RENAME
    for written, other in ((rename.old, rename.new), (rename.new, rename.old)):
        if not ctx.spec.has(written) or knows(rename, written, version):
            continue
        yield RULE.finding(
            f"{ctx.flag(written)} does not exist in SGLang {ctx.env.sglang_version} (0.5.10 renamed "
            f"{rename.old} to {rename.new}): argparse exits with status 2 before anything loads. "
            f"Write {ctx.flag(other)}",
            flags=(written,),
            fix=fix_of(f"write {other}", Applicability.SAFE, Edit(name=written, value=None), Edit(name=other, value=_value(ctx, written))),
        )
    for flag, removed in NGRAM_WINDOW_FLAGS_REMOVED.items():
        if not ctx.spec.has(flag) or version < removed:
            continue
        yield RULE.finding(
            f"{ctx.flag(flag)} was removed in SGLang {removed} (NGRAM now matches every suffix of the trie, up to "
            f"{ctx.flag(rename.new)}): SGLang {ctx.env.sglang_version} exits with 'unrecognized arguments'. Drop it",
            flags=(flag,),
            fix=fix_of(f"drop {flag}", Applicability.UNSAFE, Edit(name=flag, value=None)),
        )


RULE = Rule(
    check=check,
    code="VB060",
    category=Category.START,
    name="ngram-flag-renamed-for-version",
    summary="An NGRAM trie flag spelled for another SGLang release (branch length, match windows, max trie depth)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-ngram-branch-length`, `--speculative-ngram-min-match-window-size`, "
        "`--speculative-ngram-max-match-window-size` and `--speculative-ngram-max-trie-depth` against the release.",
        why="NGRAM's flags appeared in 0.5.3 with the trie depth spelled `--speculative-ngram-branch-length` and "
        "two match-window bounds (0.5.9 server_args.py:4026-4060). 0.5.10 renamed the depth to "
        "`--speculative-ngram-max-trie-depth` (server_args.py:4880; PR 21181) and removed both window flags, "
        "matching every suffix of the trie instead (PR 21225); 0.5.10 keeps no alias. Launch commands and "
        "benchmark scripts written for one side fail on the other with argparse's 'unrecognized arguments' "
        "(status 2) before anything loads.",
        fix="Respell the depth for the release; drop the window flags on 0.5.10+.",
        fix_safety="Respelling the depth is safe (same value, same meaning); dropping a window bound is unsafe: "
        "0.5.10+ matches all suffixes, which is not the window the launch asked for.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "NGRAM", "--speculative-ngram-branch-length", "12",
              "--speculative-ngram-max-match-window-size", "12"),
        sglang_version="0.5.12",
    ),
    good=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "NGRAM", "--speculative-ngram-branch-length", "12",
              "--speculative-ngram-max-match-window-size", "12"),
        sglang_version="0.5.9",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/21052",
        "https://github.com/sgl-project/sglang/pull/21181",
        "https://github.com/sgl-project/sglang/pull/21225",
        "sglang 0.5.3: python/sglang/srt/server_args.py (first --speculative-ngram-* flags)",
        "sglang 0.5.9: python/sglang/srt/server_args.py:4026-4060",
        "sglang 0.5.10: python/sglang/srt/server_args.py:4880",
    ),
    dialects=SGLANG_DIALECTS,
)
