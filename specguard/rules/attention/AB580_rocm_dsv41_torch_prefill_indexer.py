"""AB580 rocm-dsv41-torch-prefill-indexer."""

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
from specguard.rules.draft_model.DM302_deepseek_v41_speculation_refused import (
    V41_ARCHITECTURES,
    V41_MODEL_TYPE,
)
from specguard.rules.examples import DEEPSEEK_V4_FLASH_DSPARK

TORCH_INDEXER = "SGLANG_DSV41_TORCH_PREFILL_INDEXER"
# The DeepSeek-V4 model override sets --attention-backend dsv4 (0.5.22 arg_groups/model_overrides/deepseek_v4.py:24),
# which the registry builds as DeepseekV4HipRadixBackend on HIP (layers/attention/attention_registry.py:182-198);
# "compressed" is its deprecated alias (arg_groups/serving_hook.py:296-309).
DSV4_BACKENDS = ("dsv4", "compressed")

# What SGLang prints (0.5.22 layers/attention/deepseek_v4_backend_hip_radix.py:3252-3256):
#   NotImplementedError: SGLANG_DSV41_TORCH_PREFILL_INDEXER (the torch prefill indexer oracle) is not supported on HIP


def check(ctx: CheckContext) -> Iterator[Finding]:
    target, gpu = ctx.target, ctx.env.gpu
    # The raise does not depend on speculation; specguard judges speculative launches, so it is reported for them.
    if (
        ctx.algorithm is None
        or gpu is None
        or gpu.platform != "rocm"
        or not ctx.spec.env_flag(TORCH_INDEXER)
    ):
        return
    if (
        target is None
        or target.model_type != V41_MODEL_TYPE
        or target.architecture not in V41_ARCHITECTURES
    ):
        return
    typed = ctx.spec.get("attention_backend")
    if typed is not None and typed not in DSV4_BACKENDS:
        return  # another backend than the HIP radix one; whatever it does, it is not this raise
    yield RULE.finding(
        f"{TORCH_INDEXER}=1 with a DeepSeek-V4.1 target (config.json model_type {V41_MODEL_TYPE}) on {gpu.name} "
        f"(ROCm) in SGLang {ctx.version}: the HIP DeepSeek-V4 backend refuses the torch prefill indexer, so the first "
        "prefill batch raises 'NotImplementedError: SGLANG_DSV41_TORCH_PREFILL_INDEXER (the torch prefill indexer "
        f"oracle) is not supported on HIP' once the server takes requests. Unset {TORCH_INDEXER} (off by default), "
        "or use SGLang 0.5.23, which drops the refusal",
        flags=("--model-path",),
        fix=fix_of(
            f"unset {TORCH_INDEXER}",
            Applicability.UNSAFE,
            Edit(target="env", name=TORCH_INDEXER, value=None),
        ),
    )


V41_TARGET = {"architectures": ("DeepseekV4ForCausalLM",), "model_type": V41_MODEL_TYPE}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB580",
    category=Category.CRASH,
    name="rocm-dsv41-torch-prefill-indexer",
    summary="SGLANG_DSV41_TORCH_PREFILL_INDEXER=1 with a DeepSeek-V4.1 target on ROCm fails at the first prefill (0.5.22)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`SGLANG_DSV41_TORCH_PREFILL_INDEXER` set truthy with a DeepSeek-V4.1 target (config.json model_type "
        "deepseek_v41, architectures[0] DeepseekV4ForCausalLM or DeepseekV41ForCausalLM) on an AMD (ROCm) GPU, with "
        "the dsv4 attention backend the model override picks, SGLang 0.5.22, in a speculative launch (DeepSeek-V4.1 "
        "speculates with DSPARK, DM302). The same launch without speculation fails the same way; specguard judges "
        "speculative launches, so it stays quiet there.",
        why="On HIP the dsv4 backend is `DeepseekV4HipRadixBackend` (0.5.22 layers/attention/attention_registry.py:"
        "182-198). 0.5.22 gives it its own low-ratio indexer, `_low_ratio_index_topk`, which every ratio-1/2 layer "
        "(the V4.1 compression ratios; only the V4.1 config accepts them, configs/deepseek_v41.py:43-44) runs before "
        "its attention (models/deepseek_v4.py:2134-2150, layers/attention/deepseek_v4_backend.py:2972-3029); on an "
        "extend batch it raises NotImplementedError when the variable is set "
        "(deepseek_v4_backend_hip_radix.py:3226-3262). 0.5.21's HIP backend has no override: the shared V4.1 indexer "
        "honours the variable (layers/attention/dsv4/v41_indexer/__init__.py:70). 0.5.23 drops the raise "
        "(deepseek_v4_backend_hip_radix.py:3496-3503) and the variable itself (no longer in environ.py).",
        fix=f"Unset `{TORCH_INDEXER}` (default off), or use SGLang 0.5.23.",
        fix_safety="Unsafe: the prefill indexer becomes the HIP kernel instead of the torch reference the variable asked for.",
    ),
    bad=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK,
        target=V41_TARGET,
        env={TORCH_INDEXER: "1"},
        gpu="MI355X",
        sglang_version="0.5.22",
    ),
    good=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK,
        target=V41_TARGET,
        env={TORCH_INDEXER: "1"},
        gpu="MI355X",
        sglang_version="0.5.23",
    ),
    sources=(
        "sglang 0.5.21: python/sglang/srt/layers/attention/dsv4/v41_indexer/__init__.py:70 (the HIP backend has no override)",
        "sglang 0.5.22: python/sglang/srt/layers/attention/deepseek_v4_backend_hip_radix.py:3226-3262",
        (
            "sglang 0.5.22: python/sglang/srt/layers/attention/attention_registry.py:182-198; "
            "arg_groups/model_overrides/deepseek_v4.py:24; configs/deepseek_v41.py:43-44"
        ),
        "sglang 0.5.22: python/sglang/srt/models/deepseek_v4.py:2134-2150; layers/attention/deepseek_v4_backend.py:2972-3029",
        "sglang 0.5.23: python/sglang/srt/layers/attention/deepseek_v4_backend_hip_radix.py:3496-3503 (no raise)",
    ),
    sglang_versions="==0.5.22",
    log_signatures=(
        r"SGLANG_DSV41_TORCH_PREFILL_INDEXER \(the torch prefill indexer oracle\) is not supported on HIP",
    ),
)
