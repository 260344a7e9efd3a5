"""VB003 cuda-graph-flag-renamed."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE3_CHAIN
from specguard.rules.version_bugs._renames import CUDA_GRAPH_RENAMES, knows


def _value(values: tuple[str, ...]) -> str | tuple[str, ...]:
    return values[0] if len(values) == 1 else tuple(values)


def check(ctx: CheckContext) -> Iterator[Finding]:
    version = ctx.version
    for rename in CUDA_GRAPH_RENAMES:
        for written, other in ((rename.old, rename.new), (rename.new, rename.old)):
            item = ctx.spec.item(written)
            if item is None or ctx.spec.has(other):
                continue
            rename_fix = fix_of(
                f"write {other}", Applicability.SAFE, Edit(name=written, value=None), Edit(name=other, value=_value(item.values))
            )
            if knows(rename, written, version):
                if written == rename.old and rename.old_deprecated_since and version >= rename.old_deprecated_since:
                    yield RULE.finding(
                        f"{ctx.flag(written)} is a deprecated alias of {ctx.flag(other)} in SGLang {ctx.env.sglang_version} "
                        f"and is gone from {rename.old_removed_since}: write {ctx.flag(other)}",
                        flags=(written,),
                        fix=rename_fix,
                        severity=Severity.INFO,
                    )
                continue
            if written == rename.old:
                failure = (f"argparse exits with 'ambiguous option: {written} could match {rename.new}, "
                           f"{rename.new.replace('-decode', '-prefill')}'")
                since = f"removed in {rename.old_removed_since}"
            else:
                failure = f"argparse exits with 'unrecognized arguments: {written}'"
                since = f"added in {rename.new_since}"
            yield RULE.finding(
                f"{ctx.flag(written)} does not exist in SGLang {ctx.env.sglang_version} ({since}): {failure} "
                f"before anything loads. Write {ctx.flag(other)} with the same value",
                flags=(written,),
                fix=rename_fix,
            )


RULE = Rule(
    check=check,
    # A renamed CUDA-graph flag is not unknown: this rule names the rename and fixes it safely.
    supersedes=("SL003",),
    code="VB003",
    category=Category.START,
    name="cuda-graph-flag-renamed",
    summary="--cuda-graph-max-bs/--cuda-graph-bs spelled for another SGLang version",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--cuda-graph-max-bs` and `--cuda-graph-bs` against `--cuda-graph-max-bs-decode` and "
        "`--cuda-graph-bs-decode`, by SGLang version.",
        why="0.5.14 split the CUDA-graph batch settings into decode and prefill flags and kept the old "
        "names as deprecated aliases of the `-decode` ones (0.5.14 `server_args.py:6358-6373`). 0.5.20 "
        "dropped the aliases: argparse's prefix matching then reports `--cuda-graph-max-bs` as "
        "ambiguous between `--cuda-graph-max-bs-decode` and `--cuda-graph-max-bs-prefill` and exits "
        "with status 2 (catalogue P01). Going the other way, 0.5.13 and older do not know the "
        "`-decode` names. The seed guide and many scripts still use `--cuda-graph-max-bs`.",
        fix="Rename the flag for the target version, keeping its value (the old names meant the "
        "decode settings).",
        fix_safety="Safe: the same setting under the name this SGLang version knows.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3_CHAIN, "--cuda-graph-max-bs", "8"),
        sglang_version="0.5.23",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3_CHAIN, "--cuda-graph-max-bs-decode", "8"),
        sglang_version="0.5.23",
    ),
    sources=(
        "seed: sglang-speculative-decoding.md (examples with --cuda-graph-max-bs 8)",
        "sglang 0.5.13: python/sglang/srt/server_args.py:6507, 6513",
        "sglang 0.5.14: python/sglang/srt/server_args.py:6358-6373",
        "sglang 0.5.19: python/sglang/srt/server_args.py:3928-3943",
        "sglang 0.5.20: python/sglang/srt/arg_groups/fields/exec_.py (only the -decode/-prefill flags)",
        "catalogue: shared/design/sglang-spec-checks.md P01",
    ),
    dialects=SGLANG_DIALECTS,
)
