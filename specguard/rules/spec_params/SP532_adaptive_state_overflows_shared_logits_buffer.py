"""SP532 adaptive-state-overflows-shared-logits-buffer."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE

ADAPTIVE = "--speculative-adaptive"
# The candidate steps of SGLang's default adaptive config, the union over its slots (DEFAULT_ADAPTIVE_CONFIG, the
# same in 0.5.15-0.5.18 speculative/adaptive_spec_params.py:22-47); init_states builds a state for each, in this
# order (adaptive_runtime_state.py:94-110).
DEFAULT_CANDIDATE_STEPS = (0, 1, 3, 7)

# What SGLang raises (0.5.18 model_executor/graph_shared_output.py:55-58):
# "shared logits buffer holds {max_rows} rows but caller needs {rows} (vocab_size={vocab_size})"

# Flags that turn the target's decode graphs off, or set them in a way not read here (quiet).
GRAPH_OFF_FLAGS = ("--disable-decode-cuda-graph", "--cuda-graph-config")


def decode_graphs_captured(ctx: CheckContext) -> bool:
    """Whether the target captures decode (verify) graphs: no flag turns them off, not a PD prefill server
    (whose decode graphs SGLang turns off, 0.5.18 server_args.py:4584-4586)."""
    if ctx.spec.get("disable_cuda_graph") or any(
        ctx.spec.has(f) for f in GRAPH_OFF_FLAGS
    ):
        return False
    if ctx.spec.last_value("--disaggregation-mode") == "prefill":
        return False
    if ctx.env.platform == "cpu":
        return False  # the CPU graph runner is another path (0.5.18 server_args.py:4891-4912), not read here
    return ctx.spec.last_value("--cuda-graph-backend-decode") != "disabled"


def first_overflowing_step(start: int) -> int | None:
    """The first candidate state whose verify graphs need more rows than the starting state's.

    Every state's target runner captures the same batch sizes: ``get_batch_sizes_to_capture`` reads
    ``cuda_graph_config.decode.bs`` (0.5.18 base_cuda_graph_runner.py:74), while the adaptive pruning only
    overrides ``cuda_graph_bs_decode`` (eagle_worker_v2.py:1459-1472), so a state's rows are the same largest
    batch times its steps + 1 and any candidate above the start overflows."""
    return next((step for step in DEFAULT_CANDIDATE_STEPS if step > start), None)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.resolution.adaptive is not True or ctx.spec.has(
        "--speculative-adaptive-config"
    ):
        return  # a config of its own: its candidates are not read here
    start = ctx.resolution.num_steps
    if start is None or start not in DEFAULT_CANDIDATE_STEPS:
        return  # SGLang refuses these steps at argument time first (SP008)
    if not decode_graphs_captured(ctx):
        return
    step = first_overflowing_step(start)
    if step is None:
        return
    typed = ctx.spec.has("--speculative-num-steps")
    yield RULE.finding(
        f"{ctx.flag(ADAPTIVE)} starting at {start} steps{'' if typed else ' (its default start)'}: SGLang "
        f"{ctx.version} sizes the shared CUDA-graph logits buffer for the starting state only (its largest captured "
        f"batch x {start + 1} rows), then captures the target graphs of the adaptive state for {step} steps over the "
        f"same batch sizes (x {step + 1} rows), so start-up fails with 'shared logits buffer holds ... rows but "
        f"caller needs ...' while capturing CUDA graphs. Start at {ctx.flag('--speculative-num-steps')} 7 (the "
        f"largest default candidate) or upgrade to 0.5.19",
        flags=(ADAPTIVE, "--speculative-num-steps") if typed else (ADAPTIVE,),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="SP532",
    category=Category.START,
    name="adaptive-state-overflows-shared-logits-buffer",
    summary="--speculative-adaptive starting below its largest candidate step overflows the shared CUDA-graph logits buffer at capture (0.5.15-0.5.18)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-adaptive` (EAGLE/EAGLE3, topk 1, SGLang's default adaptive config) with the target's "
        "decode CUDA graphs on, starting below 7 steps (the default start is 3): some candidate state (0, 1, 3, 7 "
        "steps) verifies more tokens per request than the starting state over the same captured batch sizes, so "
        "its graphs need more logits rows than the shared buffer holds, whatever the GPU, the graph batch sizes or "
        "the request slots. SGLang 0.5.15 to 0.5.18. Quiet with an adaptive config file of its own, with decode "
        "graphs off (`--disable-cuda-graph`, `--disable-decode-cuda-graph`, `--cuda-graph-backend-decode disabled`, "
        "`--cuda-graph-config`), on a `--disaggregation-mode prefill` server and on CPU.",
        why="From 0.5.15 every CUDA-graph runner takes its logits from one `GraphSharedOutput` buffer sized by "
        "`max_decode_logits_rows()`, the starting state's largest captured batch times its draft tokens (0.5.15 "
        "model_executor/model_runner.py:835-839; 0.5.18 :793-797), and `get_logits_buffer` asserts a caller's rows "
        "fit (0.5.15 graph_shared_output.py:56; 0.5.18 :55-58). The adaptive controller then builds a state per "
        "candidate step, capturing a target `DecodeCudaGraphRunner` with steps + 1 draft tokens (0.5.18 "
        "speculative/adaptive_runtime_state.py:94-110; eagle_worker_v2.py:1100-1105, 1333-1346) whose rows are its "
        "largest batch times steps + 1 (decode_cuda_graph_runner.py:313-315, 362-363, 405-409). Its batch sizes are "
        "the full decode list: `get_batch_sizes_to_capture` reads `cuda_graph_config.decode.bs` (0.5.15 "
        "base_cuda_graph_runner.py:68; 0.5.18 :74), while the per-step pruning only overrides `cuda_graph_bs_decode` "
        "(0.5.15 eagle_worker_v2.py:1507-1514; 0.5.18 :1459-1472), which is None unless typed (0.5.18 "
        "server_args.py:4892-4897). With no steps typed SGLang starts at candidate_steps[2] = 3 (0.5.15 "
        "arg_groups/speculative_hook.py:561; 0.5.18 :800-801). 0.5.19 sizes the buffer for every candidate "
        "(model_runner.py:819-839).",
        fix="Start at `--speculative-num-steps 7` (the largest default candidate), or upgrade to 0.5.19.",
        fix_safety="No automatic fix: the starting step changes the draft length.",
    ),
    bad=Example(
        argv=(
            *LLAMA31_8B_EAGLE,
            ADAPTIVE,
            "--speculative-num-steps",
            "1",
            "--speculative-eagle-topk",
            "1",
        ),
        gpu="H100",
        sglang_version="0.5.18",
    ),
    good=Example(
        argv=(
            *LLAMA31_8B_EAGLE,
            ADAPTIVE,
            "--speculative-num-steps",
            "1",
            "--speculative-eagle-topk",
            "1",
        ),
        gpu="H100",
        sglang_version="0.5.19",
    ),
    sources=(
        "sglang 0.5.15: python/sglang/srt/model_executor/model_runner.py:835-839; graph_shared_output.py:56",
        "sglang 0.5.15: python/sglang/srt/speculative/adaptive_spec_params.py:22-47; eagle_worker_v2.py:1152-1158,1394-1406,1507-1514",
        "sglang 0.5.15: python/sglang/srt/model_executor/runner/base_cuda_graph_runner.py:68; arg_groups/speculative_hook.py:561,570",
        "sglang 0.5.18: python/sglang/srt/model_executor/model_runner.py:793-797; graph_shared_output.py:30-66",
        "sglang 0.5.18: python/sglang/srt/speculative/adaptive_runtime_state.py:94-110; eagle_worker_v2.py:1100-1105,1333-1346,1459-1472",
        "sglang 0.5.18: python/sglang/srt/model_executor/runner/decode_cuda_graph_runner.py:313-315,362-363,405-409; base_cuda_graph_runner.py:64-103",
        "sglang 0.5.18: python/sglang/srt/server_args.py:4584-4586,4892-4897; arg_groups/speculative_hook.py:800-809",
        "sglang 0.5.19: python/sglang/srt/model_executor/model_runner.py:819-839",
    ),
    sglang_versions=">=0.5.15,<=0.5.18",
    log_signatures=(r"shared logits buffer holds \d+ rows but caller needs \d+",),
)
