"""PL063 dflash-pd-decode-without-draft-input."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs
from specguard.sglang_facts.changes import PD_DECODE_DRAFT_INPUT


def check(ctx: CheckContext) -> Iterator[Finding]:
    handover = PD_DECODE_DRAFT_INPUT.get(ctx.algorithm or "")
    if handover is None or handover.present_in(ctx.version) or ctx.spec.get("disaggregation_mode") != "decode":
        return
    yield RULE.finding(
        f"{ctx.algorithm} on a PD decode node ({ctx.flag('--disaggregation-mode')} decode) in SGLang "
        f"{ctx.env.sglang_version}: requests handed over from the prefill node get no {ctx.algorithm} draft input, "
        "so the first decode step fails with \"'NoneType' object has no attribute 'prepare_for_decode'\" and the "
        f"watchdog kills the server. SGLang {handover.first_release} adds the {ctx.algorithm} hand-over; until then serve it without "
        "PD disaggregation, or EAGLE on the decode node",
        flags=("--disaggregation-mode", "--speculative-algorithm"),
    )


RULE = Rule(
    check=check,
    code="PL063",
    category=Category.CRASH,
    name="dflash-pd-decode-without-draft-input",
    summary="DFLASH (before 0.5.20) or DSPARK (before 0.5.17) on a PD decode node: transferred requests have no draft input",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` (0.5.11-0.5.19) or `DSPARK` (0.5.16) with `--disaggregation-mode decode`.",
        why="On a decode node a request arrives from the prefill node and its first decode step runs "
        "`prepare_for_decode` before any local forward, so the draft input must be rebuilt from the hand-over. "
        "`SpeculativeAlgorithm.build_disagg_draft_input` covers only EAGLE in 0.5.16 (DSPARK, new in that release, "
        "gets its branch in 0.5.17) and returns None for DFLASH up to 0.5.19 (0.5.19 speculative/spec_info.py:187-207), "
        "leaving `batch.spec_info` None: a DSPARK bring-up on the 2026-07-13 nightly hit it (PR 28390 comment), and issue 36140 "
        "(Kimi-K3 + its DFlash draft, 0.5.16-based image) hits `spec_prepare_for_decode` -> AttributeError, then "
        "the watchdog. PRs 24683 and 28390 (closed) and 34285 (open) wire DFLASH in; 0.5.20 ships an `is_dflash()` "
        "branch that calls `build_dflash_disagg_draft_input` (0.5.20 spec_info.py:214). Later releases are left "
        "alone: the decode-side None guards of PR 34285 are still open, but no failure on 0.5.20+ was read.",
        fix="Serve the DFLASH-family draft colocated (no PD disaggregation), use EAGLE on the decode node, or upgrade (DSPARK 0.5.17+, DFLASH 0.5.20+).",
        fix_safety="No automatic fix: each option changes the deployment or the algorithm.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen3-8B", "--disaggregation-mode", "decode", "--speculative-algorithm", "DFLASH",
              "--speculative-draft-model-path", "z-lab/Qwen3-8B-DFlash-b16"),
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=("--model-path", "Qwen/Qwen3-8B", "--disaggregation-mode", "decode", "--speculative-algorithm", "DFLASH",
              "--speculative-draft-model-path", "z-lab/Qwen3-8B-DFlash-b16"),
        sglang_version="0.5.20",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/36140",
        "https://github.com/sgl-project/sglang/pull/24683",
        "https://github.com/sgl-project/sglang/pull/28390",
        "https://github.com/sgl-project/sglang/pull/34285",
        "sglang 0.5.16: python/sglang/srt/speculative/spec_info.py (build_disagg_draft_input: EAGLE only)",
        "sglang 0.5.17: python/sglang/srt/speculative/spec_info.py (DSPARK branch added)",
        "sglang 0.5.19: python/sglang/srt/speculative/spec_info.py:187-207",
        "sglang 0.5.20: python/sglang/srt/speculative/spec_info.py:194-222",
    ),
    sglang_versions=">=0.5.11,<0.5.20",
)
