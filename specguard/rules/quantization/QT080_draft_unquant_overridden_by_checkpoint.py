"""QT080 draft-unquant-overridden-by-checkpoint."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, ModelFacts, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs

# ``--speculative-draft-model-quantization unquant`` is not a method of its own: SGLang turns it into
# None before the draft's ModelConfig is built (0.5.7 server_args.py:776-777; 0.5.17 :4092-4093; 0.5.23
# arg_groups/serving_hook.py:704-709), and a draft ModelConfig whose quantization is None takes the
# method its checkpoint declares (``if self.quantization is None: self.quantization = quant_method``,
# 0.5.17 configs/model_config.py:1451-1477; the same branch in 0.5.7 and 0.5.23). So "unquant" cannot
# unquantize a draft checkpoint whose config.json carries a quantization_config: the MTP layers of a
# quantized target's own checkpoint, or a quantized EAGLE head.
UNQUANT = "unquant"

# Checkpoint methods whose MTP/NextN draft classes decide on their own to build the draft unquantized
# (the BF16 MTP layers of an NVFP4 or Quark export): Qwen3.5's MTP drops a serialized modelopt_fp4 /
# modelopt_mixed config and a Quark config that excludes mtp.* (0.5.17 models/qwen3_5_mtp.py:64-83),
# GLM's NextN drops modelopt_fp4 (0.5.7-0.5.10 models/glm4_moe_nextn.py:50-54). config.json names a
# ModelOpt export "modelopt" whatever its algorithm, so the whole family is left to those classes.
MODEL_CLASS_DECIDES = frozenset({"modelopt", "modelopt_fp4", "modelopt_mixed", "quark"})


def _draft_checkpoint(ctx: CheckContext) -> ModelFacts | None:
    """The facts of the checkpoint SGLang loads the draft from."""
    draft_path = ctx.spec.get("speculative_draft_model_path")
    if draft_path is None or draft_path == ctx.spec.get("model_path"):
        # MTP/NEXTN without a draft path, or with the target's own path: the target's checkpoint
        return ctx.draft if ctx.draft is not None and ctx.draft.quantization is not None else ctx.target
    return ctx.draft


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None:
        return
    item = ctx.spec.item("--speculative-draft-model-quantization")  # not a modeled flag: read as written
    if item is None or not item.values or item.values[-1].lower() != UNQUANT:
        return
    checkpoint = _draft_checkpoint(ctx)
    if checkpoint is None or checkpoint.quantization is None:
        return
    method = checkpoint.quantization
    if method.lower() in MODEL_CLASS_DECIDES:
        return
    draft_flag = ctx.flag("--speculative-draft-model-quantization")
    yield RULE.finding(
        f"{draft_flag} unquant does not unquantize this draft: SGLang {ctx.env.sglang_version} reads 'unquant' as "
        f"no method, and a draft with no method takes the one its checkpoint declares, so the draft loads as "
        f"{method} (its config.json has quantization_config.quant_method={method}). Reported with a GPTQ Qwen3.5 "
        f"checkpoint whose MTP draft still loaded 'quant=gptq' and accepted fewer tokens "
        f"(sgl-project/sglang#34622). To run the draft unquantized, point {ctx.flag('--speculative-draft-model-path')} "
        f"at an unquantized copy of the draft weights; otherwise drop {draft_flag} unquant, which does nothing here",
        flags=("--speculative-draft-model-quantization",),
    )


RULE = Rule(
    check=check,
    code="QT080",
    category=Category.PERF,
    name="draft-unquant-overridden-by-checkpoint",
    summary="--speculative-draft-model-quantization unquant is a no-op when the draft checkpoint declares a quantization",
    severity=Severity.WARNING,
    sglang_versions=">=0.5.7",
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="Fires when `--speculative-draft-model-quantization unquant` is given and the checkpoint the draft "
        "loads from declares a `quantization_config` in its config.json: the target's own checkpoint for MTP/NEXTN "
        "(no draft path, or the target's path), else the draft's. Not for ModelOpt or Quark checkpoints, whose MTP "
        "draft classes drop the quantization of BF16 MTP layers themselves.",
        why="SGLang resolves `unquant` to None before building the draft's ModelConfig (0.5.7 "
        "`server_args.py:776-777`, 0.5.17 `:4092-4093`, 0.5.23 `arg_groups/serving_hook.py:704-709`), and a "
        "draft ModelConfig with no method adopts the one its checkpoint declares (0.5.17 "
        "`configs/model_config.py:1451-1477`). The draft then loads quantized anyway: with "
        "Qwen/Qwen3.5-35B-A3B-GPTQ-Int4 and NEXTN the log still says `type=Qwen3_5ForCausalLMMTP, quant=gptq` "
        "and the accept length falls from about 3.5 to below 3 (sgl-project/sglang#34622, an open fix). A "
        "model class can still drop its own quantization (Qwen3.5's MTP ignores a serialized NVFP4 config), "
        "but not because of this flag.",
        fix="Serve the draft from an unquantized copy of its weights, or drop the flag: it changes nothing for a "
        "checkpoint that declares its quantization.",
        fix_safety="No automatic fix: the way out is a different checkpoint.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen3.5-35B-A3B-GPTQ-Int4", "--quantization", "moe_wna16",
              "--speculative-algorithm", "NEXTN", "--speculative-draft-model-quantization", "unquant",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"),
        target={"architectures": ("Qwen3_5MoeForConditionalGeneration",), "quantization": "gptq"},
        sglang_version="0.5.17",
    ),
    good=Example(
        argv=("--model-path", "/models/Qwen3-32B-w8a8", "--quantization", "modelslim",
              "--speculative-draft-model-quantization", "unquant",
              "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/models/Qwen3-32B-eagle3"),
        target={"architectures": ("Qwen3ForCausalLM",), "quantization": "modelslim"},
        draft={"architectures": ("LlamaForCausalLMEagle3",)},
        sglang_version="0.5.9",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/pull/34622 (Qwen3.5-35B-A3B-GPTQ-Int4 NEXTN: 'unquant' not taking effect, draft loads quant=gptq)",
        "https://github.com/sgl-project/sglang/pull/38748 (the same detected-quantization branch silently overrode an explicit draft method)",
        "sglang 0.5.7: python/sglang/srt/server_args.py:776-777 ('unquant' -> None)",
        "sglang 0.5.17: python/sglang/srt/server_args.py:4092-4093; configs/model_config.py:1451-1477",
        "sglang 0.5.23: python/sglang/srt/arg_groups/serving_hook.py:704-709; configs/model_config.py (same branch)",
    ),
)
