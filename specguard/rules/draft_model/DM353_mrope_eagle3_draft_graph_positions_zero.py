"""DM353 mrope-eagle3-draft-graph-positions-zero."""

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

# The EAGLE3 head class that swaps its positions for forward_batch.mrope_positions when its rope config has
# mrope_section (0.5.2 models/llama_eagle3.py:113-119, :157-158).
MROPE_READING_DRAFT = "LlamaForCausalLMEagle3"
GRAPHS_OFF = "--disable-cuda-graph"
LM_ONLY = "--language-model-only"


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.draft
    if (
        ctx.algorithm != "EAGLE3"
        or draft is None
        or draft.architecture != MROPE_READING_DRAFT
        or "mrope_section" not in (draft.rope_scaling or {})
        # Eager drafting recomputes the positions each round (stale only past the first step); a language-only
        # launch gives the draft no mrope positions at all, another failure this rule does not model.
        or ctx.spec.has(GRAPHS_OFF)
        or ctx.spec.has(LM_ONLY)
    ):
        return
    yield RULE.finding(
        f"EAGLE3 with a draft head whose rope config has mrope_section in SGLang {ctx.version}: the head rotates by "
        "forward_batch.mrope_positions, but the draft decode and draft-extend CUDA graphs replay with their "
        "zero-filled mrope buffer (nothing copies the batch's positions in), so every drafted token is placed at "
        "position 0 and far fewer are accepted; output stays verified. SGLang 0.5.21 copies them; upgrade for "
        "the full speed-up",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own draft graph runners
    check=check,
    code="DM353",
    category=Category.PERF,
    name="mrope-eagle3-draft-graph-positions-zero",
    summary="an EAGLE3 head with multimodal rope (mrope_section) drafts at position 0 under the draft CUDA graphs "
    "(0.5.2-0.5.20)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm EAGLE3` with a draft whose config.json architectures[0] is "
        "LlamaForCausalLMEagle3 and whose rope_scaling has `mrope_section` (EAGLE3 heads trained for Qwen2.5-VL "
        "or Qwen3-VL style targets), draft CUDA graphs on, SGLang 0.5.2 through 0.5.20.",
        why="From 0.5.2 the EAGLE3 head replaces its positions with `forward_batch.mrope_positions` when its rope "
        "config has mrope_section (models/llama_eagle3.py:113-119, :157-158; 0.5.20 :124-131, :225-226). The "
        "draft decode and draft-extend CUDA graph runners allocate a zero mrope buffer and capture with it "
        "(0.5.2 speculative/eagle_draft_cuda_graph_runner.py:94, :165, :231; eagle_draft_extend_cuda_graph_runner.py:83, "
        ":195, :254; 0.5.20 :178, :361 and :172, :362), but their replay never copies the batch's mrope positions "
        "in, so the head runs at position 0. 0.5.21 copies them in both runners (eagle_draft_cuda_graph_runner.py:601-605, "
        "eagle_draft_extend_cuda_graph_runner.py:554-557) and advances them per eager draft step "
        "(eagle_worker_v2.py:826-827). 0.5.2rc2's llama_eagle3.py has no mrope. Acceptance drops; the output "
        "is still verified by the target. A draft whose config folds rope into rope_parameters with the default "
        "rope type is not read here, and `--disable-cuda-graph` or `--language-model-only` keep the rule quiet.",
        fix="Upgrade to SGLang 0.5.21. No automatic fix.",
        fix_safety="No fix: the release is the user's choice.",
    ),
    bad=Example(
        argv=(
            "--model-path",
            "Qwen/Qwen2.5-VL-7B-Instruct",
            "--speculative-algorithm",
            "EAGLE3",
            "--speculative-draft-model-path",
            "d",
        ),
        target={"architectures": ("Qwen2_5_VLForConditionalGeneration",)},
        draft={
            "architectures": (MROPE_READING_DRAFT,),
            "rope_scaling": {"type": "mrope", "mrope_section": (16, 24, 24)},
        },
        sglang_version="0.5.20",
    ),
    good=Example(
        argv=(
            "--model-path",
            "Qwen/Qwen2.5-VL-7B-Instruct",
            "--speculative-algorithm",
            "EAGLE3",
            "--speculative-draft-model-path",
            "d",
        ),
        target={"architectures": ("Qwen2_5_VLForConditionalGeneration",)},
        draft={
            "architectures": (MROPE_READING_DRAFT,),
            "rope_scaling": {"type": "mrope", "mrope_section": (16, 24, 24)},
        },
        sglang_version="0.5.21",
    ),
    sources=(
        "sglang 0.5.2rc2: python/sglang/srt/models/llama_eagle3.py (no mrope)",
        "sglang 0.5.2: python/sglang/srt/models/llama_eagle3.py:113-119,157-158",
        "sglang 0.5.2: python/sglang/srt/speculative/eagle_draft_cuda_graph_runner.py:94,165,231; eagle_draft_extend_cuda_graph_runner.py:83,195,254",
        "sglang 0.5.20: python/sglang/srt/models/llama_eagle3.py:124-131,225-226",
        "sglang 0.5.20: python/sglang/srt/speculative/eagle_draft_cuda_graph_runner.py:178,361; eagle_draft_extend_cuda_graph_runner.py:172,362",
        "sglang 0.5.21: python/sglang/srt/speculative/eagle_draft_cuda_graph_runner.py:601-605; eagle_draft_extend_cuda_graph_runner.py:554-557; eagle_worker_v2.py:826-827",
    ),
    sglang_versions=">=0.5.2,<=0.5.20",
)
