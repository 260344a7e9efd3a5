"""AB437 trtllm-mla-prefill-verify-with-dcp."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Fix, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS, is_mla_target
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import DEEPSEEK_V3_MLA_FACTS
from specguard.rules.parallel._parallel import dcp_size
from specguard.sglang_facts.changes import TOKENSPEED_MLA_ALIAS

# TRTLLMMLABackend._run_decode_kernel, which runs target verify under DCP, raises
# NotImplementedError (0.5.17 layers/attention/trtllm_mla_backend.py:836-842, 0.5.18 :855-861):
# "trtllm_mla does not forward the cyclic DCP metadata to its decode kernel and returns no rank-local LSE for the
# cross-rank merge; select cutedsl_mla or tokenspeed_mla for a DCP target-verify run"
# and from 0.5.19 (0.5.19 :1032-1040, 0.5.23 :1013-1022):
# "trtllm_mla cannot forward a global causal bound to its decode kernel, which is required for DCP with q_len > 1
# (speculative target-verify / draft-extend); select cutedsl_mla for a DCP speculative run"
BACKEND = "trtllm_mla"
MODE = "--speculative-attention-mode"
# Kimi-K3's model override sets the speculative attention mode itself under DCP (0.5.17 arg_groups/overrides.py:366-400).
MODE_OVERRIDDEN_ARCHITECTURES = frozenset({"KimiK3ForConditionalGeneration"})
DCP_DECODE_BACKENDS = ("cutedsl_mla", "tokenspeed_mla")
TOKENSPEED = "tokenspeed_mla"


def _backend(ctx: CheckContext, phase_flag: str) -> tuple[str | None, str | None]:
    for flag in (phase_flag, "--attention-backend"):
        value = ctx.spec.last_value(flag)
        if value is not None:
            return value, flag
    return None, None


def _fix(decode: str | None) -> Fix | None:
    if decode not in DCP_DECODE_BACKENDS:
        return None
    return fix_of(
        f"verify on the decode backend ({decode})",
        Applicability.UNSAFE,
        Edit(name=MODE, value="decode"),
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    dcp = dcp_size(ctx)
    if ctx.algorithm is None or dcp is None or dcp[0] <= 1 or not is_mla_target(ctx):
        return
    if (
        ctx.target is not None
        and ctx.target.architecture in MODE_OVERRIDDEN_ARCHITECTURES
    ):
        return
    if ctx.spec.last_value(MODE) == "decode":
        return  # verify then runs on the decode backend: AB192 when that is trtllm_mla
    if TOKENSPEED in (
        ctx.spec.last_value("--attention-backend"),
        ctx.spec.last_value("--decode-attention-backend"),
    ) and (
        TOKENSPEED_MLA_ALIAS.present_in(ctx.version)
        or ctx.spec.last_value("--kv-cache-dtype") != "fp8_e4m3"
    ):
        # 0.5.23 turns the mode to decode for it (arg_groups/serving_hook.py:324-335); before, argument
        # checking refuses it without FP8 KV first (0.5.17 arg_groups/overrides.py:2128-2140).
        return
    prefill, flag = _backend(ctx, "--prefill-attention-backend")
    decode, _ = _backend(ctx, "--decode-attention-backend")
    if prefill != BACKEND or decode == BACKEND or flag is None:
        return  # a trtllm_mla decode backend is refused at start (AB192)
    size, dcp_flag = dcp
    yield RULE.finding(
        f"{ctx.flag(flag)} {BACKEND} runs {ctx.algorithm}'s target verify (the default {ctx.flag(MODE)} prefill) "
        f"with {ctx.flag(dcp_flag)} {size} in SGLang {ctx.version}, and trtllm_mla cannot pass DCP's causal bound "
        "or rank-local LSE to its kernel: the first target verify (or its CUDA-graph capture) raises "
        "NotImplementedError ('select cutedsl_mla ... for a DCP speculative run'). Verify on the decode backend "
        f"({ctx.flag(MODE)} decode with cutedsl_mla), or drop DCP",
        flags=(flag, dcp_flag, "--speculative-algorithm"),
        fix=_fix(decode),
    )


_DEEPSEEK_V3_DCP_MTP = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3",
    "--tp",
    "8",
    "--dcp-size",
    "8",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-eagle-topk",
    "1",
    "--prefill-attention-backend",
    BACKEND,
    "--decode-attention-backend",
    "cutedsl_mla",
)

RULE = Rule(
    check=check,
    code="AB437",
    category=Category.CRASH,
    name="trtllm-mla-prefill-verify-with-dcp",
    summary="trtllm_mla as the prefill backend verifies speculative drafts under --dcp-size above 1 and raises "
    "NotImplementedError (0.5.17+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.SOMETIMES,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="A speculative algorithm on an MLA target with `--dcp-size` above 1, the default "
        "`--speculative-attention-mode prefill`, trtllm_mla as the prefill backend (`--prefill-attention-backend`, "
        "else `--attention-backend`) and another decode backend (cutedsl_mla or tokenspeed_mla), SGLang 0.5.17 or "
        "later; Kimi-K3, whose override picks the mode itself, is left out, and so is a typed tokenspeed_mla "
        "decode or attention backend without `--kv-cache-dtype fp8_e4m3` (refused at argument time first, 0.5.17 "
        "arg_groups/overrides.py:2128-2140) or from 0.5.23 at all (SGLang then sets the mode to decode itself).",
        why="In prefill mode HybridAttnBackend runs target verify on the prefill backend (0.5.17 "
        "layers/attention/hybrid_attn_backend.py:34; 0.5.23 :41). The trtllm_mla factory refuses DCP with "
        "speculation only when trtllm_mla is the decode backend (0.5.17 layers/attention/attention_registry.py:"
        "69-86, rule AB192), so the launch builds it as the prefill backend; its DCP target verify calls "
        "_run_decode_kernel with cp_world and return_lse (0.5.17 trtllm_mla_backend.py:1375-1390; 0.5.23 "
        ":1633-1646), which raises NotImplementedError (0.5.17 :836-842, 0.5.18 :855-861, 0.5.19 :1032-1040, "
        "0.5.23 :1013-1022). 0.5.15-0.5.16 refuse DCP with speculation outright (PL191). 0.5.23 rewrites "
        "tokenspeed_mla to cutedsl_mla and, when it was typed as the decode or attention backend of a speculative "
        "launch, sets `--speculative-attention-mode decode` (arg_groups/serving_hook.py:303-335).",
        fix="`--speculative-attention-mode decode` so verify runs on the DCP-capable decode backend (cutedsl_mla), "
        "or drop DCP.",
        fix_safety="Unsafe: verify runs on another attention kernel.",
    ),
    bad=Example(
        argv=_DEEPSEEK_V3_DCP_MTP,
        target=DEEPSEEK_V3_MLA_FACTS,
        gpu="B200",
        sglang_version="0.5.17",
    ),
    good=Example(
        argv=(*_DEEPSEEK_V3_DCP_MTP, MODE, "decode"),
        target=DEEPSEEK_V3_MLA_FACTS,
        gpu="B200",
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.16: python/sglang/srt/server_args.py:3149-3178 (DCP with speculation refused on CUDA; PL191)",
        "sglang 0.5.17: python/sglang/srt/layers/attention/attention_registry.py:69-86; python/sglang/srt/layers/attention/hybrid_attn_backend.py:34; python/sglang/srt/layers/attention/trtllm_mla_backend.py:816-842, 1375-1390",
        "sglang 0.5.18: python/sglang/srt/layers/attention/trtllm_mla_backend.py:855-861",
        "sglang 0.5.19: python/sglang/srt/layers/attention/trtllm_mla_backend.py:1032-1040; python/sglang/srt/arg_groups/model_overrides/kimi_k3.py:57-76",
        "sglang 0.5.23: python/sglang/srt/layers/attention/trtllm_mla_backend.py:1013-1022, 1633-1646; python/sglang/srt/arg_groups/serving_hook.py:303-335",
    ),
    sglang_versions=">=0.5.17",
    log_signatures=(
        r"trtllm_mla does not forward the cyclic DCP metadata to its decode kernel",
        r"trtllm_mla cannot forward a global causal bound to its decode kernel",
    ),
)
