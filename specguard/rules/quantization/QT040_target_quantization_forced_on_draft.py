"""QT040 target-quantization-forced-on-draft."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.sglang_facts.algorithms import DRAFT_CHECKPOINT_ALGORITHMS
from specguard.sglang_facts.changes import DRAFT_QUANTIZATION_FLAG

# Quantization methods whose loader needs the checkpoint's own quantization config: with none in
# config.json, ``get_quant_config`` looks for the files the method's ``get_config_filenames()``
# names and raises ``ValueError("Cannot find the config file for <method>")`` when none is there
# (sglang 0.5.9 ``model_loader/weight_utils.py:234-248``, 0.5.23 :389). Methods that quantize a
# bf16 checkpoint online (fp8, w8a8_fp8, fbgemm_fp8, mxfp4, ...) return no file names and are not
# listed: they load the draft, quantized. Read in 0.5.9 ``layers/quantization/``: awq.py:142,
# 247; gptq.py:207, 350; marlin_utils.py; moe_wna16.py; auto_round.py; modelopt_quant.py:308;
# petit.py; modelslim/modelslim.py:127 (quant_model_description.json); qoq.py:79; the same in
# 0.5.23 (awq/awq.py:119, 311; gptq/gptq.py:143, 390; modelslim/modelslim.py:250). modelopt_fp4 is
# left out: 0.5.23 quantizes a draft without its config online instead of failing
# (weight_utils.py:383-388).
NEEDS_CHECKPOINT_CONFIG = frozenset(
    {
        "awq",
        "awq_marlin",
        "gptq",
        "gptq_marlin",
        "marlin",
        "moe_wna16",
        "auto-round",
        "modelopt",
        "modelopt_fp8",
        "petit_nvfp4",
        "modelslim",
        "qoq",
    }
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in DRAFT_CHECKPOINT_ALGORITHMS:
        return
    method = ctx.spec.get("quantization")
    if not method or method.lower() not in NEEDS_CHECKPOINT_CONFIG:
        return
    if ctx.drafts_from_target_checkpoint:
        return  # the draft is the target's own checkpoint (MTP): it carries the same config
    if ctx.spec.has("--speculative-draft-model-quantization"):
        return  # the user chose the draft's quantization
    if ctx.draft is not None and ctx.draft.quantization is not None:
        return  # the draft carries its own quantization config, which SGLang detects
    quant_flag = ctx.flag("--quantization")
    if ctx.version >= DRAFT_QUANTIZATION_FLAG.release:
        draft_flag = ctx.flag("--speculative-draft-model-quantization")
        yield RULE.finding(
            f"{quant_flag} {method} also applies to the draft ({draft_flag} defaults to the target's "
            f"method), and the draft's config.json has no quantization_config: unless the draft directory "
            f"holds its own {method} config file, loading it fails with 'Cannot find the config file for "
            f"{method}' after the target has loaded. Add {draft_flag} unquant for an unquantized draft",
            flags=("--speculative-draft-model-quantization", "--quantization"),
            fix=fix_of(
                "load the draft unquantized",
                Applicability.UNSAFE,
                Edit(name="--speculative-draft-model-quantization", value="unquant"),
            ),
        )
        return
    yield RULE.finding(
        f"{quant_flag} {method} also applies to the draft in SGLang {ctx.env.sglang_version} (there is no "
        f"--speculative-draft-model-quantization before {DRAFT_QUANTIZATION_FLAG.release}), and the draft's "
        f"config.json has no quantization_config: loading it fails with 'Cannot find the config file for "
        f"{method}' after the target has loaded. Drop {quant_flag} (SGLang reads the target's method from "
        f"its own config) or upgrade to {DRAFT_QUANTIZATION_FLAG.release}",
        flags=("--quantization",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own code path; sgl-jax has its own
    check=check,
    code="QT040",
    category=Category.START,
    name="target-quantization-forced-on-draft",
    summary="An explicit --quantization that needs a checkpoint config is applied to an unquantized draft",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="Fires when `--quantization` names a method that loads its parameters from the checkpoint "
        "(AWQ, GPTQ, Marlin, ModelOpt FP8, ModelSlim, ...), a separate draft is given, "
        "`--speculative-draft-model-quantization` is not, and the draft's config.json has no "
        "`quantization_config`.",
        why="SGLang gives the draft the target's `--quantization` unless "
        "`--speculative-draft-model-quantization` says otherwise (0.5.7+: `server_args.py` "
        "`speculative_draft_model_quantization = self.quantization`; before 0.5.7 the draft's ModelConfig "
        "always took `server_args.quantization`). The draft's loader then looks for that method's config "
        "file and raises `Cannot find the config file for <method>` after the target has loaded "
        "(reported with `--quantization modelslim` and a bf16 DFlash draft, sgl-project/sglang#35629, fixed "
        "by `--speculative-draft-model-quantization unquant`). When `--quantization` is left out, SGLang "
        "detects each checkpoint's own method and nothing fails. A warning, not an error: a draft directory "
        "can hold the method's config in a separate file (quantize_config.json, "
        "quant_model_description.json) that config.json does not show.",
        fix="0.5.7 and later: `--speculative-draft-model-quantization unquant`. Earlier: drop "
        "`--quantization` and let SGLang read the target's method from its config.",
        fix_safety="Unsafe: it changes how the draft is loaded.",
    ),
    bad=Example(
        argv=("--model-path", "/models/Qwen3-32B-w8a8", "--quantization", "modelslim",
              "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/models/Qwen3-32B-eagle3"),
        draft={"architectures": ("LlamaForCausalLMEagle3",)},
        sglang_version="0.5.9",
    ),
    good=Example(
        argv=("--model-path", "/models/Qwen3-32B-w8a8", "--quantization", "modelslim",
              "--speculative-draft-model-quantization", "unquant",
              "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/models/Qwen3-32B-eagle3"),
        draft={"architectures": ("LlamaForCausalLMEagle3",)},
        sglang_version="0.5.9",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/pull/35629 (Ascend W8A8 + DFlash: 'Cannot find the config file for modelslim' until --speculative-draft-model-quantization unquant)",
        "https://github.com/sgl-project/sglang/pull/14820 (adds --speculative-draft-model-quantization)",
        "sglang 0.5.7: python/sglang/srt/server_args.py:432, 772-777",
        "sglang 0.5.9: python/sglang/srt/model_loader/weight_utils.py:179-248 (get_quant_config)",
        "sglang 0.5.9: python/sglang/srt/configs/model_config.py:933-941 (a draft's own quant_method wins when it has one)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/serving_hook.py:675-708; model_loader/weight_utils.py:389",
    ),
)
