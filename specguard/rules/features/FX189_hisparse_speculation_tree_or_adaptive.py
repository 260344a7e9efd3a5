"""FX189 hisparse-speculation-tree-or-adaptive."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
    set_flags,
)
from specguard.rules.examples import GLM52_FACTS, GLM52_FP8_TP8

HISPARSE = "--enable-hisparse"
ADAPTIVE = "--speculative-adaptive"
# A DSA target (HiSparse's model check, hisparse_hook.py:100-107) with the radix cache off, which HiSparse
# asserts (:109-111): the launch HiSparse itself accepts.
GLM5_HISPARSE = (
    *GLM52_FP8_TP8,
    HISPARSE,
    "--disable-radix-cache",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "3",
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or not ctx.spec.has(HISPARSE):
        return
    # The check runs in check_server_args, after argument resolution: it reads the resolved topk
    # (`or 1`: unset is a chain) and an adaptive mode SGLang has not already switched off.
    topk = ctx.resolution.eagle_topk
    if topk is not None and topk != 1:
        yield RULE.finding(
            f"{ctx.flag(HISPARSE)} with {ctx.algorithm} and topk {topk} in SGLang {ctx.version}: HiSparse speculates "
            "with chains only, so the server refuses at start (ValueError 'The minimal HiSparse spec integration "
            f"supports linear speculation only; use --speculative-eagle-topk 1.'). Set "
            f"{ctx.flag('--speculative-eagle-topk')} 1",
            flags=(HISPARSE, "--speculative-eagle-topk"),
            fix=set_flags(
                "draft a chain (topk 1)", Applicability.UNSAFE, speculative_eagle_topk=1
            ),
        )
    if ctx.resolution.adaptive is True:
        yield RULE.finding(
            f"{ctx.flag(HISPARSE)} with {ctx.flag(ADAPTIVE)} in SGLang {ctx.version}: HiSparse sizes its swap state "
            "statically, so the server refuses at start (ValueError 'HiSparse speculative decoding uses statically "
            f"sized swap state; --speculative-adaptive is not supported.'). Drop {ctx.flag(ADAPTIVE)}",
            flags=(HISPARSE, ADAPTIVE),
            fix=fix_of(
                f"drop {ADAPTIVE}",
                Applicability.UNSAFE,
                Edit(name=ADAPTIVE, value=None),
            ),
        )


RULE = Rule(
    check=check,
    code="FX189",
    category=Category.START,
    name="hisparse-speculation-tree-or-adaptive",
    summary="--enable-hisparse speculates only with topk 1 and without --speculative-adaptive (0.5.22+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--enable-hisparse` with a speculative algorithm whose resolved topk is above 1, or with "
        "`--speculative-adaptive` that SGLang keeps on, SGLang 0.5.22 or later.",
        why="0.5.22 integrated speculative decoding with HiSparse's swap path (managers/hisparse_coordinator.py:100, "
        "143) for chains only: `validate_hisparse` raises 'supports linear speculation only; use "
        "--speculative-eagle-topk 1' when `(speculative_eagle_topk or 1) != 1` and 'uses statically sized swap "
        "state; --speculative-adaptive is not supported' when adaptive is on (arg_groups/hisparse_hook.py:114-127). "
        "It runs in check_server_args (validation_hook.py:311), after the resolution pipeline, so it reads the "
        "resolved topk and an adaptive flag the speculative hook has not already turned off "
        "(speculative_hook.py:1288-1299). Unchanged in 0.5.23 (hisparse_hook.py:114-127); 0.5.21's "
        "validate_hisparse (hisparse_hook.py:79-110) has neither test.",
        fix="Draft a chain (`--speculative-eagle-topk 1`) and drop `--speculative-adaptive`.",
        fix_safety="Unsafe: a chain drafts fewer candidates, and static parameters replace the adaptive ones.",
    ),
    bad=Example(
        argv=(
            *GLM5_HISPARSE,
            "--speculative-eagle-topk",
            "4",
            "--speculative-num-draft-tokens",
            "8",
        ),
        target=GLM52_FACTS,
        sglang_version="0.5.22",
    ),
    good=Example(
        argv=(
            *GLM5_HISPARSE,
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
        ),
        target=GLM52_FACTS,
        sglang_version="0.5.22",
    ),
    sources=(
        "sglang 0.5.21: python/sglang/srt/arg_groups/hisparse_hook.py:79-110 (no speculative test)",
        "sglang 0.5.22: python/sglang/srt/arg_groups/hisparse_hook.py:87-127",
        "sglang 0.5.22: python/sglang/srt/arg_groups/overrides.py:1184-1192; validation_hook.py:307-311",
        "sglang 0.5.23: python/sglang/srt/arg_groups/hisparse_hook.py:114-127",
    ),
    sglang_versions=">=0.5.22",
    log_signatures=(
        r"The minimal HiSparse spec integration supports linear speculation only",
        r"HiSparse speculative decoding uses statically sized swap state; --speculative-adaptive is not supported",
    ),
)
