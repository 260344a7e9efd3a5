"""DM131 qwen2-eagle-draft-lacks-aux-capture-flag."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs

# ``Qwen2ForCausalLMEagle`` (models/qwen2_eagle.py) subclasses ``Qwen2ForCausalLM`` but its
# ``__init__`` calls ``nn.Module.__init__`` only, and it inherits ``forward``. From 0.5.2rc0 that
# forward reads ``self.capture_aux_hidden_states`` (the EAGLE3 capture switch, set in
# ``Qwen2ForCausalLM.__init__``) right after the decoder layers, so the EAGLE-1 draft raises
# AttributeError at its first forward: the draft CUDA-graph capture at startup
# (eagle_draft_cuda_graph_runner.py runs ``draft_forward``), or the first request without graphs.
# 0.5.1.post3's forward has no such read; 0.5.16 sets the attribute (qwen2_eagle.py:138).
DRAFT_CLASS = "Qwen2ForCausalLMEagle"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "EAGLE" or ctx.draft is None or ctx.draft.architecture != DRAFT_CLASS:
        return
    yield RULE.finding(
        f"SGLang {ctx.env.sglang_version}'s {DRAFT_CLASS} draft never sets capture_aux_hidden_states (its __init__ "
        "skips Qwen2ForCausalLM's), and the forward it inherits from Qwen2ForCausalLM reads it, so the draft "
        "dies with AttributeError at its first forward: CUDA-graph capture at startup, or the first request with "
        "CUDA graphs off. Use SGLang 0.5.16 or later for this draft (qwen2_eagle.py:138 sets the attribute).",
        flags=("--speculative-draft-model-path",),
    )


QWEN25_7B_EAGLE = (
    "--model-path", "Qwen/Qwen2.5-7B-Instruct", "--speculative-algorithm", "EAGLE",
    "--speculative-draft-model-path", "/models/qwen2.5-7b-eagle",
)

RULE = Rule(
    check=check,
    code="DM131",
    category=Category.START,
    name="qwen2-eagle-draft-lacks-aux-capture-flag",
    summary="An EAGLE draft of class Qwen2ForCausalLMEagle dies with AttributeError at its first forward (0.5.2rc0 to 0.5.15.post1)",
    severity=Severity.ERROR,
    sglang_versions=">=0.5.2rc0,<0.5.16",
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm EAGLE` (or NEXTN) with a draft whose config.json `architectures` names "
        "`Qwen2ForCausalLMEagle`, on SGLang 0.5.2rc0 through 0.5.15.post1.",
        why="`Qwen2ForCausalLMEagle` subclasses `Qwen2ForCausalLM` but its `__init__` calls `nn.Module.__init__` "
        "only (0.5.15.post1 `models/qwen2_eagle.py:115-137`) and it inherits `Qwen2ForCausalLM.forward`. Since "
        "0.5.2rc0, when EAGLE3 capture came to Qwen2, that forward reads `self.capture_aux_hidden_states` "
        "(0.5.15.post1 `models/qwen2.py:504-506`), an attribute only `Qwen2ForCausalLM.__init__` sets, so the "
        "draft raises AttributeError at its first forward: the draft CUDA-graph capture at startup, or the "
        "first request with CUDA graphs off. 0.5.1.post3's forward does not read it; 0.5.16 sets it to False "
        "in the draft's `__init__` (`qwen2_eagle.py:138`).",
        fix="Upgrade to SGLang 0.5.16 or later to serve a `Qwen2ForCausalLMEagle` draft.",
        fix_safety="No automatic fix: the release has to change.",
    ),
    bad=Example(
        argv=QWEN25_7B_EAGLE,
        target={"architectures": ("Qwen2ForCausalLM",)},
        draft={"architectures": ("Qwen2ForCausalLMEagle",)},
        sglang_version="0.5.15.post1",
    ),
    good=Example(
        argv=QWEN25_7B_EAGLE,
        target={"architectures": ("Qwen2ForCausalLM",)},
        draft={"architectures": ("Qwen2ForCausalLMEagle",)},
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.1.post3: python/sglang/srt/models/qwen2.py (Qwen2ForCausalLM.forward reads no capture_aux_hidden_states)",
        "sglang 0.5.2rc0: python/sglang/srt/models/qwen2.py:455,481 (the attribute set in __init__, read in forward)",
        "sglang 0.5.15.post1: python/sglang/srt/models/qwen2_eagle.py:115-137 (nn.Module.__init__ only, forward inherited)",
        "sglang 0.5.15.post1: python/sglang/srt/models/qwen2.py:504-506 (forward reads self.capture_aux_hidden_states)",
        "sglang 0.5.15.post1: python/sglang/srt/speculative/eagle_draft_cuda_graph_runner.py:446 (capture runs draft_forward)",
        "sglang 0.5.16: python/sglang/srt/models/qwen2_eagle.py:138 (self.capture_aux_hidden_states = False)",
    ),
    log_signatures=(r"'Qwen2ForCausalLMEagle' object has no attribute 'capture_aux_hidden_states'",),
)
