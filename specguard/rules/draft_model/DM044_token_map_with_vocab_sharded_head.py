"""DM044 token-map-with-vocab-sharded-head."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    Rule,
    RuleDocs,
    set_flags,
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    # EAGLE3 ignores the map (DM007); every other algorithm that reaches the EAGLE worker's
    # lm_head sharing (EAGLE, and NEXTN, which SGLang aliases to EAGLE) gathers rows with it.
    if ctx.algorithm != "EAGLE":
        return
    token_map = ctx.spec.get("speculative_token_map")
    if token_map is None:
        return
    tp = ctx.spec.get("tp_size") or 1
    if tp <= 1:
        return
    if ctx.spec.get("enable_dp_lm_head"):
        return  # the lm_head is sharded over the attention-TP group instead: its width is not known here
    yield RULE.finding(
        f"{ctx.flag('--speculative-token-map')} with {ctx.flag('--tp-size')} {tp}: the EAGLE worker slices the "
        "target's lm_head with the map's global token ids (head.data[hot_token_id]), but under tensor "
        f"parallelism each rank holds only 1/{tp} of the vocabulary rows, so the gather indexes past its "
        "shard and the scheduler dies at start-up with 'index out of bounds' (sgl-project/sglang#4328, "
        f"unfixed through 0.5.23). Run the draft with {ctx.flag('--tp-size')} 1, or drop the token map",
        flags=("--speculative-token-map", "--tp-size"),
        fix=set_flags("drop the FR-Spec token map (the draft keeps the full lm_head)", Applicability.UNSAFE,
                      speculative_token_map=None),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own code path; sgl-jax has its own
    check=check,
    code="DM044",
    category=Category.CRASH,
    name="token-map-with-vocab-sharded-head",
    summary="--speculative-token-map with EAGLE/NEXTN and tensor parallelism indexes past the lm_head shard",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="Fires when `--speculative-token-map` is given with `--speculative-algorithm EAGLE` (or NEXTN, "
        "its alias) and `--tp-size` above 1, unless `--enable-dp-lm-head` changes how the head is sharded.",
        why="When the EAGLE worker shares the target's embedding and lm_head with the draft, it trims the "
        "head to the FR-Spec hot tokens with `head.data = head.data[self.hot_token_id]` "
        "(sglang 0.4.5 `speculative/eagle_worker.py:134`, 0.5.9 `eagle_worker.py:176-180`, 0.5.23 "
        "`eagle_worker_v2.py:372-375`). The map holds global token ids, but the target's lm_head is a "
        "vocab-parallel layer: with TP > 1 each rank holds a slice of the rows, so ids beyond the slice "
        "index out of bounds and the scheduler dies while the draft worker starts (CUDA 'IndexKernel ... "
        "index out of bounds', sgl-project/sglang#4328, from thunlp/FR-Spec#1; on Ascend CANN 9.1 "
        "'IndexCheckKernel: Index out of range', Ascend/sglang#1133, which moved its CI case to "
        "`--tp-size 1`). A fix (sgl-project/sglang#6849) was closed unmerged; the slicing is unchanged in "
        "0.5.23. EAGLE3 is not affected: it ignores the map (DM007).",
        fix="Run with `--tp-size 1`, or remove `--speculative-token-map` (the draft then uses the full head).",
        fix_safety="Unsafe: dropping the map changes the draft's lm_head cost; changing TP changes the deployment.",
    ),
    bad=Example(
        argv=("--model-path", "meta-llama/Meta-Llama-3-8B-Instruct", "--speculative-algorithm", "EAGLE",
              "--speculative-draft-model-path", "lmsys/sglang-EAGLE-LLaMA3-Instruct-8B",
              "--speculative-token-map", "thunlp/LLaMA3-Instruct-8B-FR-Spec/freq_32768.pt", "--tp-size", "4"),
    ),
    good=Example(
        argv=("--model-path", "meta-llama/Meta-Llama-3-8B-Instruct", "--speculative-algorithm", "EAGLE",
              "--speculative-draft-model-path", "lmsys/sglang-EAGLE-LLaMA3-Instruct-8B",
              "--speculative-token-map", "thunlp/LLaMA3-Instruct-8B-FR-Spec/freq_32768.pt", "--tp-size", "1"),
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/4328 (--speculative-token-map error when TP>1)",
        "https://github.com/thunlp/FR-Spec/issues/1 (the IndexKernel assertion in EAGLEWorker.__init__)",
        "https://github.com/Ascend/sglang/pull/1133 (NPU CI: EAGLE-2 + token map crashes at --tp-size 4; moved to 1)",
        "https://github.com/sgl-project/sglang/pull/6849 (re-sharding fix, closed unmerged)",
        "sglang 0.4.5: python/sglang/srt/speculative/eagle_worker.py:134",
        "sglang 0.5.9: python/sglang/srt/speculative/eagle_worker.py:176-180",
        "sglang 0.5.23: python/sglang/srt/speculative/eagle_worker_v2.py:323-333, 372-375",
    ),
    log_signatures=(r"IndexCheckKernel: Index out of range",),
)
