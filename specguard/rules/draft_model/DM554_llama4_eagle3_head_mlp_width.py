"""DM554 llama4-eagle3-head-mlp-width."""

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
from specguard.rules.draft_model.DM421_eagle3_null_draft_vocab_untied_head import (
    EAGLE3_HEAD,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3

# The model type whose dense MLP width is intermediate_size_mlp (transformers' Llama4TextConfig); 0.4.9
# llama_eagle3.py:63-66 reads it for this model type only.
LLAMA4_TEXT = "llama4_text"


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.draft
    if ctx.algorithm != "EAGLE3" or draft is None or draft.architecture != EAGLE3_HEAD:
        return
    if (
        draft.model_type != LLAMA4_TEXT
        or draft.intermediate_size is None
        or draft.intermediate_size_mlp is None
    ):
        return
    built, stored = draft.intermediate_size, draft.intermediate_size_mlp
    if built == stored:
        return
    lead = (
        f"the EAGLE3 head is a {LLAMA4_TEXT} config whose MLP is intermediate_size_mlp {stored} wide, and SGLang "
        f"{ctx.version} builds the head's MLP from intermediate_size ({built})"
    )
    if stored < built:
        yield RULE.finding(
            f"{lead}: loading gate_proj/up_proj narrows the {stored} stored rows to {built}, which fails with "
            '"start (0) + length ... exceeds dimension size" after the target has loaded. Use SGLang 0.4.9 or later',
            flags=("--speculative-draft-model-path",),
            severity=Severity.ERROR,
        )
        return
    yield RULE.finding(
        f"{lead}: the loader silently keeps the first {built} of its {stored} MLP channels (gate/up rows and "
        "down_proj columns), so the draft runs a truncated MLP and fewer of its tokens are accepted. Use SGLang "
        "0.4.9 or later, which builds the MLP intermediate_size_mlp wide",
        flags=("--speculative-draft-model-path",),
    )


LLAMA4_HEAD = {
    "architectures": (EAGLE3_HEAD,),
    "model_type": LLAMA4_TEXT,
    "hidden_size": 5120,
    "intermediate_size": 8192,
    "intermediate_size_mlp": 16384,
}

RULE = Rule(
    check=check,
    code="DM554",
    category=Category.PERF,
    name="llama4-eagle3-head-mlp-width",
    summary="Before 0.4.9 a llama4_text EAGLE3 head's MLP is built intermediate_size wide, not intermediate_size_mlp",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE3 with a `LlamaForCausalLMEagle3` head whose config.json has `model_type` `llama4_text` and an "
        "`intermediate_size_mlp` other than its `intermediate_size`, SGLang 0.4.4.post4 (the first to pin "
        "transformers 4.51, which parses llama4_text) through 0.4.8.post1.",
        why="0.4.8.post1 llama_eagle3.py builds the head's decoder layer as a plain `LlamaDecoderLayer`, whose MLP "
        "is `intermediate_size` wide (models/llama.py:235), and loads the head's weights through "
        "`LlamaForCausalLM.load_weights` (llama_eagle3.py:183-193). `MergedColumnParallelLinear.weight_loader` "
        "narrows a gate/up tensor to the parameter's rows and `RowParallelLinear.weight_loader` narrows down_proj "
        "to its columns (layers/linear.py), so a wider stored MLP loads its first `intermediate_size` channels "
        "without a word and a narrower one fails the narrow. 0.4.9 builds the MLP from `intermediate_size_mlp` for "
        "`llama4_text` (llama_eagle3.py:63-70). (The head's fc bias is not a difference: 0.4.8.post1's "
        "`torch.nn.Linear` has a bias by default and loads `model.fc.bias`; 0.4.9 sets it from `config.bias`.)",
        fix="Use SGLang 0.4.9 or later.",
        fix_safety="No automatic fix: it changes the SGLang release.",
    ),
    bad=Example(
        argv=LLAMA31_8B_EAGLE3, draft=LLAMA4_HEAD, sglang_version="0.4.8.post1"
    ),
    good=Example(argv=LLAMA31_8B_EAGLE3, draft=LLAMA4_HEAD, sglang_version="0.4.9"),
    sources=(
        "sglang 0.4.4.post4: python/sglang/srt/models/llama_eagle3.py (LlamaDecoderLayer MLP from intermediate_size)",
        "sglang 0.4.4.post4: METADATA Requires-Dist transformers==4.51.0 (0.4.4.post2: 4.50.0, no llama4_text)",
        "sglang 0.4.8.post1: python/sglang/srt/models/llama_eagle3.py:108-112,183-193; models/llama.py:235",
        "sglang 0.4.9: python/sglang/srt/models/llama_eagle3.py:63-70 (intermediate_size_mlp for llama4_text)",
    ),
    sglang_versions=">=0.4.4.post4,<0.4.9",
)
