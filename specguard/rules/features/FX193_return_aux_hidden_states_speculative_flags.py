"""FX193 return-aux-hidden-states-speculative-flags."""

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
)
from specguard.rules.examples import LLAMA31_8B, LLAMA31_8B_EAGLE3
from specguard.sglang_facts.algorithms import AUX_HIDDEN_CAPTURE_SPELLINGS

CAPTURE = "--enable-return-aux-hidden-states"
LAYER_IDS = "--return-aux-hidden-state-layer-ids"
DRAFT = "--speculative-draft-model-path"
# 0.5.23 validation_hook.py:694: the algorithms whose aux-hidden-state convention the capture follows.
CAPTURE_CONVENTIONS = AUX_HIDDEN_CAPTURE_SPELLINGS


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not ctx.spec.has(CAPTURE):
        return
    written = ctx.spec.get("speculative_algorithm")
    algorithm = ctx.flag("--speculative-algorithm")
    if written not in CAPTURE_CONVENTIONS:
        yield RULE.finding(
            f"{ctx.flag(CAPTURE)} with {algorithm} {written or 'unset'} in SGLang {ctx.version}: the capture takes "
            "the algorithm only as the name of its convention, and argument handling raises unless it is EAGLE3, "
            f"DFLASH or DSPARK (ValueError '--enable-return-aux-hidden-states needs --speculative-algorithm EAGLE3, "
            f"DFLASH or DSPARK to name the capture convention'). Set {algorithm} to the convention of the draft the "
            "states are for",
            flags=(CAPTURE, "--speculative-algorithm"),
        )
        return
    if ctx.spec.has(DRAFT):
        yield RULE.finding(
            f"{ctx.flag(CAPTURE)} with {ctx.flag(DRAFT)} in SGLang {ctx.version}: the capture runs the target "
            f"without a draft ({written} only names the convention and is reset, so nothing speculates), and argument "
            "handling raises (ValueError '--enable-return-aux-hidden-states captures without a draft; drop "
            f"--speculative-draft-model-path.'). Drop {ctx.flag(DRAFT)}, or {ctx.flag(CAPTURE)} to speculate",
            flags=(CAPTURE, DRAFT),
            fix=fix_of(
                f"drop {DRAFT}", Applicability.UNSAFE, Edit(name=DRAFT, value=None)
            ),
        )
    if written != "EAGLE3" and not ctx.spec.has(LAYER_IDS):
        yield RULE.finding(
            f"{ctx.flag(CAPTURE)} with {written} and no {ctx.flag(LAYER_IDS)} in SGLang {ctx.version}: only the "
            "EAGLE3 convention has default capture layers, so argument handling raises (ValueError "
            f"'--enable-return-aux-hidden-states with {written} requires --return-aux-hidden-state-layer-ids.'). "
            f"Name the target layers with {ctx.flag(LAYER_IDS)}",
            flags=(CAPTURE, "--speculative-algorithm"),
        )


RULE = Rule(
    check=check,
    code="FX193",
    category=Category.START,
    name="return-aux-hidden-states-speculative-flags",
    summary="--enable-return-aux-hidden-states needs --speculative-algorithm EAGLE3/DFLASH/DSPARK as its convention, "
    "no draft path, and layer ids for DFLASH/DSPARK (0.5.23+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.SOMETIMES,
    docs=RuleDocs(
        what="`--enable-return-aux-hidden-states` (SGLang 0.5.23+) with `--speculative-algorithm` unset or other than "
        "EAGLE3/DFLASH/DSPARK, with `--speculative-draft-model-path`, or with DFLASH/DSPARK and no "
        "`--return-aux-hidden-state-layer-ids`.",
        why="0.5.23 added aux-hidden-state capture on a target without a draft: `--speculative-algorithm` only names "
        "the capture convention and `handle_aux_hidden_state_capture`, the first speculative step of the pipeline "
        "(pipeline.py:94), resets it to None (validation_hook.py:748-753), so nothing speculates. Before that it "
        "raises for an algorithm outside EAGLE3/DFLASH/DSPARK (:712-718), for a draft path ('captures without a "
        "draft; drop --speculative-draft-model-path', :719-723) and for DFLASH/DSPARK without layer ids "
        "(:729-734). 0.5.22 has no such flag.",
        fix="Name the convention with `--speculative-algorithm`, drop `--speculative-draft-model-path`, and give "
        "`--return-aux-hidden-state-layer-ids` for DFLASH/DSPARK; or drop the capture flag to speculate.",
        fix_safety="Unsafe where offered (dropping the draft path): the user may have meant to speculate instead.",
    ),
    bad=Example(argv=(*LLAMA31_8B_EAGLE3, CAPTURE), sglang_version="0.5.23"),
    good=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "EAGLE3", CAPTURE),
        sglang_version="0.5.23",
    ),
    sources=(
        "sglang 0.5.22: python/sglang/srt/arg_groups/fields/exec_.py (no enable_return_aux_hidden_states)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/fields/exec_.py:130-138",
        "sglang 0.5.23: python/sglang/srt/arg_groups/validation_hook.py:694-753",
        "sglang 0.5.23: python/sglang/srt/arg_groups/pipeline.py:94",
    ),
    sglang_versions=">=0.5.23",
    log_signatures=(
        r"--enable-return-aux-hidden-states captures without a draft; drop --speculative-draft-model-path",
        r"--enable-return-aux-hidden-states needs --speculative-algorithm EAGLE3, DFLASH or DSPARK",
        r"--enable-return-aux-hidden-states with \w+ requires --return-aux-hidden-state-layer-ids",
    ),
)
