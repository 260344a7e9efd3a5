"""AB461 exaone-sliding-window-backend."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)

# The architectures of the Exaone branch from 0.5.22 (arg_groups/model_hook.py:662-666).
EXAONE_ARCHITECTURES = frozenset(
    {"Exaone4ForCausalLM", "ExaoneMoEForCausalLM", "ExaoneMoeForCausalLM"}
)
# The backends the assert accepts (0.5.22 arg_groups/model_hook.py:671; 0.5.23 :677).
ACCEPTED_BACKENDS = ("fa3", "triton", "trtllm_mha")
FLAG = "--attention-backend"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm is None
        or ctx.target is None
        or ctx.target.architecture not in EXAONE_ARCHITECTURES
    ):
        return
    backend = ctx.spec.last_value(FLAG)
    if backend is None or backend in ACCEPTED_BACKENDS:
        return  # untyped: _exaone_overrides picks trtllm_mha, fa3 or triton
    yield RULE.finding(
        f"{ctx.flag(FLAG)} {backend} on {ctx.target.architecture} in SGLang {ctx.version}: its config has a sliding-window "
        "pattern, and SGLang asserts \"One of the attention backends in ['fa3', 'triton', 'trtllm_mha'] is required for "
        f'{ctx.target.architecture}, but got {backend}" while it reads the arguments, before anything loads. Use '
        f"{ctx.flag(FLAG)} fa3 (Hopper and Ampere), trtllm_mha (Blackwell) or triton, or drop the flag and let SGLang pick",
        flags=(FLAG,),
        fix=fix_of(
            f"drop {FLAG} (SGLang picks an accepted backend)",
            Applicability.UNSAFE,
            Edit(name=FLAG, value=None),
        ),
    )


EXAONE4_MTP = (
    "--model-path",
    "LGAI-EXAONE/EXAONE-4.0-32B",
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    "d",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)
EXAONE4 = {"architectures": ("Exaone4ForCausalLM",), "model_type": "exaone4"}

RULE = Rule(
    check=check,
    code="AB461",
    category=Category.START,
    name="exaone-sliding-window-backend",
    summary="An EXAONE 4 / EXAONE MoE target with an --attention-backend other than fa3, triton or trtllm_mha is refused at start (0.5.22+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="A speculative launch whose target's config.json `architectures[0]` is Exaone4ForCausalLM, "
        "ExaoneMoEForCausalLM or ExaoneMoeForCausalLM, with `--attention-backend` typed as anything but fa3, triton or "
        "trtllm_mha, SGLang 0.5.22 or later.",
        why="`handle_model_specific_adjustments` asserts, for these architectures whose hf_config has a "
        "`sliding_window_pattern`, that the resolved attention backend is fa3, triton or trtllm_mha (0.5.22 "
        "arg_groups/model_hook.py:662-675; 0.5.23 :668-681), while the server arguments are processed, e.g. "
        "`One of the attention backends in ['fa3', 'triton', 'trtllm_mha'] is required for Exaone4ForCausalLM, but got flashinfer`. "
        "0.5.22 adds "
        "the ExaoneMoeForCausalLM spelling (0.5.21 :627-636 lists Exaone4ForCausalLM and ExaoneMoEForCausalLM) and "
        "makes `_exaone_overrides` choose trtllm_mha on SM100, fa3 on SM80+ and triton otherwise when no backend is "
        "typed (arg_groups/model_overrides/exaone.py:15-30; 0.5.21 only turned hybrid SWA memory off), so only a "
        "typed backend reaches the assert. The pinned transformers 5.19.0 gives Exaone4Config and ExaoneMoeConfig "
        "`sliding_window_pattern = 4` by default and 0 when `sliding_window` is null, never None. Earlier releases "
        "run the same assert before any default backend is chosen, under other transformers pins; this rule does "
        "not judge them.",
        fix="Drop `--attention-backend` (SGLang picks an accepted one) or type fa3, triton or trtllm_mha.",
        fix_safety="Unsafe: the attention kernels change.",
    ),
    bad=Example(
        argv=(*EXAONE4_MTP, FLAG, "flashinfer"),
        target=EXAONE4,
        gpu="H100",
        sglang_version="0.5.22",
    ),
    good=Example(
        argv=(*EXAONE4_MTP, FLAG, "fa3"),
        target=EXAONE4,
        gpu="H100",
        sglang_version="0.5.22",
    ),
    sources=(
        "sglang 0.5.21: python/sglang/srt/arg_groups/model_hook.py:627-636; arg_groups/model_overrides/exaone.py (no default backend)",
        "sglang 0.5.22: python/sglang/srt/arg_groups/model_hook.py:140-167,662-675; arg_groups/model_overrides/exaone.py:15-30",
        "sglang 0.5.23: python/sglang/srt/arg_groups/model_hook.py:668-681; arg_groups/model_overrides/exaone.py:15-30",
        "transformers 5.19.0 (pinned by sglang 0.5.22 and 0.5.23): models/exaone4/configuration_exaone4.py:96-102",
        "transformers 5.19.0: models/exaone_moe/configuration_exaone_moe.py:102-103,128-129",
        "catalog: LGAI-EXAONE/EXAONE-4.0-32B config.json (sliding_window_pattern LLLG)",
    ),
    sglang_versions=">=0.5.22",
    log_signatures=(
        r"One of the attention backends in \[.*\] is required for Exaone\w*ForCausalLM, but got \w+",
    ),
)
