"""DM347 eagle3-narrow-head-draft-extend-graph."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE3

# The attention backends whose EAGLE worker builds a draft-extend backend, and so captures the
# draft-extend CUDA graph (0.4.7 speculative/eagle_worker.py:157-231, 0.4.9.post2 :180-242; flashmla
# builds none). Every CUDA default of these releases is one of them.
DRAFT_EXTEND_GRAPH_BACKENDS = frozenset({"flashinfer", "triton", "fa3"})

DRAFT = {
    "architectures": ("LlamaForCausalLMEagle3",),
    "hidden_size": 2048,
    "target_hidden_size": 4096,
}


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.draft
    if ctx.algorithm != "EAGLE3" or draft is None or ctx.spec.get("disable_cuda_graph"):
        return
    if (
        draft.target_hidden_size is None
        or draft.hidden_size is None
        or draft.target_hidden_size == draft.hidden_size
    ):
        return
    backend = ctx.spec.get("attention_backend")
    if backend is None:
        # The default is one of them on CUDA; elsewhere which backend runs is not known here.
        if ctx.env.gpu is None or ctx.env.gpu.platform != "cuda":
            return
    elif backend not in DRAFT_EXTEND_GRAPH_BACKENDS:
        return
    yield RULE.finding(
        f"The EAGLE3 head is {draft.hidden_size} wide but takes the target's {draft.target_hidden_size}-wide hidden "
        f"states (target_hidden_size), and SGLang {ctx.version} sizes the draft-extend CUDA graph's hidden-state "
        f"buffer as the head's hidden_size x 3 ({draft.hidden_size * 3}) while its fc expects "
        f"{draft.target_hidden_size * 3}: capturing that graph fails at start-up with 'Capture cuda graph failed: "
        "mat1 and mat2 shapes cannot be multiplied'. Upgrade to SGLang 0.4.9.post5 or add "
        f"{ctx.flag('--disable-cuda-graph')} (slower decoding)",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM347",
    category=Category.START,
    name="eagle3-narrow-head-draft-extend-graph",
    summary="EAGLE3 head whose target_hidden_size differs from its hidden_size fails draft-extend graph capture (0.4.7-0.4.9.post2)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm EAGLE3` with CUDA graphs on and a draft whose config.json `target_hidden_size` "
        "differs from its `hidden_size`, on the flashinfer, triton or fa3 attention backend (any CUDA default), "
        "SGLang 0.4.7 to 0.4.9.post2.",
        why="0.4.7 brought the EAGLE draft-extend CUDA graph runner; for EAGLE3 it allocates its hidden-state buffer "
        "as the draft model's `hidden_size * 3` (0.4.7 `speculative/eagle_draft_extend_cuda_graph_runner.py:70-77`, "
        "0.4.9.post2 :83-90), while the head's `fc` takes `target_hidden_size * 3` (0.4.7 `models/llama_eagle3.py:"
        "109-110`, 0.4.9.post2 :119-127). Capture runs the head on that buffer, the matmul fails, and the runner "
        "re-raises it as `Capture cuda graph failed: mat1 and mat2 shapes cannot be multiplied (...)` (0.4.9.post2 "
        ":124-130) while the server starts. 0.4.9.post5 sizes the buffer from `target_hidden_size` (:84-98). With "
        "`--disable-cuda-graph` nothing is captured (0.4.7 `eagle_worker.py:245-246`), and flashmla builds no "
        "draft-extend backend.",
        fix="Upgrade to SGLang 0.4.9.post5, or add --disable-cuda-graph (slower decoding).",
        fix_safety="No automatic fix: disabling CUDA graphs costs decode speed, and the release is the user's choice.",
    ),
    bad=Example(
        argv=LLAMA31_8B_EAGLE3, draft=DRAFT, gpu="H100", sglang_version="0.4.9.post2"
    ),
    good=Example(
        argv=LLAMA31_8B_EAGLE3, draft=DRAFT, gpu="H100", sglang_version="0.4.9.post5"
    ),
    sources=(
        "sglang 0.4.7: python/sglang/srt/speculative/eagle_draft_extend_cuda_graph_runner.py:70-77",
        "sglang 0.4.7: python/sglang/srt/models/llama_eagle3.py:109-110",
        "sglang 0.4.7: python/sglang/srt/speculative/eagle_worker.py:157-231, 245-246",
        "sglang 0.4.9.post2: python/sglang/srt/speculative/eagle_draft_extend_cuda_graph_runner.py:83-90, 124-130",
        "sglang 0.4.9.post2: python/sglang/srt/models/llama_eagle3.py:119-127",
        "sglang 0.4.9.post5: python/sglang/srt/speculative/eagle_draft_extend_cuda_graph_runner.py:84-98",
    ),
    sglang_versions=">=0.4.7,<0.4.9.post5",
    log_signatures=(
        r"Capture cuda graph failed: mat1 and mat2 shapes cannot be multiplied",
    ),
)
