"""AB433 dsv4-trtllm-attention-refused-setup."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import (
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
from specguard.sglang_facts.changes import Change

# SGLang asserts at argument time (0.5.20 arg_groups/deepseek_v4_hook.py:137-176), e.g.
# "--dsv4-attn-backend trtllm requires an SM100/SM103 (Blackwell) GPU."
# "--dsv4-attn-backend trtllm requires kv_cache_dtype=fp8_e4m3, got bfloat16."
# "--dsv4-attn-backend trtllm does not support enable_hisparse."
# "--dsv4-attn-backend trtllm does not support context parallelism (prefill CP, attention CP, or decode CP)."
# "--dsv4-attn-backend trtllm does not support PD disaggregation yet"
# "--dsv4-attn-backend trtllm requires chunked prefill (--chunked-prefill-size > 0)."
# and for DeepSeek-V4.1 raises (0.5.21 deepseek_v4_hook.py:223-231, 0.5.22 :268-284, 0.5.23 :342-352):
# "DeepSeek-V4.1 does not support the trtllm DSv4 attention backend yet; disable it to serve this model."
# "DeepSeek-V4.1 does not support TRT-LLM with SWA bounded replay yet; ..." (0.5.22),
# "DeepSeek-V4.1 does not support TRT-LLM with encoder SWA bounded replay yet; ..." (0.5.23).
BACKEND = "--dsv4-attn-backend"
DECODER_REPLAY = "--enable-decoder-swa-bounded-replay"
ENCODER_REPLAY = "--enable-encoder-swa-bounded-replay"
TRTLLM_KV_DTYPES = ("auto", "fp8_e4m3")

V41_SERVED = Change(
    "0.5.21",
    "0.5.21 configs/deepseek_v41.py maps model_type deepseek_v41 and DeepseekV41ForCausalLM onto the V4 class "
    "and deepseek_v4_hook.py:169 validates it (0.5.20 has no deepseek_v41)",
)
V41_TRTLLM_ACCEPTED = Change(
    "0.5.22",
    "0.5.22 deepseek_v4_hook.py:268-275 refuses TRT-LLM for V4.1 only with SWA bounded replay "
    "(0.5.21 :223 refused the trtllm backend outright)",
)
V41_TRTLLM_DECODER_REPLAY_ACCEPTED = Change(
    "0.5.23",
    "0.5.23 deepseek_v4_hook.py:340-343 keeps only encoder SWA bounded replay refused with TRT-LLM",
)


def _int_value(ctx: CheckContext, flag: str) -> int | None:
    value = ctx.spec.last_value(flag)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _base_refusals(ctx: CheckContext) -> list[tuple[str, str | None]]:
    """(what, flag) of each setting the trtllm DeepSeek-V4 backend asserts against, as the launch shows it."""
    found: list[tuple[str, str | None]] = []
    gpu = ctx.env.gpu
    if gpu is not None and (
        gpu.platform != "cuda"
        or gpu.compute_capability is None
        or gpu.compute_capability[0] != 10
    ):
        found.append((f"a GPU other than SM100/SM103 ({gpu.name})", None))
    kv_dtype = ctx.spec.last_value("--kv-cache-dtype")
    if kv_dtype is not None and kv_dtype not in TRTLLM_KV_DTYPES:
        found.append(
            (
                f"{ctx.flag('--kv-cache-dtype')} {kv_dtype} (needs fp8_e4m3)",
                "--kv-cache-dtype",
            )
        )
    if ctx.spec.has("--enable-hisparse"):
        found.append((ctx.flag("--enable-hisparse"), "--enable-hisparse"))
    for flag in ("--attn-cp-size", "--dcp-size"):
        size = _int_value(ctx, flag)
        if size is not None and size > 1:
            found.append((f"{ctx.flag(flag)} {size} (context parallelism)", flag))
    if ctx.spec.has("--enable-prefill-cp"):
        found.append(
            (
                f"{ctx.flag('--enable-prefill-cp')} (context parallelism)",
                "--enable-prefill-cp",
            )
        )
    mode = ctx.spec.last_value("--disaggregation-mode")
    if mode in ("prefill", "decode"):
        found.append(
            (
                f"{ctx.flag('--disaggregation-mode')} {mode} (PD disaggregation)",
                "--disaggregation-mode",
            )
        )
    chunk = _int_value(ctx, "--chunked-prefill-size")
    if chunk is not None and chunk <= 0:
        found.append(
            (
                f"{ctx.flag('--chunked-prefill-size')} {chunk} (needs chunked prefill)",
                "--chunked-prefill-size",
            )
        )
    return found


def _v41_refusals(ctx: CheckContext) -> list[tuple[str, str | None]]:
    """(what, flag) of what DeepSeek-V4.1 refuses together with the trtllm backend in this release."""
    if ctx.target is None or ctx.target.model_type != V41_MODEL_TYPE:
        return []
    if not V41_TRTLLM_ACCEPTED.present_in(ctx.version):
        return [("DeepSeek-V4.1 (no trtllm backend for its ratio-1/2 layers)", None)]
    replay = [ENCODER_REPLAY]
    if not V41_TRTLLM_DECODER_REPLAY_ACCEPTED.present_in(ctx.version):
        replay.append(DECODER_REPLAY)
    return [
        (f"DeepSeek-V4.1 with {ctx.flag(flag)}", flag)
        for flag in replay
        if ctx.spec.has(flag)
    ]


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or ctx.spec.last_value(BACKEND) != "trtllm":
        return
    if ctx.target is None or ctx.target.architecture not in V41_ARCHITECTURES:
        return
    is_v41 = (
        ctx.target.model_type == V41_MODEL_TYPE
        or ctx.target.architecture != "DeepseekV4ForCausalLM"
    )
    if is_v41 and not V41_SERVED.present_in(ctx.version):
        return  # 0.5.20 does not serve V4.1 as the V4 class, so its trtllm asserts never run for it
    found = [*_base_refusals(ctx), *_v41_refusals(ctx)]
    if not found:
        return
    yield RULE.finding(
        f"{ctx.flag(BACKEND)} trtllm in SGLang {ctx.version} refuses "
        f'{"; ".join(what for what, _ in found)}: argument checking raises ("--dsv4-attn-backend trtllm requires '
        '..." / "does not support ...", or "DeepSeek-V4.1 does not support ...") and the server does not '
        f"start. Drop {ctx.flag(BACKEND)} trtllm (auto resolves to flashmla) or change the "
        "settings named",
        flags=(BACKEND, *(flag for _, flag in found if flag)),
        fix=fix_of(
            f"drop {BACKEND} trtllm (flashmla)",
            Applicability.UNSAFE,
            Edit(name=BACKEND, value=None),
        ),
    )


_DSV4_TARGET = {
    "architectures": ("DeepseekV4ForCausalLM",),
    "model_type": "deepseek_v4",
}

RULE = Rule(
    check=check,
    code="AB433",
    category=Category.START,
    name="dsv4-trtllm-attention-refused-setup",
    summary="--dsv4-attn-backend trtllm on a DeepSeek-V4 target refuses non-Blackwell GPUs, non-FP8 KV, HiSparse, "
    "context parallelism, PD and unchunked prefill, and (V4.1) SWA bounded replay (0.5.20+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="A speculative launch on a DeepSeek-V4 target (architectures[0] DeepseekV4ForCausalLM, or V4.1's "
        "DeepseekV41ForCausalLM) with `--dsv4-attn-backend trtllm` and any of: a known GPU that is not CUDA "
        "SM100/SM103, `--kv-cache-dtype` other than auto/fp8_e4m3, `--enable-hisparse`, `--attn-cp-size` or "
        "`--dcp-size` above 1 or `--enable-prefill-cp`, `--disaggregation-mode` prefill/decode, "
        "`--chunked-prefill-size` 0 or below; for a config.json model_type deepseek_v41 also the backend itself "
        "(0.5.21), `--enable-encoder-swa-bounded-replay` or `--enable-decoder-swa-bounded-replay` (0.5.22), "
        "`--enable-encoder-swa-bounded-replay` (0.5.23). A V4.1 checkpoint on 0.5.20, which has no deepseek_v41 "
        "config, is left to other rules.",
        why="0.5.20 added the opt-in trtllm DeepSeek-V4 backend (arg_groups/fields/exec_.py:241-253; no such flag "
        "in 0.5.19) and `apply_deepseek_v4_defaults` asserts its requirements for every DeepseekV4ForCausalLM "
        "launch (0.5.20 arg_groups/deepseek_v4_hook.py:137-176, after the memory hook has filled "
        "--chunked-prefill-size in, arg_groups/pipeline.py:234); the same asserts hold in 0.5.21 :45-82, 0.5.22 "
        ":51-88 and 0.5.23 :101-134. `validate_deepseek_v41_features` refuses the backend for V4.1 in 0.5.21 "
        "(:223), only with encoder or decoder SWA bounded replay in 0.5.22 (:268-275), and only with encoder replay "
        "in 0.5.23 (:340-343).",
        fix="Drop `--dsv4-attn-backend trtllm` (auto resolves to flashmla), or change the settings it refuses.",
        fix_safety="Unsafe: another attention kernel and KV layout run.",
    ),
    bad=Example(
        argv=(*DEEPSEEK_V4_FLASH_DSPARK, BACKEND, "trtllm"),
        target=_DSV4_TARGET,
        gpu="H200",
        sglang_version="0.5.20",
    ),
    good=Example(
        argv=(*DEEPSEEK_V4_FLASH_DSPARK, BACKEND, "trtllm"),
        target=_DSV4_TARGET,
        gpu="B200",
        sglang_version="0.5.20",
    ),
    sources=(
        "sglang 0.5.19: python/sglang/srt/arg_groups/ (no --dsv4-attn-backend)",
        "sglang 0.5.20: python/sglang/srt/arg_groups/deepseek_v4_hook.py:137-176; python/sglang/srt/arg_groups/fields/exec_.py:241-253; python/sglang/srt/arg_groups/pipeline.py:234",
        "sglang 0.5.21: python/sglang/srt/arg_groups/deepseek_v4_hook.py:45-82, 223-231",
        "sglang 0.5.22: python/sglang/srt/arg_groups/deepseek_v4_hook.py:51-88, 268-284",
        "sglang 0.5.23: python/sglang/srt/arg_groups/deepseek_v4_hook.py:101-134, 340-352",
    ),
    sglang_versions=">=0.5.20",
    log_signatures=(
        r"--dsv4-attn-backend trtllm (requires|does not support)",
        r"DeepSeek-V4\.1 does not support (the trtllm DSv4 attention backend|TRT-LLM with (encoder )?SWA bounded replay)",
    ),
)
