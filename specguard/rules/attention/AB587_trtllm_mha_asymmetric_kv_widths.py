"""AB587 trtllm-mha-asymmetric-kv-widths."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.backends import BACKEND_FLAGS, default_backend, mla_of
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.sglang_facts.changes import FA4_DEFAULT_FOR_ASYMMETRIC_KV

TRTLLM_MHA = "trtllm_mha"


def _trtllm_mha(ctx: CheckContext) -> tuple[bool, tuple[str, ...]]:
    """(whether trtllm_mha runs, the flags that name it): typed on any phase, else SGLang's SM100 default, which
    from 0.5.17 is fa4 for a target whose K and V widths differ."""
    typed = tuple(
        flag for flag in BACKEND_FLAGS if ctx.spec.last_value(flag) == TRTLLM_MHA
    )
    if typed:
        return True, typed
    if any(
        ctx.spec.has(flag) for flag in BACKEND_FLAGS
    ) or FA4_DEFAULT_FOR_ASYMMETRIC_KV.present_in(ctx.version):
        return False, ()
    return default_backend(ctx) == TRTLLM_MHA, ()


def check(ctx: CheckContext) -> Iterator[Finding]:
    target = ctx.target
    # The failure does not depend on speculation; specguard judges speculative launches, so it is reported for them.
    if (
        ctx.algorithm is None
        or target is None
        or mla_of(target) is not False
        or target.head_dim is None
        or target.v_head_dim is None
    ):
        return
    if target.head_dim == target.v_head_dim:
        return
    runs, flags = _trtllm_mha(ctx)
    if not runs:
        return
    how = (
        " ".join(f"{ctx.flag(flag)} {TRTLLM_MHA}" for flag in flags)
        or f"SGLang's SM100 default ({TRTLLM_MHA})"
    )
    advice = (
        "choose another attention backend"
        if flags
        else f"use SGLang 0.5.17, whose default for such a target is fa4, or name another {ctx.flag('--attention-backend')}"
    )
    yield RULE.finding(
        f"{target.architecture} has K rows {target.head_dim} wide and V rows {target.v_head_dim} wide (config.json "
        f"head_dim / v_head_dim), and {how} in SGLang {ctx.version} reads both at head_dim: it views the V cache and "
        f"returns its output {target.head_dim} wide per head, which the model's output projection (sized for "
        f"{target.v_head_dim}) cannot take, so the first forward fails during start. {advice[0].upper()}{advice[1:]}",
        flags=flags or ("--model-path",),
    )


MIMO_V2_FLASH = (
    "--model-path",
    "XiaomiMiMo/MiMo-V2-Flash",
    "--tp",
    "8",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)
MIMO_V2_FACTS = {
    "architectures": ("MiMoV2FlashForCausalLM",),
    "head_dim": 192,
    "v_head_dim": 128,
}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB587",
    category=Category.START,
    name="trtllm-mha-asymmetric-kv-widths",
    summary="trtllm_mha (typed, or the SM100 default up to 0.5.16) with an MHA target whose head_dim differs from v_head_dim fails its first forward",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="An MHA target (no `kv_lora_rank`) whose config.json `head_dim` and `v_head_dim` differ (MiMo-V2-Flash: "
        "192 / 128) on trtllm_mha: typed on any of `--attention-backend`/`--prefill-attention-backend`/"
        "`--decode-attention-backend`, or, with none typed, SGLang's SM100 default, which under speculation is "
        "trtllm_mha with an explicit chain topk up to 0.5.16. SGLang 0.5.7 or later, in a speculative launch (the "
        "same launch without speculation fails the same way; specguard judges speculative launches, so it stays "
        "quiet there). Targets whose sliding "
        "layers alone differ (swa_head_dim / swa_v_head_dim) are not read.",
        why="The trtllm_mha backend reshapes the K and V caches and its output with `layer.head_dim` and never reads "
        "`v_head_dim` (0.5.7 layers/attention/trtllm_mha_backend.py:642, 738; 0.5.16 :984-986, 1018, 1090-1094, 1194; "
        "0.5.23 :1462-1468, 1691, 2035), while the model sizes its V projection and `o_proj` by `v_head_dim` (0.5.16 "
        "models/mimo_v2.py:471-496, 571), so the attention output cannot reach the output projection. 0.5.7 makes "
        "trtllm_mha the SM100 MHA default (server_args.py:1534-1545; 0.5.16 :4915-4923); 0.5.17 returns fa4 instead "
        'when `has_asymmetric_kv` ("trtllm_mha requires equal K/V row widths; fa4 carries v_head_dim through", '
        "server_args.py:5690-5696; configs/model_config.py:738-746) and refuses page sizes of 128 and up for such "
        "targets at construction (trtllm_mha_backend.py:216-233). 0.5.6.post2 has no MiMo-V2 model.",
        fix="Up to 0.5.16 with no backend typed: upgrade to 0.5.17 (fa4 by default). Otherwise name a backend other "
        "than trtllm_mha.",
        fix_safety="No automatic fix: which backend carries v_head_dim on this GPU and release is not read here.",
    ),
    bad=Example(
        argv=MIMO_V2_FLASH, target=MIMO_V2_FACTS, gpu="B200", sglang_version="0.5.16"
    ),
    good=Example(
        argv=MIMO_V2_FLASH, target=MIMO_V2_FACTS, gpu="B200", sglang_version="0.5.17"
    ),
    sources=(
        "sglang 0.5.6.post2: python/sglang/srt/models (no mimo_v2_flash.py)",
        "sglang 0.5.7: python/sglang/srt/server_args.py:1534-1545; layers/attention/trtllm_mha_backend.py:642,738",
        "sglang 0.5.16: python/sglang/srt/server_args.py:4915-4923; layers/attention/trtllm_mha_backend.py:984-986,1018,1194",
        "sglang 0.5.16: python/sglang/srt/models/mimo_v2.py:471-496,571",
        "sglang 0.5.17: python/sglang/srt/server_args.py:5690-5696; configs/model_config.py:738-746",
        "sglang 0.5.17: python/sglang/srt/layers/attention/trtllm_mha_backend.py:216-233",
        "sglang 0.5.23: python/sglang/srt/layers/attention/trtllm_mha_backend.py:1462-1468,1691,2035",
    ),
    sglang_versions=">=0.5.7",
)
