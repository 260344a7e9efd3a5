"""VB005 flag-renamed-for-version."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import (
    CheckContext,
    Example,
    Rule,
    RuleDocs,
    fix_of,
    set_flags,
)
from specguard.rules.examples import QWEN3_8B_DFLASH
from specguard.rules.version_bugs._renames import (
    DRAFT_WINDOW_RENAME,
    knows,
)
from specguard.sglang_facts.changes import ATTN_DP_SIZE_FLAG


def _window(ctx: CheckContext) -> Iterator[Finding]:
    item = ctx.spec.item("--speculative-draft-window-size")
    if item is None:
        return
    rename, version = DRAFT_WINDOW_RENAME, ctx.version
    written = rename.old if item.written == rename.old else rename.new
    other = rename.new if written == rename.old else rename.old
    if knows(rename, written, version):
        if written == rename.old and rename.old_deprecated_since and version >= rename.old_deprecated_since:
            yield RULE.finding(
                f"{ctx.flag(written)} is a deprecated alias of {ctx.flag(other)} in SGLang {ctx.env.sglang_version} "
                f"and is gone from {rename.old_removed_since}: write {ctx.flag(other)}",
                flags=(rename.new,),
                severity=Severity.INFO,
            )
        return
    if knows(rename, other, version):
        # Both spellings are one modeled flag, and an Edit cannot respell it in place: no fix.
        fix = None
        step = f"write {ctx.flag(other)}"
    else:
        fix = set_flags("drop the draft window (this SGLang has none)", Applicability.UNSAFE, speculative_draft_window_size=None)
        step = "drop it or upgrade to 0.5.12+ (0.5.11 for DFLASH only)"
    yield RULE.finding(
        f"{ctx.flag(written)} does not exist in SGLang {ctx.env.sglang_version}: argparse exits with status 2 "
        f"before anything loads; {step}",
        flags=(rename.new,),
        fix=fix,
    )


def _attn_dp(ctx: CheckContext) -> Iterator[Finding]:
    attn_dp = ctx.spec.get("attn_dp_size")
    if attn_dp is not None and ctx.version < ATTN_DP_SIZE_FLAG.release:
        fix = None
        if not ctx.spec.has("--dp-size") and not ctx.spec.get("enable_dp_attention"):
            fix = fix_of(
                f"write --dp-size {attn_dp} --enable-dp-attention",
                Applicability.SAFE,
                Edit(name="--attn-dp-size", value=None),
                Edit(name="--dp-size", value=attn_dp),
                Edit(name="--enable-dp-attention", value=True),
            )
        yield RULE.finding(
            f"{ctx.flag('--attn-dp-size')} is new in SGLang 0.5.22 and {ctx.env.sglang_version} exits with "
            f"'unrecognized arguments': write {ctx.flag('--dp-size')} {attn_dp} {ctx.flag('--enable-dp-attention')}",
            flags=("--attn-dp-size",),
            fix=fix,
        )
    if ctx.spec.get("enable_dp_attention") and ctx.version >= ATTN_DP_SIZE_FLAG.release and attn_dp is None:
        dp = ctx.spec.get("dp_size") or 1
        yield RULE.finding(
            f"{ctx.flag('--enable-dp-attention')} is deprecated since SGLang 0.5.22 (to be removed after "
            f"2026-12-31): {ctx.flag('--dp-size')} {dp} {ctx.flag('--enable-dp-attention')} means "
            f"{ctx.flag('--attn-dp-size')} {dp}",
            flags=("--enable-dp-attention", "--dp-size"),
            fix=fix_of(
                f"write --attn-dp-size {dp}",
                Applicability.SAFE,
                Edit(name="--enable-dp-attention", value=None),
                Edit(name="--dp-size", value=None),
                Edit(name="--attn-dp-size", value=dp),
            ),
            severity=Severity.INFO,
        )


def check(ctx: CheckContext) -> Iterator[Finding]:
    yield from _window(ctx)
    yield from _attn_dp(ctx)


RULE = Rule(
    check=check,
    code="VB005",
    category=Category.START,
    name="flag-renamed-for-version",
    summary="A speculative or DP-attention flag spelled for another SGLang version",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="`--speculative-dflash-draft-window-size` vs `--speculative-draft-window-size`, and "
        "`--attn-dp-size` vs `--dp-size N --enable-dp-attention`, by SGLang version.",
        why="The DFLASH draft window flag appeared in 0.5.11 as `--speculative-dflash-draft-window-size` "
        "(0.5.11 `server_args.py:5418`), was generalised to `--speculative-draft-window-size` in 0.5.12 "
        "(`server_args.py:5873-5874`), deprecated from 0.5.14 and removed in 0.5.20. `--attn-dp-size` "
        "is a flag from 0.5.22 (`arg_groups/fields/parallel.py:81`); from then `--enable-dp-attention` "
        "is a deprecated spelling that SGLang turns into `attn_dp_size = dp_size`, `dp_size = 1` "
        "(catalogue P03; `server_args.py:416-424`). An unknown flag ends the launch with status 2.",
        fix="Write the spelling the target version knows (the same setting).",
        fix_safety="Safe when renaming; dropping the window on versions without it is unsafe.",
    ),
    bad=Example(
        argv=(*QWEN3_8B_DFLASH, "--speculative-dflash-draft-window-size", "2048"),
        sglang_version="0.5.23",
    ),
    good=Example(
        argv=(*QWEN3_8B_DFLASH, "--speculative-draft-window-size", "2048"),
        sglang_version="0.5.23",
    ),
    sources=(
        "sglang 0.5.11: python/sglang/srt/server_args.py:5418",
        "sglang 0.5.12: python/sglang/srt/server_args.py:5873-5874",
        "sglang 0.5.14: python/sglang/srt/server_args.py:6341-6348",
        "sglang 0.5.22: python/sglang/srt/arg_groups/fields/parallel.py:81; server_args.py:416-424",
        "sglang 0.5.21: python/sglang/srt/arg_groups/fields/parallel.py:285 (attn_dp_size derived, no flag)",
        "catalogue: shared/design/sglang-spec-checks.md P03",
    ),
    dialects=SGLANG_DIALECTS,
)
