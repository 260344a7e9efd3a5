"""HY560 replayssm-spec-flag-conflicts."""

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
from specguard.rules.hybrid.HY480_replayssm_spec_tree_draft import (
    GDN_SPELLING,
    LINEAR_SPELLING_ADDED,
    replayssm_spec_switch,
)
from specguard.rules.spec_params._ragged_verify import RAGGED, RAGGED_MODES
from specguard.sglang_facts.algorithms import REPLAYSSM_KDA_FOLD_ALGORITHMS

BASE = "--linear-attn-backend"
DECODE = "--linear-attn-decode-backend"
VERIFY = "--linear-attn-verify-backend"
RADIX_STRATEGY = "--mamba-radix-cache-strategy"
DISAGGREGATION = "--disaggregation-mode"
OUTPUT_REPLAY = "--enable-linear-replayssm"
SSM_DTYPE = "--mamba-ssm-dtype"
CACHE_LEN = "--linear-replayssm-cache-len"
# SGLang's refusals, as printed (0.5.16 server_args.py:5381-5443; 0.5.17 :6181-6229):
#   "--enable-gdn-replayssm-spec requires the Triton linear-attn decode backend, got ..."
#   "--enable-gdn-replayssm-spec is not yet compatible with mamba extra_buffer (radix prefix caching); ..."
#   "--enable-gdn-replayssm-spec is not supported under PD disaggregation yet (follow-up). Got ..."
#   "--linear-replayssm-cache-len must be >= 1, got ..."
#   "--enable-gdn-replayssm-spec and --enable-linear-replayssm are mutually exclusive: ..."
#   "--enable-gdn-replayssm-spec requires --mamba-ssm-dtype float32, got ..."
#   "--enable-linear-replayssm-spec requires the triton or flashinfer linear-attn decode backend, got ..."
#   "--enable-linear-replayssm-spec with SGLANG_RAGGED_VERIFY_MODE=compact requires the KDA fold-every-commit family ..."
#   "--enable-linear-replayssm-spec is not supported on a PD prefill server: ..."
#   "--enable-linear-replayssm-spec and --enable-linear-replayssm are mutually exclusive: ..."
# 0.5.16 server_args.py:7510-7514 enable_mamba_extra_buffer. "auto" (the default) is resolved before this check
# from the model, overlap schedule and page size (arg_groups/overrides.py:1190-1198); left quiet, as unknown here.
EXTRA_BUFFER_STRATEGIES = ("extra_buffer", "extra_buffer_lazy")
# 0.5.17 server_args.py:6181-6186: the decode kernels that write the ReplaySSM ring (0.5.16: triton only).
RING_DECODE_BACKENDS = ("triton", "flashinfer")
# is_sm100_supported: compute capability major 10 (0.5.17 utils/common.py:286-290).
SM100_MAJOR = 10
# 0.5.17 server_args.py:6187-6213: ragged ring-writes need the KDA fold-every-commit family
# (REPLAYSSM_KDA_FOLD_ALGORITHMS) and a ring-writing verify kernel; static (the default, environ.py:914) never
# reaches that check.
RAGGED_VERIFY_BACKENDS = ("triton", "nv_cutedsl")


def _decode_backend(ctx: CheckContext) -> str | None:
    """The linear-attn decode backend as argument handling computes it from the typed flags
    (0.5.16 server_args.py:5264, base default triton :2151-2157); flashkda inherited from the base falls
    back to triton (:5266-5283). None when a default may fill an unset one: with a typed bfloat16 SSM state on
    SM100 (or an unknown GPU) SGLang picks flashinfer (:5248-5257), or triton for a Kimi target from 0.5.17
    (arg_groups/kimi_k3_hook.py:87-103)."""
    typed = ctx.spec.last_value(DECODE)
    if typed is not None:
        return typed
    gpu = ctx.env.gpu
    sm100_or_unknown = (
        gpu is None
        or gpu.compute_capability is None
        or gpu.compute_capability[0] == SM100_MAJOR
    )
    if ctx.spec.last_value(SSM_DTYPE) == "bfloat16" and sm100_or_unknown:
        return None
    base = ctx.spec.last_value(BASE) or "triton"
    return "triton" if base == "flashkda" else base


def _gdn_form_conflicts(ctx: CheckContext, switch: str) -> Iterator[tuple[str, str]]:
    """0.5.16: (flag, SGLang's refusal) for each term _handle_linear_attn_backend refuses."""
    decode = _decode_backend(ctx)
    if decode is not None and decode != "triton":
        yield (
            DECODE,
            f"{switch} requires the Triton linear-attn decode backend, got --linear-attn-decode-backend={decode!r}.",
        )
    strategy = ctx.spec.last_value(RADIX_STRATEGY)
    if strategy in EXTRA_BUFFER_STRATEGIES and not ctx.spec.has(
        "--disable-radix-cache"
    ):
        yield (
            RADIX_STRATEGY,
            f"{switch} is not yet compatible with mamba extra_buffer (radix prefix caching)",
        )
    mode = ctx.spec.last_value(DISAGGREGATION)
    if mode not in (None, "null"):
        yield (
            DISAGGREGATION,
            f"{switch} is not supported under PD disaggregation yet (follow-up). Got --disaggregation-mode={mode!r}.",
        )
    written = ctx.spec.last_value(CACHE_LEN)
    length = (
        int(written) if written is not None and written.lstrip("-").isdigit() else None
    )
    if length is not None and length < 1:
        yield CACHE_LEN, f"--linear-replayssm-cache-len must be >= 1, got {length}."
    if ctx.spec.has(OUTPUT_REPLAY):
        yield (
            OUTPUT_REPLAY,
            f"{switch} and --enable-linear-replayssm are mutually exclusive",
        )
    dtype = ctx.spec.last_value(SSM_DTYPE)
    if dtype is not None and dtype != "float32":
        yield SSM_DTYPE, f"{switch} requires --mamba-ssm-dtype float32, got {dtype!r}."


def _linear_form_conflicts(ctx: CheckContext, switch: str) -> Iterator[tuple[str, str]]:
    """0.5.17 on: (flag, SGLang's refusal) for each term the ReplaySSM spec block refuses."""
    decode = _decode_backend(ctx)
    if decode is not None and decode not in RING_DECODE_BACKENDS:
        yield (
            DECODE,
            (
                f"{switch} requires the triton or flashinfer linear-attn decode backend, got "
                f"--linear-attn-decode-backend={decode!r}."
            ),
        )
    ragged = ctx.spec.env_value(RAGGED)
    verify = ctx.spec.last_value(VERIFY)
    # An unset verify backend may be filled by a model hook (Kimi: nv_cutedsl), so only a typed one counts.
    if ragged in RAGGED_MODES and (
        ctx.algorithm not in REPLAYSSM_KDA_FOLD_ALGORITHMS
        or (verify is not None and verify not in RAGGED_VERIFY_BACKENDS)
    ):
        yield (
            RAGGED,
            (
                f"{switch} with SGLANG_RAGGED_VERIFY_MODE={ragged} requires the KDA fold-every-commit family "
                "(DSPARK/DFLASH) and a ring-writing verify kernel (--linear-attn-verify-backend triton or nv_cutedsl)"
            ),
        )
    if ctx.spec.last_value(DISAGGREGATION) == "prefill":
        yield DISAGGREGATION, f"{switch} is not supported on a PD prefill server"
    if ctx.spec.has(OUTPUT_REPLAY):
        yield (
            OUTPUT_REPLAY,
            f"{switch} and --enable-linear-replayssm are mutually exclusive",
        )


def check(ctx: CheckContext) -> Iterator[Finding]:
    switch = replayssm_spec_switch(ctx)
    if switch is None:
        return
    # 0.5.17 keeps the gdn spelling as an alias of the renamed field, so its messages name the new switch.
    named = (
        "--enable-linear-replayssm-spec"
        if LINEAR_SPELLING_ADDED.present_in(ctx.version)
        else GDN_SPELLING
    )
    conflicts = (
        _linear_form_conflicts(ctx, named)
        if LINEAR_SPELLING_ADDED.present_in(ctx.version)
        else _gdn_form_conflicts(ctx, named)
    )
    for flag, refusal in conflicts:
        label = flag if flag == RAGGED else ctx.flag(flag)
        yield RULE.finding(
            f"{ctx.flag(switch)} with {label} in SGLang {ctx.version}: argument handling raises ValueError "
            f"'{refusal}' before the server starts. Drop {ctx.flag(switch)} (verify runs the recurrent kernel), "
            f"or change {label}",
            flags=(switch, flag),
            fix=fix_of(
                f"drop {switch}", Applicability.UNSAFE, Edit(name=switch, value=None)
            ),
        )


QWEN3_NEXT_MTP_CHAIN = (
    "--model-path",
    "Qwen/Qwen3-Next-80B-A3B-Instruct",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)
QWEN3_NEXT_FACTS = {"architectures": ("Qwen3NextForCausalLM",)}

RULE = Rule(
    check=check,
    code="HY560",
    category=Category.START,
    name="replayssm-spec-flag-conflicts",
    summary="ReplaySSM speculative verify with a flag it refuses (decode backend, PD mode, output-only ReplaySSM, "
    "ragged verify, extra_buffer or a 16-bit SSM dtype in 0.5.16) fails at argument time (0.5.16+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--enable-gdn-replayssm-spec` (0.5.16 to 0.5.19) or `--enable-linear-replayssm-spec` (0.5.17 on) "
        "together with a setting the switch refuses. 0.5.16: a linear-attn decode backend other than triton, "
        "`--mamba-radix-cache-strategy extra_buffer`/`extra_buffer_lazy` with the radix cache on, any "
        "`--disaggregation-mode`, `--linear-replayssm-cache-len` below 1, `--enable-linear-replayssm`, or a "
        "`--mamba-ssm-dtype` other than float32. From 0.5.17: a decode backend other than triton/flashinfer, "
        "`SGLANG_RAGGED_VERIFY_MODE` cap-accept/compact without DSPARK/DFLASH (or with a typed verify backend other "
        "than triton/nv_cutedsl), `--disaggregation-mode prefill`, or `--enable-linear-replayssm`. The topk and "
        "ring-length refusals are HY480 and HY481.",
        why="0.5.16 added ReplaySSM spec-verify with a block of ValueErrors in `_handle_linear_attn_backend` "
        "(server_args.py:5372-5443): Triton decode only, no mamba extra_buffer, no PD disaggregation, ring length "
        ">= 1, not with `--enable-linear-replayssm` (shared ring, incompatible cursors), and a float32 SSM "
        "checkpoint (an unset dtype is set to float32). 0.5.17 renamed the switch and relaxed the block "
        "(server_args.py:6172-6243): flashinfer decode, extra_buffer and PD decode are allowed, a PD prefill server "
        "is refused, a non-static SGLANG_RAGGED_VERIFY_MODE needs DSPARK/DFLASH with a triton or nv_cutedsl verify "
        "kernel, and a 16-bit SSM dtype only warns. From 0.5.19 the block lives in arg_groups/attention_hook.py "
        "(0.5.23 :451-519), unchanged. 0.5.15.post1 has no such switch.",
        fix="Drop the ReplaySSM spec switch, or change the conflicting setting.",
        fix_safety="Unsafe: verify falls back to the recurrent kernel, which changes speed and memory.",
    ),
    bad=Example(
        argv=(*QWEN3_NEXT_MTP_CHAIN, GDN_SPELLING, "--disaggregation-mode", "decode"),
        target=QWEN3_NEXT_FACTS,
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=(
            *QWEN3_NEXT_MTP_CHAIN,
            "--enable-linear-replayssm-spec",
            "--disaggregation-mode",
            "decode",
        ),
        target=QWEN3_NEXT_FACTS,
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/server_args.py (no enable_gdn_replayssm_spec)",
        "sglang 0.5.16: python/sglang/srt/server_args.py:2151-2157,5264-5283,5372-5443,7510-7514",
        "sglang 0.5.17: python/sglang/srt/server_args.py:6050-6069,6172-6243; speculative/ragged_verify.py:13-27; environ.py:914",
        "sglang 0.5.23: python/sglang/srt/arg_groups/attention_hook.py:310-333,451-519",
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(
        r"--enable-(gdn|linear)-replayssm-spec requires the (Triton|triton or flashinfer) linear-attn decode backend",
        r"--enable-gdn-replayssm-spec is not yet compatible with mamba extra_buffer",
        r"--enable-(gdn|linear)-replayssm-spec is not supported (under PD disaggregation|on a PD prefill server)",
        r"--enable-(gdn|linear)-replayssm-spec and --enable-linear-replayssm are mutually exclusive",
        r"--enable-gdn-replayssm-spec requires --mamba-ssm-dtype float32",
        r"--linear-replayssm-cache-len must be >= 1",
        r"--enable-linear-replayssm-spec with SGLANG_RAGGED_VERIFY_MODE=\S+ requires the KDA fold-every-commit family",
    ),
)
