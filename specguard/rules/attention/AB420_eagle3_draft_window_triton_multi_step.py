"""AB420 eagle3-draft-window-triton-multi-step."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import (
    draft_decode_backend,
)
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3_CHAIN

WINDOW = "--speculative-draft-window-size"
# The only EAGLE3 head that turns the flag into a per-layer sliding window (llama_eagle3.py, 0.5.12-0.5.23);
# the other EAGLE3 heads never read it.
WINDOWED_HEAD = "LlamaForCausalLMEagle3"


def check(ctx: CheckContext) -> Iterator[Finding]:
    window = ctx.spec.get("speculative_draft_window_size")
    if ctx.algorithm != "EAGLE3" or window is None or window <= 0:
        return
    if ctx.draft is None or ctx.draft.architecture != WINDOWED_HEAD:
        return
    steps = ctx.resolution.num_steps
    if steps is None or steps <= 1 or draft_decode_backend(ctx) != "triton":
        return
    yield RULE.finding(
        f"{ctx.flag(WINDOW)} {window} makes every layer of the {WINDOWED_HEAD} draft a sliding-window layer, and "
        f"SGLang {ctx.version}'s triton multi-step draft decode ({steps} steps) builds no window KV indices for "
        "those layers: the decode kernel gets window_kv_indices=None and fails to build (at draft CUDA-graph "
        f"capture, else on the first decode). Drop {ctx.flag(WINDOW)}, use another draft attention backend, "
        "or SGLang 0.5.23",
        flags=(WINDOW, "--speculative-algorithm"),
        fix=fix_of(
            f"drop {WINDOW}", Applicability.UNSAFE, Edit(name=WINDOW, value=None)
        ),
    )


EAGLE3_HEAD = {"architectures": (WINDOWED_HEAD,)}

RULE = Rule(
    check=check,
    code="AB420",
    category=Category.CRASH,
    name="eagle3-draft-window-triton-multi-step",
    summary="EAGLE3 with --speculative-draft-window-size on the triton draft backend and more than one step crashes (0.5.12-0.5.22)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm EAGLE3` with a `LlamaForCausalLMEagle3` draft, `--speculative-draft-window-size`, "
        "`--speculative-num-steps` above 1 (typed or SGLang's choice) and a draft decode backend that is triton "
        "(`--speculative-draft-attention-backend`, else `--decode-attention-backend`, else the target's backend), "
        "SGLang 0.5.12 to 0.5.22.",
        why="From 0.5.12 `LlamaForCausalLMEagle3` sets the flag's window on every draft attention layer and reports it "
        "as the draft's sliding window (0.5.12 models/llama_eagle3.py:71, 351-357; 0.5.22 :285-296, 380-381), so the "
        "draft runner's triton backends treat them as sliding-window layers. A draft step with more than one step "
        "runs `TritonMultiStepDraftBackend` (speculative/draft_utils.py create_decode_backend returns None for one "
        "step), whose per-step metadata carries only the full KV indices: the eager path takes "
        "`spec_info.kv_indptr/kv_indices` and builds no window indices (0.5.12 layers/attention/triton_backend.py:332; "
        "0.5.22 :893), and the CUDA-graph capture path sets `window_kv_indices=None` (0.5.12 :628; 0.5.22 :758), "
        "while `forward_decode` reads `window_kv_indices` for every sliding-window layer (0.5.12 :1201; 0.5.22 "
        ":2265). The Triton decode kernel then gets a None index pointer and does not compile. 0.5.23 gives the "
        "multi-step backend a per-step window rail for such drafts (triton_backend.py:2552-2568, 2617-2634, "
        "2664-2716) and asserts that a window layer has one (:2356-2363).",
        fix="Drop `--speculative-draft-window-size` (the draft attends the whole context), draft with one step, "
        "pick another draft attention backend, or upgrade to SGLang 0.5.23.",
        fix_safety="Unsafe: the draft attends the whole context, which changes its cost on long prompts.",
    ),
    bad=Example(
        argv=(
            *LLAMA31_8B_EAGLE3_CHAIN,
            "--attention-backend",
            "triton",
            WINDOW,
            "2048",
        ),
        draft=EAGLE3_HEAD,
        sglang_version="0.5.22",
    ),
    good=Example(
        argv=(
            *LLAMA31_8B_EAGLE3_CHAIN,
            "--attention-backend",
            "triton",
            WINDOW,
            "2048",
        ),
        draft=EAGLE3_HEAD,
        sglang_version="0.5.23",
    ),
    sources=(
        "sglang 0.5.11: python/sglang/srt/models/llama_eagle3.py (no draft window: the flag is new in 0.5.12)",
        "sglang 0.5.12: python/sglang/srt/models/llama_eagle3.py:71,351-357",
        "sglang 0.5.12: python/sglang/srt/layers/attention/triton_backend.py:332,628,1201",
        "sglang 0.5.12: python/sglang/srt/speculative/draft_utils.py:39-67",
        "sglang 0.5.22: python/sglang/srt/models/llama_eagle3.py:285-296,380-381",
        "sglang 0.5.22: python/sglang/srt/layers/attention/triton_backend.py:746-761,893,2265-2267",
        "sglang 0.5.23: python/sglang/srt/layers/attention/triton_backend.py:2356-2363,2552-2568,2617-2634,2664-2716",
    ),
    sglang_versions=">=0.5.12,<=0.5.22",
    dialects=SGLANG_DIALECTS,
)
