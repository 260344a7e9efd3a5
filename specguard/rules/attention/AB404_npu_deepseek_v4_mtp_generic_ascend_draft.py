"""AB404 npu-deepseek-v4-mtp-generic-ascend-draft."""

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
from specguard.rules.spec_params._shared import device

DSV4 = "DeepseekV4ForCausalLM"
DRAFT_BACKEND = "--speculative-draft-attention-backend"
# The names that reach DraftBackendFactory._create_dsv4_*: the dsv4 backend the DeepSeek-V4 hook sets
# (0.5.14 arg_groups/deepseek_v4_hook.py:16, :24-30) and its deprecated alias (server_args.py:2742-2754).
DSV4_BACKEND_NAMES = (None, "dsv4", "compressed")
NPU_DSV4_MTP = (
    "--model-path",
    "deepseek-ai/DeepSeek-V4-Flash",
    "--device",
    "npu",
    "--tp",
    "16",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "EAGLE"
        or device(ctx) != "npu"
        or ctx.target is None
        or ctx.target.architecture != DSV4
    ):
        return
    if ctx.spec.get("speculative_draft_attention_backend") not in DSV4_BACKEND_NAMES:
        return
    yield RULE.finding(
        f"DeepSeek-V4 MTP (EAGLE) on {ctx.flag('--device')} npu in SGLang {ctx.version}: the draft inherits the dsv4 "
        "backend, but on NPU this release's draft backend factory builds the generic Ascend backends for it, which "
        "have no store_cache; the DeepSeek-V4 attention calls it on NPU for every layer, so the first draft forward "
        "raises \"AttributeError: 'AscendAttnBackend' object has no attribute 'store_cache'\". 0.5.15 builds the "
        "DeepSeek-V4 Ascend draft backends; upgrade, or serve without speculation",
        flags=("--device", "--speculative-algorithm"),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own draft backend factory
    check=check,
    code="AB404",
    category=Category.CRASH,
    name="npu-deepseek-v4-mtp-generic-ascend-draft",
    summary="DeepSeek-V4 MTP on an Ascend NPU gets draft backends without store_cache and crashes (0.5.14)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--device npu` with a DeepseekV4ForCausalLM target and `--speculative-algorithm` EAGLE/NEXTN (its MTP "
        "draft), the draft on the inherited dsv4 backend (no `--speculative-draft-attention-backend`, or dsv4), "
        "SGLang 0.5.14.",
        why="0.5.14's DeepSeek-V4 hook keeps every attention backend on dsv4 on NPU (arg_groups/deepseek_v4_hook.py:16, "
        ":24-30), so the draft inherits it, but `DraftBackendFactory._create_dsv4_decode_backend` and "
        "`_create_dsv4_prefill_backend` return the generic `AscendAttnMultiStepDraftBackend` / `AscendAttnBackend` on NPU "
        "(speculative/draft_utils.py:61-63, :91-93, :229-242, :326-332, :339-343). Those have no `store_cache` "
        "(hardware_backend/npu/attention/ascend_backend.py:277, :2764-2783; only the V4 class has it, "
        "ascend_dsv4_backend.py:909, :1463), which the DeepSeek-V4 attention calls on NPU (models/deepseek_v4.py:829-850; "
        "the NextN draft reuses its layers, deepseek_v4_nextn.py:39, :204). 0.5.15 builds "
        "`DeepseekV4AscendMultiStepDraftBackend` and the registered dsv4 prefill backend (draft_utils.py:238-247, "
        ":344-352). 0.5.13 has no NPU DeepSeek-V4 backend.",
        fix="Upgrade to 0.5.15, or serve DeepSeek-V4 on NPU without speculation. No automatic fix.",
        fix_safety="No fix: the release is the user's choice.",
    ),
    bad=Example(
        argv=NPU_DSV4_MTP,
        target={"architectures": (DSV4,), "num_nextn_predict_layers": 1},
        sglang_version="0.5.14",
    ),
    good=Example(
        argv=NPU_DSV4_MTP,
        target={"architectures": (DSV4,), "num_nextn_predict_layers": 1},
        sglang_version="0.5.15",
    ),
    sources=(
        "sglang 0.5.13: python/sglang/srt/hardware_backend/npu/attention/ (no ascend_dsv4_backend.py)",
        "sglang 0.5.14: python/sglang/srt/arg_groups/deepseek_v4_hook.py:16,24-30; speculative/draft_utils.py:61-63,91-93,229-242,326-332,339-343",
        "sglang 0.5.14: python/sglang/srt/hardware_backend/npu/attention/ascend_backend.py:277,2764-2783; ascend_dsv4_backend.py:909,1463",
        "sglang 0.5.14: python/sglang/srt/models/deepseek_v4.py:829-850; models/deepseek_v4_nextn.py:39,204",
        "sglang 0.5.15: python/sglang/srt/speculative/draft_utils.py:238-247,344-352",
    ),
    sglang_versions="==0.5.14",
    log_signatures=(r"'AscendAttnBackend' object has no attribute 'store_cache'",),
)
