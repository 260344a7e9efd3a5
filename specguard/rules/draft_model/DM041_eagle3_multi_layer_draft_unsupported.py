"""DM041 eagle3-multi-layer-draft-unsupported."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Dialect, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.sglang_facts.changes import EAGLE3_MLA_HEAD, Change

# The EAGLE3 head class that carries the one-layer check (``models/llama_eagle3.py``) until it builds
# num_hidden_layers decoder layers.
ONE_LAYER_EAGLE3_HEAD = "LlamaForCausalLMEagle3"
MULTI_LAYER_LLAMA_HEAD = Change(
    "0.5.12", "0.5.12 models/llama_eagle3.py:183 range(config.num_hidden_layers)"
)
# The MLA EAGLE3 head (models/kimi_k25_eagle3.py) keeps the check in every release that has it.
ONE_LAYER_MLA_HEAD = "Eagle3DeepseekV2ForCausalLM"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "EAGLE3" or ctx.draft is None:
        return
    layers = ctx.draft.num_hidden_layers
    if layers is None or layers == 1:
        return
    if ctx.draft.architecture == ONE_LAYER_MLA_HEAD:
        if ctx.spec.dialect is not Dialect.SGL_JAX and EAGLE3_MLA_HEAD.present_in(
            ctx.version
        ):
            yield RULE.finding(
                f"the EAGLE3 draft's config.json says num_hidden_layers: {layers}, and SGLang {ctx.version}'s "
                "Eagle3DeepseekV2ForCausalLM (the MLA head) raises 'EAGLE3 currently only supports 1 layer' when it "
                "builds the draft, after the target has loaded; every release with this head builds one layer, so "
                "use a one-layer head",
                flags=("--speculative-draft-model-path",),
            )
        return
    if ctx.draft.architecture != ONE_LAYER_EAGLE3_HEAD:
        return
    if ctx.spec.dialect is Dialect.SGL_JAX:
        yield RULE.finding(
            f"the EAGLE3 draft's config.json says num_hidden_layers: {layers}, and sgl-jax's "
            "LlamaForCausalLMEagle3 raises 'EAGLE3 currently only supports 1 layer' when it builds the draft, "
            "after the target has loaded (every sgl-jax build with speculative decoding, to the HEAD specguard "
            "read); use a one-layer EAGLE3 head",
            flags=("--speculative-draft-model-path",),
        )
        return
    if MULTI_LAYER_LLAMA_HEAD.present_in(ctx.version):
        return
    yield RULE.finding(
        f"the EAGLE3 draft's config.json says num_hidden_layers: {layers}, and SGLang "
        f"{ctx.env.sglang_version}'s LlamaForCausalLMEagle3 raises 'EAGLE3 currently only supports 1 layer' "
        "when it builds the draft, after the target has loaded. Multi-layer EAGLE3 heads load from SGLang "
        "0.5.12; use a one-layer head (or retrain with num_hidden_layers 1) on this release",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    check=check,
    code="DM041",
    category=Category.START,
    name="eagle3-multi-layer-draft-unsupported",
    summary="An EAGLE3 head with more than one decoder layer, on a release that builds only one",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    # sgl-jax runs it too, at every build: its builds are dated, not SGLang releases (base.applies_to).
    dialects=(*SGLANG_DIALECTS, Dialect.SGL_JAX),
    docs=RuleDocs(
        what="Checks the EAGLE3 draft's `num_hidden_layers`: architecture `LlamaForCausalLMEagle3` on releases "
        "before 0.5.12, and `Eagle3DeepseekV2ForCausalLM` (the MLA head, new in 0.5.12) on every release.",
        why="`LlamaForCausalLMEagle3.__init__` raises `ValueError('EAGLE3 currently only supports 1 layer')` "
        "when `config.num_hidden_layers != 1` (sglang 0.4.6 `models/llama_eagle3.py:160`, 0.5.0rc1 :181, "
        "0.5.5-0.5.9 :198, 0.5.10-0.5.11 :212); from 0.5.12 the head builds `num_hidden_layers` decoder "
        "layers (`llama_eagle3.py:183`). SGLang checks nothing at argument time, so the failure comes after "
        "the target's weights have loaded. SpecForge can train heads with several layers "
        "(SpecForge#129: a Qwen3-Coder-30B head that trained fine and failed to load). sgl-jax's "
        "`LlamaForCausalLMEagle3` raises the same error from its first speculative build (#378, f671c326, "
        "`models/llama_eagle3.py`) to HEAD (cddbf6f1 :236-237), so on sgl-jax the rule runs at every build. "
        "`Eagle3MLAModel`, the body of `Eagle3DeepseekV2ForCausalLM`, raises the same error from the release that "
        "brought it (0.5.12 `models/kimi_k25_eagle3.py:206-207`) to 0.5.23 (:243-244).",
        fix="Use a one-layer EAGLE3 head, or (for LlamaForCausalLMEagle3) SGLang 0.5.12 or later. No automatic fix.",
        fix_safety="No fix: the draft checkpoint and the release are the user's choice.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen3-Coder-30B-A3B-Instruct", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "outputs/Qwen3-Coder-30B-A3B-Instruct/epoch_0"),
        draft={"architectures": ("LlamaForCausalLMEagle3",), "num_hidden_layers": 2},
        sglang_version="0.5.0rc1",
    ),
    good=Example(
        argv=("--model-path", "Qwen/Qwen3-Coder-30B-A3B-Instruct", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "outputs/Qwen3-Coder-30B-A3B-Instruct/epoch_0"),
        draft={"architectures": ("LlamaForCausalLMEagle3",), "num_hidden_layers": 1},
        sglang_version="0.5.0rc1",
    ),
    sources=(
        "https://github.com/sgl-project/SpecForge/issues/129",
        "sglang 0.4.6: python/sglang/srt/models/llama_eagle3.py:160",
        "sglang 0.5.11: python/sglang/srt/models/llama_eagle3.py:212-213",
        "sglang 0.5.12: python/sglang/srt/models/llama_eagle3.py:183 (range(config.num_hidden_layers))",
        "sglang 0.5.12: python/sglang/srt/models/kimi_k25_eagle3.py:206-207, 266",
        "sglang 0.5.23: python/sglang/srt/models/kimi_k25_eagle3.py:243-244",
        "sglang-jax f671c326 (#378) to cddbf6f1: python/sgl_jax/srt/models/llama_eagle3.py (cddbf6f1 :236-237)",
    ),
)
