"""PL190 hicache-dcp-with-speculation."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.parallel._parallel import dcp_size
from specguard.sglang_facts.changes import Change

HICACHE = "--enable-hierarchical-cache"
# 0.5.18 lets DSPARK through: its host pool translates DCP indices; 0.5.17 refused every algorithm.
DSPARK_ACCEPTED = Change(
    "0.5.18",
    "0.5.18 server_args.py:7408-7413 `speculative_algorithm not in (None, 'DSPARK')`",
)

DEEPSEEK_V3_DCP = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3",
    "--tp",
    "8",
    "--dcp-size",
    "8",
    HICACHE,
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    dcp = dcp_size(ctx)
    if ctx.algorithm is None or dcp is None or dcp[0] <= 1 or not ctx.spec.has(HICACHE):
        return
    written = ctx.spec.get("speculative_algorithm")
    if DSPARK_ACCEPTED.present_in(ctx.version):
        if written == "DSPARK":
            return
        refusal = (
            "NotImplementedError 'HiCache with --dcp-size > 1 only supports DSPARK speculative decoding; other "
            "draft-model host pools have no DCP index translation.'"
        )
    else:
        refusal = (
            "NotImplementedError 'HiCache with --dcp-size > 1 does not support speculative decoding yet (the "
            "draft-model host pool has no DCP index translation).'"
        )
    size, flag = dcp
    yield RULE.finding(
        f"{ctx.flag(HICACHE)} with {ctx.flag(flag)} {size} and {written} in SGLang {ctx.version}: the draft's host "
        f"KV pool cannot translate decode-context-parallel indices, so argument handling raises ({refusal}). "
        f"Drop {ctx.flag(HICACHE)} or set {ctx.flag(flag)} 1 to speculate",
        flags=(HICACHE, flag, "--speculative-algorithm"),
    )


RULE = Rule(
    check=check,
    code="PL190",
    category=Category.START,
    name="hicache-dcp-with-speculation",
    summary="HiCache with --dcp-size above 1 refuses speculation (0.5.17: every algorithm; 0.5.18+: all but DSPARK)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--enable-hierarchical-cache` with `--dcp-size` (`--decode-context-parallel-size`) above 1 and a "
        "speculative algorithm: any algorithm in 0.5.17, any but DSPARK (as written) from 0.5.18.",
        why="0.5.17 let HiCache run with decode context parallelism for MLA models on L1/L2, and "
        "`_resolve_hicache_dcp_compatibility` raises 'HiCache with --dcp-size > 1 does not support speculative "
        "decoding yet (the draft-model host pool has no DCP index translation)' for any algorithm "
        "(server_args.py:7161-7177, from `_handle_hicache`, :7159). 0.5.18 accepts DSPARK and raises 'only "
        "supports DSPARK speculative decoding' otherwise (server_args.py:7397-7413); 0.5.20 moved it to "
        "arg_groups/hicache_hook.py, unchanged to 0.5.23 (hicache_hook.py:129-147). The check runs before the "
        "speculative hook (0.5.23 pipeline.py:272 vs :306), on the algorithm as written. 0.5.16 has no "
        "HiCache-DCP check (and refuses DCP with speculation on CUDA: PL191).",
        fix="Drop `--enable-hierarchical-cache`, serve without decode context parallelism, or (0.5.18+) use DSPARK.",
        fix_safety="No automatic fix: each option changes capacity or the algorithm.",
    ),
    bad=Example(
        argv=(*DEEPSEEK_V3_DCP, "--speculative-algorithm", "EAGLE"),
        sglang_version="0.5.17",
    ),
    good=Example(argv=DEEPSEEK_V3_DCP, sglang_version="0.5.17"),
    sources=(
        "sglang 0.5.16: python/sglang/srt/server_args.py:3149-3178 (_handle_dcp_validation; no HiCache-DCP check)",
        "sglang 0.5.17: python/sglang/srt/server_args.py:7138-7177",
        "sglang 0.5.18: python/sglang/srt/server_args.py:7370-7413",
        "sglang 0.5.23: python/sglang/srt/arg_groups/hicache_hook.py:97,129-147",
        "sglang 0.5.23: python/sglang/srt/arg_groups/pipeline.py:272,306",
    ),
    sglang_versions=">=0.5.17",
    log_signatures=(
        r"HiCache with --dcp-size > 1 does not support speculative decoding yet",
        r"HiCache with --dcp-size > 1 only supports DSPARK speculative decoding",
    ),
)
