"""DM080 qwen2-eagle3-aux-unpacked-twice."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs

# SGLang 0.5.2's ``Qwen2ForCausalLM.forward`` carries the EAGLE3 unpacking block twice
# (models/qwen2.py:483-489: ``if self.capture_aux_hidden_states: hidden_states, aux_hidden_states =
# hidden_states`` two times in a row), so with EAGLE3 on, the second copy tries to split the
# hidden-state tensor itself into two values and the target's forward fails. 0.5.1 has no EAGLE3
# capture for Qwen2 at all (DM040) and 0.5.3 keeps one copy (qwen2.py:480-482,
# sgl-project/sglang#10517, "fix qwen2 eagle3 runtime error", which names SpecForge#231).
QWEN2_CLASS = "Qwen2ForCausalLM"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "EAGLE3" or ctx.target is None or ctx.target.architecture != QWEN2_CLASS:
        return
    yield RULE.finding(
        f"SGLang {ctx.env.sglang_version}'s {QWEN2_CLASS} (Qwen2, Qwen2.5, QwQ, R1-Distill-Qwen targets) unpacks "
        "the EAGLE3 auxiliary hidden states twice in its forward (models/qwen2.py:483-489), so the second unpack "
        "splits the hidden-state tensor and the target's forward fails at CUDA-graph capture or the first "
        "request (SpecForge#231; fixed by sgl-project/sglang#10517 in 0.5.3). Use SGLang 0.5.3 or later for "
        f"EAGLE3 on this target, or change {ctx.flag('--speculative-algorithm')}",
        flags=("--speculative-algorithm",),
    )


RULE = Rule(
    check=check,
    code="DM080",
    category=Category.START,
    name="qwen2-eagle3-aux-unpacked-twice",
    summary="EAGLE3 on a Qwen2ForCausalLM target in SGLang 0.5.2: the target's forward unpacks the aux states twice",
    severity=Severity.ERROR,
    sglang_versions=">=0.5.2,<0.5.3",
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm EAGLE3` with a target whose architecture is `Qwen2ForCausalLM` (Qwen2, "
        "Qwen2.5, QwQ, DeepSeek-R1-Distill-Qwen) on SGLang 0.5.2.",
        why="0.5.2 added EAGLE3 capture to `Qwen2ForCausalLM` (sgl-project/sglang#9216) but its forward holds the "
        "unpacking block `hidden_states, aux_hidden_states = hidden_states` twice (`models/qwen2.py:483-489`); "
        "with EAGLE3 the second copy splits the hidden-state tensor and the forward fails. A SpecForge user "
        "serving Qwen2.5-14B-Instruct with its own EAGLE3 head hit it at CUDA-graph capture (SpecForge#231); "
        "sgl-project/sglang#10517 removed the duplicate, and 0.5.3 has one copy (`qwen2.py:480-482`).",
        fix="Upgrade to SGLang 0.5.3 or later; on 0.5.2 serve this target without EAGLE3.",
        fix_safety="No automatic fix: the release has to change.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen2.5-14B-Instruct", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "/models/qwen2.5-14b-eagle3", "--speculative-num-steps", "5",
              "--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "8"),
        target={"architectures": ("Qwen2ForCausalLM",)},
        draft={"architectures": ("LlamaForCausalLMEagle3",)},
        sglang_version="0.5.2",
    ),
    good=Example(
        argv=("--model-path", "Qwen/Qwen2.5-14B-Instruct", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "/models/qwen2.5-14b-eagle3", "--speculative-num-steps", "5",
              "--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "8"),
        target={"architectures": ("Qwen2ForCausalLM",)},
        draft={"architectures": ("LlamaForCausalLMEagle3",)},
        sglang_version="0.5.3",
    ),
    sources=(
        "https://github.com/sgl-project/SpecForge/issues/231 (Qwen2.5-14B-Instruct + a SpecForge EAGLE3 head: launch error at capture)",
        "https://github.com/sgl-project/sglang/pull/10517 (fix qwen2 eagle3 runtime error, for SpecForge#231)",
        "https://github.com/sgl-project/sglang/pull/9216 (EAGLE3 capture for Qwen2)",
        "sglang 0.5.2: python/sglang/srt/models/qwen2.py:483-489 (the block twice)",
        "sglang 0.5.3: python/sglang/srt/models/qwen2.py:480-482 (once)",
    ),
)
