"""FX084 dflash-pd-decode-no-draft-input."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs

MODE = "--disaggregation-mode"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DFLASH" or ctx.spec.get("disaggregation_mode") != "decode":
        return
    yield RULE.finding(
        f"DFLASH on a PD decode server ({ctx.flag(MODE)} decode) in SGLang {ctx.version}: the decode side builds "
        "no DFLASH draft input for requests relayed from prefill, so the first decode step fails on "
        "batch.spec_info None ('NoneType' object has no attribute 'prepare_for_decode', sglang#36140). "
        "DFLASH under PD arrives in 0.5.20; until then run DFLASH without disaggregation, or EAGLE on the decode side",
        flags=("--speculative-algorithm", MODE),
    )


RULE = Rule(
    check=check,
    code="FX084",
    name="dflash-pd-decode-no-draft-input",
    summary="DFLASH on a PD-disaggregation decode server before 0.5.20",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with `--disaggregation-mode decode` before 0.5.20.",
        why="A PD decode server turns each request relayed from prefill into a decode batch through "
        "`SpeculativeAlgorithm.build_disagg_draft_input`, which builds draft input for EAGLE (and DSPARK from "
        "0.5.18) and returns None for DFLASH (0.5.16 speculative/spec_info.py:164-179; 0.5.19 "
        "spec_info.py:187-207). The batch then has no spec_info and the first DFLASH decode crashes in "
        "`spec_prepare_for_decode` (sglang#36140: 'DSPARK and EAGLE both work under PD, but DFLASH has no "
        "disagg wiring'). 0.5.20 adds `build_dflash_disagg_draft_input` (spec_info.py:214-221, "
        "speculative/dflash_disaggregation.py).",
        fix="Upgrade to 0.5.20 or later, or serve DFLASH without PD disaggregation.",
        fix_safety="No automatic fix: the alternatives change the deployment or the algorithm.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "DFLASH",
              "--speculative-draft-model-path", "z-lab/Qwen3-8B-DFlash-b16", MODE, "decode"),
        sglang_version="0.5.19",
    ),
    good=Example(
        argv=("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "DFLASH",
              "--speculative-draft-model-path", "z-lab/Qwen3-8B-DFlash-b16", MODE, "decode"),
        sglang_version="0.5.20",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/36140",
        "sglang 0.5.16: python/sglang/srt/speculative/spec_info.py:164-179",
        "sglang 0.5.19: python/sglang/srt/speculative/spec_info.py:187-207",
        "sglang 0.5.20: python/sglang/srt/speculative/spec_info.py:214-221",
        "sglang 0.5.16: python/sglang/srt/disaggregation/decode_schedule_batch_mixin.py:145-152",
    ),
    sglang_versions="<0.5.20",
)
