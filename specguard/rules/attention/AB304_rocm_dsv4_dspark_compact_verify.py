"""AB304 rocm-dsv4-dspark-compact-verify."""

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
from specguard.rules.examples import DEEPSEEK_V4_FLASH_DSPARK
from specguard.rules.spec_params._ragged_verify import RAGGED, unset_ragged
from specguard.sglang_facts.architectures import DSV4_ARCHITECTURES


def check(ctx: CheckContext) -> Iterator[Finding]:
    # Compact mode always hands verify a ragged layout (dspark_planner.py: the verify-all cache or the uniform
    # fallback); cap-accept only when the confidence budget schedules one, so it stays unchecked.
    if ctx.algorithm != "DSPARK" or ctx.spec.env_value(RAGGED) != "compact":
        return
    gpu = ctx.env.gpu
    if gpu is None or gpu.platform != "rocm":
        return
    if ctx.target is None or ctx.target.architecture not in DSV4_ARCHITECTURES:
        return
    yield RULE.finding(
        f"DSPARK on a DeepSeek-V4 target on ROCm ({gpu.name}) with {RAGGED}=compact in SGLang {ctx.version}: the "
        "HIP DeepSeek-V4 attention backend raises 'DSV4 ragged verify is not supported on the HIP backend "
        "(DeepseekV4HipRadixBackend)' at the first verify batch, so the server dies once it serves. Unset "
        f"{RAGGED} (static verify), or use SGLang 0.5.18 or later",
        flags=("--speculative-algorithm",),
        fix=unset_ragged(),
    )


DSV4 = {"architectures": ("DeepseekV4ForCausalLM",)}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB304",
    category=Category.CRASH,
    name="rocm-dsv4-dspark-compact-verify",
    summary="DSPARK on a DeepSeek-V4 target on ROCm with SGLANG_RAGGED_VERIFY_MODE=compact crashes at the first "
    "verify (0.5.16-0.5.17)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` on a target whose config.json architectures[0] is a DeepSeek-V4 class, "
        "on an AMD (ROCm) GPU, with `SGLANG_RAGGED_VERIFY_MODE=compact`, SGLang 0.5.16-0.5.17. An unknown GPU or "
        "target keeps it quiet; cap-accept (a ragged layout only when the confidence budget schedules one) is not "
        "checked.",
        why="A DeepSeek-V4 target always runs the dsv4 attention backend (arg_groups/overrides.py:785-804), which on "
        "HIP is DeepseekV4HipRadixBackend (layers/attention/attention_registry.py:138-154). In 0.5.16 its target-"
        'verify metadata raises NotImplementedError "DSV4 ragged verify is not supported on the HIP backend '
        '(DeepseekV4HipRadixBackend); disable SGLANG_RAGGED_VERIFY_MODE or use a CUDA device." whenever the batch '
        "carries a ragged verify layout, eager and in the CUDA-graph replay (deepseek_v4_backend_hip_radix.py:"
        "866-872, :960-965); the DSPARK planner gives compact mode a layout on every verify "
        "(speculative/dspark_components/dspark_planner.py:419-461). 0.5.17 is the same (:864-870, :958-963). "
        "0.5.18 builds the ragged metadata instead (:931-937, :1026-1032). 0.5.15.post1 has no DSPARK.",
        fix="Unset `SGLANG_RAGGED_VERIFY_MODE` (static verify), or upgrade to SGLang 0.5.18.",
        fix_safety="Unsafe: the verify schedule changes.",
    ),
    bad=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK,
        target=DSV4,
        env={RAGGED: "compact"},
        gpu="MI355X",
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=DEEPSEEK_V4_FLASH_DSPARK,
        target=DSV4,
        env={RAGGED: "compact"},
        gpu="MI355X",
        sglang_version="0.5.18",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/speculative/ (no dspark_components; no DSPARK)",
        (
            "sglang 0.5.16: python/sglang/srt/layers/attention/deepseek_v4_backend_hip_radix.py:866-872,960-965; "
            "attention_registry.py:138-154; arg_groups/overrides.py:785-804; "
            "speculative/dspark_components/dspark_planner.py:419-461"
        ),
        "sglang 0.5.17: python/sglang/srt/layers/attention/deepseek_v4_backend_hip_radix.py:864-870,958-963",
        "sglang 0.5.18: python/sglang/srt/layers/attention/deepseek_v4_backend_hip_radix.py:931-937,1026-1032",
    ),
    sglang_versions=">=0.5.16,<=0.5.17",
    log_signatures=(r"DSV4 ragged verify is not supported on the HIP backend",),
)
