"""PL303 dspark-dense-draft-compact-dp-graph."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import DEEPSEEK_V4_FLASH_DSPARK
from specguard.rules.spec_params._ragged_verify import RAGGED, unset_ragged
from specguard.rules.spec_params._shared import attn_dp_enabled, attn_dp_flags
from specguard.sglang_facts.architectures import DSV4_ARCHITECTURES
from specguard.sglang_facts.changes import DSPARK_PD_PREFILL_NO_DECODE_GRAPHS, Change

DECODE_BACKEND = "--cuda-graph-backend-decode"
# 0.5.16-0.5.18 test --disable-cuda-graph alone; from 0.5.19 the resolved decode graph backend, which
# --disable-decode-cuda-graph also turns off (arg_groups/cuda_graph_hook.py:69-70).
READS_DECODE_GRAPH_BACKEND = Change(
    "0.5.19",
    "0.5.19 speculative/dspark_components/dspark_worker_v2.py:118-121 reads cuda_graph_config.decode.backend "
    "(0.5.18 :102-104 get_exec().graph.disable_cuda_graph)",
)


def _decode_graphs_on(ctx: CheckContext) -> bool:
    """Whether the worker's check sees decode CUDA graphs on; from 0.5.19 a --cuda-graph-config, not read
    here, keeps it quiet."""
    if ctx.spec.get("disable_cuda_graph"):
        return False
    if not READS_DECODE_GRAPH_BACKEND.present_in(ctx.version):
        return True
    if ctx.spec.has("--disable-decode-cuda-graph") or ctx.spec.has(
        "--cuda-graph-config"
    ):
        return False
    item = ctx.spec.item(DECODE_BACKEND)
    return item is None or not item.values or item.values[-1] != "disabled"


def _pd_prefill(ctx: CheckContext) -> bool:
    item = ctx.spec.item("--disaggregation-mode")
    return item is not None and bool(item.values) and item.values[-1] == "prefill"


def check(ctx: CheckContext) -> Iterator[Finding]:
    # is_compact_mode: the mode as typed (an EnvStr) is 'compact'.
    if (
        ctx.algorithm != "DSPARK"
        or ctx.spec.env_value(RAGGED) != "compact"
        or not attn_dp_enabled(ctx)
    ):
        return
    # A DeepSeek-V4 (MoE) draft captures its graphs under DP; only a dense one is refused. Unknown: quiet.
    if (
        ctx.draft is None
        or ctx.draft.architecture is None
        or ctx.draft.architecture in DSV4_ARCHITECTURES
    ):
        return
    if not _decode_graphs_on(ctx):
        return
    if _pd_prefill(ctx) and DSPARK_PD_PREFILL_NO_DECODE_GRAPHS.present_in(ctx.version):
        return  # a PD prefill server captures no decode graphs from 0.5.17
    written = " ".join(ctx.flag(f) for f in attn_dp_flags(ctx))
    yield RULE.finding(
        f"DSPARK with a dense draft ({ctx.draft.architecture}), {RAGGED}=compact and attention DP ({written}) with "
        f"decode CUDA graphs on: SGLang {ctx.version} raises 'DSpark dense-draft compact verify under ... attention "
        "DP does not yet support cuda graph' when the DSPARK worker starts, after the target weights load. Use "
        f"{RAGGED}=static (the default) or {ctx.flag('--disable-cuda-graph')}",
        flags=("--speculative-algorithm", *attn_dp_flags(ctx)),
        fix=unset_ragged(),
    )


DENSE_DRAFT = {"architectures": ("Qwen3DSparkModel",)}
DP_LAUNCH = (
    *DEEPSEEK_V4_FLASH_DSPARK,
    "--tp",
    "8",
    "--enable-dp-attention",
    "--dp-size",
    "8",
    "--enable-dp-lm-head",
)

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="PL303",
    category=Category.START,
    name="dspark-dense-draft-compact-dp-graph",
    summary="DSPARK with a dense draft, SGLANG_RAGGED_VERIFY_MODE=compact and attention DP refuses decode CUDA "
    "graphs (0.5.16+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` with attention DP, `SGLANG_RAGGED_VERIFY_MODE=compact`, a draft whose "
        "config.json architectures[0] is not a DeepSeek-V4 class (a dense draft), and decode CUDA graphs on "
        "(no `--disable-cuda-graph`; from 0.5.19 also no `--disable-decode-cuda-graph` or "
        "`--cuda-graph-backend-decode disabled`, and a `--cuda-graph-config` keeps it quiet); from 0.5.17 not on a `--disaggregation-mode prefill` server. An "
        "unknown draft config keeps it quiet.",
        why='`DSparkWorkerV2.__init__` raises "DSpark dense-draft compact verify under --enable-dp-attention does '
        "not yet support cuda graph (idle DP groups cannot join the token-keyed compact graph). Re-run with "
        '--disable-cuda-graph (eager is lossless), or use SGLANG_RAGGED_VERIFY_MODE=static." (0.5.16 '
        "speculative/dspark_components/dspark_worker_v2.py:162-174, `not server_args.disable_cuda_graph`). 0.5.17 "
        "reads `_decode_graph_allowed`, false on a PD prefill server (:95-98, :179-191); 0.5.19 makes it the resolved "
        "decode graph backend (:118-121), which `--disable-decode-cuda-graph` turns off too "
        '(arg_groups/cuda_graph_hook.py:69-70); 0.5.22 says "under attention DP does not yet support cuda graph" and '
        "tests the resolved attention-DP switch (:298-310); unchanged in 0.5.23 (:336-348). The planner's compact "
        "mode is the variable as typed (dspark_planner.py:121, :226-227). 0.5.15.post1 has no DSPARK.",
        fix="Unset `SGLANG_RAGGED_VERIFY_MODE` (static verify), or run eager with `--disable-cuda-graph`.",
        fix_safety="Unsafe: the verify schedule changes.",
    ),
    bad=Example(
        argv=DP_LAUNCH,
        draft=DENSE_DRAFT,
        env={RAGGED: "compact"},
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=(*DP_LAUNCH, "--disable-cuda-graph"),
        draft=DENSE_DRAFT,
        env={RAGGED: "compact"},
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/speculative/ (no dspark_components; no DSPARK)",
        (
            "sglang 0.5.16: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:162-174; "
            "dspark_planner.py:121,226-227"
        ),
        "sglang 0.5.17: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:95-98,179-191",
        "sglang 0.5.18: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:102-104",
        "sglang 0.5.19: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:118-121; arg_groups/cuda_graph_hook.py:69-70",
        "sglang 0.5.22: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:298-310",
        "sglang 0.5.23: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:336-348",
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(
        r"DSpark dense-draft compact verify under (--enable-dp-attention|attention DP) does not\s+yet support cuda graph",
    ),
)
