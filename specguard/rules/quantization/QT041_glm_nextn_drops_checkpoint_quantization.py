"""QT041 glm-nextn-drops-checkpoint-quantization."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of

# Targets whose MTP draft class (``Glm4MoeForCausalLMNextN``, models/glm4_moe_nextn.py) kept the
# checkpoint's quantization only when ``--speculative-draft-model-quantization`` resolved to a value:
# ``quant_config = quant_config if server_args.speculative_draft_model_quantization else None``
# (sglang 0.5.10 and 0.5.10.post1 glm4_moe_nextn.py:131-134, from sgl-project/sglang#19246; absent
# in 0.5.9; 0.5.11 :131-135 also keeps a loader-detected quant_config, sgl-project/sglang#22823).
# That flag defaults to ``--quantization``, which is None when SGLang detects the method from the
# checkpoint's own quantization_config.
GLM_NEXTN_TARGETS = frozenset({"Glm4MoeForCausalLM"})


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "EAGLE" or ctx.target is None:
        return
    if ctx.target.architecture not in GLM_NEXTN_TARGETS or ctx.target.quantization is None:
        return
    draft_path = ctx.spec.get("speculative_draft_model_path")
    if draft_path is not None and draft_path != ctx.spec.get("model_path"):
        return  # a separate draft checkpoint, not the target's own NextN layer
    if ctx.spec.get("quantization") or ctx.spec.has("--speculative-draft-model-quantization"):
        return  # the flag resolves to a value, so the NextN layer keeps its quant_config
    method = ctx.target.quantization
    draft_flag = ctx.flag("--speculative-draft-model-quantization")
    yield RULE.finding(
        f"SGLang {ctx.env.sglang_version} builds GLM's NextN draft layer without a quantization config unless "
        f"{draft_flag} resolves to a value, and with no --quantization it does not: the {method} checkpoint's "
        "MTP weights load into unquantized layers, the draft's predictions are garbage and the accept length "
        f"falls to about 1.0 (sgl-project/sglang#22315, #22823). Pass {draft_flag} {method}, or use 0.5.11",
        flags=("--speculative-draft-model-quantization",),
        fix=fix_of(
            f"keep the checkpoint's {method} quantization on the NextN draft",
            Applicability.UNSAFE,
            Edit(name="--speculative-draft-model-quantization", value=method),
        ),
    )


RULE = Rule(
    check=check,
    code="QT041",
    category=Category.PERF,
    name="glm-nextn-drops-checkpoint-quantization",
    summary="GLM-4.x MTP on a checkpoint-quantized target loads its NextN draft unquantized (0.5.10.x)",
    severity=Severity.WARNING,
    sglang_versions=">=0.5.10,<0.5.11",
    docs=RuleDocs(
        what="Fires for EAGLE/NEXTN on a `Glm4MoeForCausalLM` target whose config.json carries a "
        "`quantization_config`, using the target's own NextN layer, when neither `--quantization` nor "
        "`--speculative-draft-model-quantization` is given, in SGLang 0.5.10 and 0.5.10.post1.",
        why="sgl-project/sglang#19246 (an NPU change) made `Glm4MoeForCausalLMNextN` drop its quant_config "
        "unless `server_args.speculative_draft_model_quantization` is truthy. That flag defaults to "
        "`--quantization`, which stays None when SGLang detects the method from the checkpoint (GLM-4.6-FP8, "
        "GLM-4.7-FP8: compressed-tensors / fp8 in config.json). The FP8 NextN weights then load into bf16 "
        "layers and nothing the draft proposes is accepted: accept length 1.00 (sgl-project/sglang#22315) or "
        "~2.0 falling to ~1.0 (#22823). Nothing fails, so the server just runs slower than without MTP. "
        "0.5.11 keeps a loader-detected quant_config (#22823).",
        fix="Pass `--speculative-draft-model-quantization <the checkpoint's method>` (any value makes the layer "
        "keep the detected config), or upgrade to 0.5.11.",
        fix_safety="Unsafe: it changes how the draft layer is built.",
    ),
    bad=Example(
        argv=("--model-path", "zai-org/GLM-4.6-FP8", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
              "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4", "--tp-size", "8"),
        target={"architectures": ("Glm4MoeForCausalLM",), "quantization": "compressed-tensors"},
        sglang_version="0.5.10",
    ),
    good=Example(
        argv=("--model-path", "zai-org/GLM-4.6-FP8", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
              "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4", "--tp-size", "8"),
        target={"architectures": ("Glm4MoeForCausalLM",), "quantization": "compressed-tensors"},
        sglang_version="0.5.11",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/pull/22823 (GLM-4.6-FP8: accept length ~2.0 -> ~1.0; fix merged)",
        "https://github.com/sgl-project/sglang/pull/22315 (GLM-4.7-FP8 EAGLE accept_len 1.00 on GPU)",
        "https://github.com/sgl-project/sglang/pull/19246 (introduced the gate)",
        "sglang 0.5.9: python/sglang/srt/models/glm4_moe_nextn.py (no gate)",
        "sglang 0.5.10 / 0.5.10.post1: python/sglang/srt/models/glm4_moe_nextn.py:131-134",
        "sglang 0.5.11: python/sglang/srt/models/glm4_moe_nextn.py:131-135 (also keeps a detected quant_config)",
    ),
)
