"""MM471 flydsl-megamoe-decode-capacity."""

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

FLYDSL = "SGLANG_AMD_USE_FLYDSL_MEGA_MOE"
MTPR = "SGLANG_AMD_FLYDSL_MEGA_MOE_MTPR"
DECODE_MTPR = "SGLANG_AMD_FLYDSL_MEGA_MOE_DECODE_MTPR"
DEFAULT_MTPR = 8192  # EnvInt(8192), 0.5.23 environ.py:1054
# What SGLang raises (0.5.23 arg_groups/mega_moe_hook.py:140-157), e.g.
# "SGLANG_AMD_FLYDSL_MEGA_MOE_DECODE_MTPR=128 must cover the largest decode / verify forward on one rank:
# max running requests per DP rank x tokens per request = 192. Raise it to a power of two of at least 192
# or lower --max-running-requests." and
# "SGLANG_AMD_FLYDSL_MEGA_MOE_DECODE_MTPR is not supported with attention context parallelism
# (--attn-cp-size > 1); set it to 0."
CP_FLAGS = (
    "--attn-cp-size",
    "--attention-context-parallel-size",
)  # 0.5.23 arg_groups/fields/parallel.py:104-111


def _env_int(ctx: CheckContext, name: str, default: int) -> int | None:
    value = ctx.spec.env_value(name)
    try:
        return default if value is None else int(value)
    except ValueError:
        return None


def _runs_megamoe(ctx: CheckContext) -> bool:
    """--moe-a2a-backend megamoe, or --moe-runner-backend megamoe, its alias (mega_moe_hook.py:259-276)."""
    return "megamoe" in (
        ctx.spec.last_value("--moe-a2a-backend"),
        ctx.spec.last_value("--moe-runner-backend"),
    )


def _attn_cp_size(ctx: CheckContext) -> int:
    typed = [value for flag in CP_FLAGS if (value := ctx.spec.last_value(flag)) is not None]
    return int(typed[-1]) if typed and typed[-1].isdigit() else 1


def _problem(ctx: CheckContext, decode_mtpr: int) -> tuple[str, str] | None:
    """(what SGLang counts, the error it raises), or None when the capacity holds or is unknown."""
    if _attn_cp_size(ctx) > 1:
        return (
            f"with attention context parallelism ({ctx.flag('--attn-cp-size')} > 1)",
            f"{DECODE_MTPR} is not supported with attention context parallelism (--attn-cp-size > 1); set it to 0.",
        )
    mrr = ctx.resolution.max_running_requests
    tokens, topk = ctx.resolution.num_draft_tokens, ctx.resolution.eagle_topk
    if mrr is None or tokens is None:
        return None
    requests = mrr // ctx.resolution.attention_dp_size
    per_request = max(tokens, topk or 1)
    rows = requests * per_request
    if rows <= decode_mtpr:
        return None
    return (
        f"{requests} running requests per rank x {per_request} tokens per request = {rows} rows",
        (
            f"{DECODE_MTPR}={decode_mtpr} must cover the largest decode / verify forward on one rank: max running "
            f"requests per DP rank x tokens per request = {rows}."
        ),
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or not _runs_megamoe(ctx) or not ctx.spec.env_flag(FLYDSL):
        return
    # The check runs on ROCm only (mega_moe_hook.py:131); an unknown GPU leaves the platform unknown.
    if ctx.env.gpu is None or ctx.env.gpu.platform != "rocm":
        return
    if ctx.spec.last_value("--disaggregation-mode") == "prefill":
        return
    decode_mtpr, mtpr = _env_int(ctx, DECODE_MTPR, 0), _env_int(ctx, MTPR, DEFAULT_MTPR)
    if decode_mtpr is None or mtpr is None or not 0 < decode_mtpr < mtpr:
        return  # off, or one merged capacity (mega_moe_hook.py:133-135)
    found = _problem(ctx, decode_mtpr)
    if found is None:
        return
    counted, error = found
    yield RULE.finding(
        f"{FLYDSL}=1 with {DECODE_MTPR}={decode_mtpr} and {ctx.algorithm} in SGLang {ctx.version}: the decode "
        f"capacity must hold one rank's largest decode/verify step, and here {counted}, so argument handling "
        f"raises ValueError '{error}'. Unset {DECODE_MTPR} (one merged capacity), or raise it to a power of two "
        f"that covers the step",
        flags=("--moe-a2a-backend", "--speculative-num-draft-tokens"),
        fix=fix_of(
            f"unset {DECODE_MTPR}",
            Applicability.UNSAFE,
            Edit(target="env", name=DECODE_MTPR, value=None),
        ),
    )


QWEN3_MOE_EAGLE3_MEGAMOE = (
    "--model-path", "Qwen/Qwen3-30B-A3B", "--tp-size", "8", "--speculative-algorithm", "EAGLE3",
    "--speculative-draft-model-path", "d", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
    "--speculative-num-draft-tokens", "4", "--moe-a2a-backend", "megamoe",
)  # fmt: skip

RULE = Rule(
    check=check,
    code="MM471",
    category=Category.START,
    name="flydsl-megamoe-decode-capacity",
    summary="ROCm FlyDSL MegaMoE with a decode capacity (SGLANG_AMD_FLYDSL_MEGA_MOE_DECODE_MTPR) below one rank's "
    "largest decode/verify step, or with attention CP, is refused (0.5.23+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="A speculative launch on ROCm with `--moe-a2a-backend megamoe` (or its alias `--moe-runner-backend "
        "megamoe`), `SGLANG_AMD_USE_FLYDSL_MEGA_MOE=1` and `0 < SGLANG_AMD_FLYDSL_MEGA_MOE_DECODE_MTPR < "
        "SGLANG_AMD_FLYDSL_MEGA_MOE_MTPR` (default 8192), not a PD prefill node, where `--attn-cp-size` is above 1 or "
        "the max running requests per attention-DP rank (48 when SGLang sets it for speculation) times max(draft "
        "tokens, topk) exceed the decode capacity, SGLang 0.5.23 or later.",
        why="0.5.23 adds a smaller MegaMoEv2 capacity for decode steps, `SGLANG_AMD_FLYDSL_MEGA_MOE_DECODE_MTPR` "
        "(environ.py:1053-1059), and `validate_flydsl_decode_capacity` (arg_groups/mega_moe_hook.py:130-158), run "
        "after the speculative hook (pipeline.py:304-324, through `validate_mega_moe_token_budget_for_model` "
        ":77-89): on HIP with FlyDSL MegaMoE and a decode capacity between 0 and the full one, it raises "
        "ValueError for attention CP, for a missing request cap, and when `flydsl_decode_tokens_per_rank` "
        "(:108-127: requests // attn_dp_size x max(speculative_num_draft_tokens, speculative_eagle_topk)) exceeds "
        "it. 0.5.22 has no such variable (environ.py:955-956 hold only the flag and the full capacity), so "
        "nothing checks it there.",
        fix="Unset SGLANG_AMD_FLYDSL_MEGA_MOE_DECODE_MTPR (one merged capacity), or raise it to a power of two "
        "covering the step, or lower --max-running-requests.",
        fix_safety="Unsafe: decode steps then use the full MegaMoE capacity, which takes more GPU memory.",
    ),
    bad=Example(
        argv=QWEN3_MOE_EAGLE3_MEGAMOE,
        target={"architectures": ("Qwen3MoeForCausalLM",)},
        env={FLYDSL: "1", DECODE_MTPR: "128"},
        gpu="MI355X",
        sglang_version="0.5.23",
    ),
    good=Example(
        argv=QWEN3_MOE_EAGLE3_MEGAMOE,
        target={"architectures": ("Qwen3MoeForCausalLM",)},
        env={FLYDSL: "1", DECODE_MTPR: "256"},
        gpu="MI355X",
        sglang_version="0.5.23",
    ),
    sources=(
        "sglang 0.5.22: python/sglang/srt/environ.py:955-956 (no decode capacity variable)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/mega_moe_hook.py:77-89,108-158,259-276",
        "sglang 0.5.23: python/sglang/srt/arg_groups/pipeline.py:304-324; environ.py:1053-1059",
    ),
    sglang_versions=">=0.5.23",
    log_signatures=(
        r"SGLANG_AMD_FLYDSL_MEGA_MOE_DECODE_MTPR=\d+ must cover the largest decode / verify forward on one rank",
        r"SGLANG_AMD_FLYDSL_MEGA_MOE_DECODE_MTPR is not supported with attention context parallelism",
    ),
)
