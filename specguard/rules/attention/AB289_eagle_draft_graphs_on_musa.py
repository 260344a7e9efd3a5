"""AB289 eagle-draft-graphs-on-musa."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE3_CHAIN
from specguard.rules.spec_params._shared import device
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm not in EAGLE_WORKER_ALGORITHMS
        or device(ctx) != "musa"
        or ctx.spec.get("disable_cuda_graph")
    ):
        return
    # The multi-step draft graph is captured only for more than one step; SGLang's own choice is more.
    steps = ctx.resolution.num_steps or ctx.spec.get("speculative_num_steps")
    if steps is not None and steps <= 1:
        return
    yield RULE.finding(
        f"{ctx.algorithm} on {ctx.flag('--device')} musa with CUDA graphs on in SGLang {ctx.version}: the draft "
        "worker picks its draft CUDA-graph runner from a table that has only cuda and npu, so capturing the draft "
        "graphs raises KeyError: 'musa' while the server starts, after the weights load. SGLang 0.5.11 adds MUSA "
        f"to the table; until then add {ctx.flag('--disable-cuda-graph')} or serve without speculative decoding",
        flags=("--device", "--speculative-algorithm"),
    )


MUSA_EAGLE3 = (
    *LLAMA31_8B_EAGLE3_CHAIN,
    "--device",
    "musa",
    "--attention-backend",
    "triton",
)

RULE = Rule(
    check=check,
    code="AB289",
    category=Category.START,
    name="eagle-draft-graphs-on-musa",
    summary="EAGLE/EAGLE3/NEXTN/STANDALONE with CUDA graphs on a Moore Threads MUSA GPU fails at draft graph capture (0.5.9-0.5.10.post1)",
    severity=Severity.ERROR,
    sglang_versions=">=0.5.9,<=0.5.10.post1",
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="An EAGLE-worker algorithm (EAGLE, EAGLE3, NEXTN, STANDALONE) drafting more than one step with "
        "`--device musa` and CUDA graphs on, SGLang 0.5.9 through 0.5.10.post1. A MUSA GPU is seen only through "
        "`--device musa`; SGLang's own detection there is not modelled.",
        why="0.5.9 made musa a device (configs/device_config.py:14; utils/common.py `get_device` returns it when "
        "torch_musa is present) and captures the target's graphs there, but `EAGLEWorker.init_cuda_graphs` and the "
        "SpecV2 `EagleDraftWorker.init_cuda_graphs` look the target's device up in `Device2DraftCudaGraphRunner = "
        "{'npu': ..., 'cuda': ...}` whenever CUDA graphs are on and there is more than one draft step (0.5.9 "
        "speculative/eagle_worker.py:232-253; 0.5.10.post1 eagle_worker.py:233-254, eagle_worker_v2.py:251-273): "
        "'musa' is not a key. 0.5.11 adds 'musa' to both tables (eagle_worker.py:275, eagle_worker_v2.py:270, 290) "
        "with MUSA flash-attention draft backends (draft_utils.py:145-150, 233-238). 0.5.8.post1 has no musa device.",
        fix="Disable CUDA graphs (`--disable-cuda-graph`), upgrade to SGLang 0.5.11, or serve without speculative decoding.",
        fix_safety="No automatic fix: turning CUDA graphs off slows decoding, and the release is the user's choice.",
    ),
    bad=Example(argv=MUSA_EAGLE3, sglang_version="0.5.10.post1"),
    good=Example(argv=MUSA_EAGLE3, sglang_version="0.5.11"),
    sources=(
        "sglang 0.5.8.post1: python/sglang/srt/configs/device_config.py (no musa)",
        "sglang 0.5.9: python/sglang/srt/configs/device_config.py:14; speculative/eagle_worker.py:232-253",
        "sglang 0.5.10.post1: python/sglang/srt/speculative/eagle_worker.py:233-254; eagle_worker_v2.py:251-273",
        "sglang 0.5.11: python/sglang/srt/speculative/eagle_worker.py:275; eagle_worker_v2.py:270,290; draft_utils.py:145-150,233-238",
    ),
    log_signatures=(r"KeyError: 'musa'",),
)
