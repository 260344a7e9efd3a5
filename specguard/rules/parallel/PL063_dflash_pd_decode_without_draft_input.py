"""PL063 dflash-pd-decode-without-draft-input."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DFLASH" or ctx.spec.get("disaggregation_mode") != "decode":
        return
    yield RULE.finding(
        f"DFLASH on a PD decode node ({ctx.flag('--disaggregation-mode')} decode) in SGLang "
        f"{ctx.env.sglang_version}: requests handed over from the prefill node get no DFLASH draft input "
        "(SGLang builds one only for EAGLE and DSPARK), so the first decode step fails with \"'NoneType' object "
        "has no attribute 'prepare_for_decode'\" and the watchdog kills the server. SGLang 0.5.20 adds the DFLASH "
        "hand-over; until then serve DFLASH without PD disaggregation, or EAGLE/DSPARK on the decode node",
        flags=("--disaggregation-mode", "--speculative-algorithm"),
    )


RULE = Rule(
    check=check,
    code="PL063",
    name="dflash-pd-decode-without-draft-input",
    summary="DFLASH on a PD decode node before SGLang 0.5.20: transferred requests have no draft input and decode crashes",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with `--disaggregation-mode decode` on SGLang 0.5.11-0.5.19.",
        why="On a decode node a request arrives from the prefill node and its first decode step runs "
        "`prepare_for_decode` before any local forward, so the draft input must be rebuilt from the hand-over. "
        "`SpeculativeAlgorithm.build_disagg_draft_input` covers EAGLE and DSPARK and returns None "
        "for DFLASH (0.5.19 speculative/spec_info.py:187-207), leaving `batch.spec_info` None: issue 36140 "
        "(Kimi-K3 + its DFlash draft, 0.5.16-based image) hits `spec_prepare_for_decode` -> AttributeError, then "
        "the watchdog. PRs 24683 and 28390 (closed) and 34285 (open) wire DFLASH in; 0.5.20 ships an `is_dflash()` "
        "branch that calls `build_dflash_disagg_draft_input` (0.5.20 spec_info.py:214). Later releases are left "
        "alone: the decode-side None guards of PR 34285 are still open, but no failure on 0.5.20+ was read.",
        fix="Serve DFLASH colocated (no PD disaggregation), use EAGLE or DSPARK on the decode node, or upgrade to 0.5.20+.",
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
        "sglang 0.5.19: python/sglang/srt/speculative/spec_info.py:187-207",
        "sglang 0.5.20: python/sglang/srt/speculative/spec_info.py:194-222",
    ),
    sglang_versions=">=0.5.11,<0.5.20",
)
