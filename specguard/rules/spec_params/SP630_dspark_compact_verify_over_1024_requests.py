"""SP630 dspark-compact-verify-over-1024-requests."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.spec_params._ragged_verify import RAGGED
from specguard.rules.spec_params._shared import attn_dp_size
from specguard.sglang_facts.changes import Change

# compact_row_index_triton maps each compact verify row to its request with a binary search of
# _SEARCH_NBITS = 11 steps, which converges for at most 2**10 requests per verify batch.
ROW_SEARCH_REQUESTS = 1024
# 0.5.17 moved the kernel to sglang/kernels/ops/speculative/dspark/dspark_verify_window.py and asserts the
# bound there (:387-390): "bs={bs} exceeds row-index search capacity 1024"; 0.5.16 mismapped silently.
ROW_SEARCH_ASSERTED = Change(
    "0.5.17",
    "0.5.17 kernels/ops/speculative/dspark/dspark_verify_window.py:387-390 (0.5.16 "
    "srt/speculative/dspark_components/kernels/dspark_verify_window.py:379-396 has no assert)",
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DSPARK" or ctx.spec.env_value(RAGGED) != "compact":
        return
    running = ctx.spec.get("max_running_requests")
    if running is None:
        return  # _handle_dspark resets an unset value to 48
    ranks = attn_dp_size(ctx)
    per_rank = running // ranks
    if per_rank <= ROW_SEARCH_REQUESTS:
        return
    asserted = ROW_SEARCH_ASSERTED.present_in(ctx.version)
    outcome = (
        "the row-index kernel asserts 'bs=... exceeds row-index search capacity 1024' and the scheduler dies"
        if asserted
        else "its binary search no longer converges and maps verify rows to the wrong requests without an "
        "error, so draft tokens, positions and KV slots of those rows belong to other requests"
    )
    shared = f" ({running} over {ranks} attention-DP ranks)" if ranks > 1 else ""
    yield RULE.finding(
        f"{ctx.flag('--max-running-requests')} lets one DSPARK verify batch hold {per_rank} requests{shared}, and "
        f"with {RAGGED}=compact every verify step maps its rows to requests with a search that covers at most "
        f"{ROW_SEARCH_REQUESTS} requests: once a batch holds more, {outcome} (SGLang {ctx.version}). Keep the "
        f"requests per rank at {ROW_SEARCH_REQUESTS} or fewer, or unset {RAGGED}",
        flags=("--max-running-requests", "--speculative-algorithm"),
        fix=set_flags(
            f"cap the requests per rank at {ROW_SEARCH_REQUESTS}",
            Applicability.UNSAFE,
            max_running_requests=ROW_SEARCH_REQUESTS * ranks,
        ),
        severity=None if asserted else Severity.WARNING,
    )


QWEN3_8B_DSPARK = (
    "--model-path",
    "Qwen/Qwen3-8B",
    "--speculative-algorithm",
    "DSPARK",
    "--speculative-draft-model-path",
    "/ckpt/qwen3-8b-dspark",
)

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="SP630",
    category=Category.CRASH,
    name="dspark-compact-verify-over-1024-requests",
    summary="DSPARK with SGLANG_RAGGED_VERIFY_MODE=compact and more than 1024 running requests per rank "
    "mismaps verify rows (0.5.16) or asserts (0.5.17+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` with `SGLANG_RAGGED_VERIFY_MODE=compact` and an explicit "
        "`--max-running-requests` above 1024 per attention-DP rank (the value divided by the attention-DP "
        "width), SGLang 0.5.16 or later. An error from 0.5.17 (the assert), a warning on 0.5.16 (wrong rows).",
        why="In compact mode every verify step runs `run_compact` (0.5.16 "
        "speculative/dspark_components/dspark_worker_v2.py:565-585; the planner always builds a layout, "
        "dspark_planner.py:421-457), which builds the ragged verify window and the verify ids through "
        "`compact_row_index_triton` (dspark_components/kernels/dspark_verify_window.py:174, :433). Its kernel "
        "finds each row's request by a binary search of `_SEARCH_NBITS = 11` steps (:219, :343-378), enough for "
        "1024 requests. 0.5.16 runs it for any batch size, so a bigger batch silently maps rows to the wrong "
        "requests. 0.5.17 moved the kernel to sglang/kernels/ops/speculative/dspark/dspark_verify_window.py and "
        "asserts `bs <= 1 << (_SEARCH_NBITS - 1)` with the comment 'beyond it silently mismaps' (:219, :387-390); "
        "0.5.23 keeps the assert (:236, :327-329). A verify batch holds the rank's running requests, "
        "`--max-running-requests` divided by the attention-DP width (0.5.17 "
        "model_executor/pool_configurator.py:532; 0.5.23 :956); DSPARK refuses PP (0.5.16 "
        "arg_groups/speculative_hook.py:303-306) and resets an unset value to 48 (:395). Static and cap-accept "
        "modes do not build the compact window.",
        fix="Cap `--max-running-requests` at 1024 per attention-DP rank, or unset `SGLANG_RAGGED_VERIFY_MODE`.",
        fix_safety="Unsafe: fewer requests run at once.",
    ),
    bad=Example(
        argv=(*QWEN3_8B_DSPARK, "--max-running-requests", "2048"),
        env={RAGGED: "compact"},
        sglang_version="0.5.17",
    ),
    good=Example(
        argv=(*QWEN3_8B_DSPARK, "--max-running-requests", "1024"),
        env={RAGGED: "compact"},
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/speculative/ (no DSPARK, no ragged verify)",
        "sglang 0.5.16: python/sglang/srt/speculative/dspark_components/kernels/dspark_verify_window.py:174,219,343-396,433",
        "sglang 0.5.16: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:565-585",
        "sglang 0.5.16: python/sglang/srt/arg_groups/speculative_hook.py:303-306,395-396",
        "sglang 0.5.17: python/sglang/kernels/ops/speculative/dspark/dspark_verify_window.py:219,387-390",
        "sglang 0.5.17: python/sglang/srt/model_executor/pool_configurator.py:532",
        "sglang 0.5.23: python/sglang/kernels/ops/speculative/dspark/dspark_verify_window.py:186,236,327-329,376",
        "sglang 0.5.23: python/sglang/srt/model_executor/pool_configurator.py:956",
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(r"bs=\d+ exceeds row-index search capacity 1024",),
)
