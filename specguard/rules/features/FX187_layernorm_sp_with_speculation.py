"""FX187 layernorm-sp-with-speculation."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import QWEN3_32B_TP4_EAGLE3

LAYERNORM_SP = "--enable-layernorm-sp"
QWEN3_TP4 = ("--model-path", "Qwen/Qwen3-32B", "--tp-size", "4")


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or not ctx.spec.has(LAYERNORM_SP):
        return
    yield RULE.finding(
        f"{ctx.flag(LAYERNORM_SP)} with {ctx.algorithm} in SGLang {ctx.version}: LayerNorm sequence parallelism "
        "refuses every speculative algorithm at argument time (ValueError '--enable-layernorm-sp is not "
        "compatible with speculative decoding (EAGLE/EAGLE3): the captured aux hidden states would be "
        f"sequence-sharded.'). Drop {ctx.flag(LAYERNORM_SP)} to speculate",
        flags=(LAYERNORM_SP, "--speculative-algorithm"),
    )


RULE = Rule(
    check=check,
    code="FX187",
    category=Category.START,
    name="layernorm-sp-with-speculation",
    summary="--enable-layernorm-sp with any speculative algorithm is refused at argument time (0.5.19-0.5.22)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--enable-layernorm-sp` with any `--speculative-algorithm`, SGLang 0.5.19 to 0.5.22 (0.5.23 lets "
        "Muse Spark with DFLASH through: FX188).",
        why="0.5.19 added LayerNorm sequence parallelism (prefill activations sharded across the TP group). "
        "`handle_layernorm_sp` runs after the speculative hook (pipeline.py:319-324) and `validate_layernorm_sp` "
        "raises for any algorithm: 'the captured aux hidden states would be sequence-sharded' "
        "(layernorm_sp_hook.py:58-63), after its architecture (Qwen3ForCausalLM only), tp > 1 and DP-attention "
        "checks, which refuse the flag on other launches anyway. Unchanged to 0.5.22 (layernorm_sp_hook.py:61-66); "
        "0.5.18 has no such flag.",
        fix="Drop `--enable-layernorm-sp` (a prefill communication optimisation) to keep speculative decoding.",
        fix_safety="No automatic fix: the user chooses between sequence parallelism and speculation.",
    ),
    bad=Example(
        argv=(*QWEN3_32B_TP4_EAGLE3, LAYERNORM_SP),
        target={"architectures": ("Qwen3ForCausalLM",)},
        sglang_version="0.5.19",
    ),
    good=Example(
        argv=(*QWEN3_TP4, LAYERNORM_SP),
        target={"architectures": ("Qwen3ForCausalLM",)},
        sglang_version="0.5.19",
    ),
    sources=(
        "sglang 0.5.18: python/sglang/srt/server_args.py (no enable_layernorm_sp)",
        "sglang 0.5.19: python/sglang/srt/server_args.py:1127-1135 (the flag)",
        "sglang 0.5.19: python/sglang/srt/arg_groups/layernorm_sp_hook.py:14-29,32-63",
        "sglang 0.5.19: python/sglang/srt/arg_groups/pipeline.py:319-324",
        "sglang 0.5.22: python/sglang/srt/arg_groups/layernorm_sp_hook.py:61-66",
        "sglang 0.5.23: python/sglang/srt/arg_groups/layernorm_sp_hook.py:178-185 (narrowed: FX188)",
    ),
    sglang_versions=">=0.5.19,<=0.5.22",
    log_signatures=(
        r"--enable-layernorm-sp is not compatible with speculative decoding",
    ),
)
