"""AB351 hyv3-nextn-cuda-sync-on-xpu."""

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

HYV3 = "HYV3ForCausalLM"
# The draft classes that load as HYV3ForCausalLMNextN (configs/model_config.py rewrites the target's name for a draft).
HYV3_NEXTN_DRAFTS = frozenset({HYV3, "HYV3ForCausalLMNextN"})
DRAFT_PATH = "--speculative-draft-model-path"


def drafts_with_hyv3_nextn(ctx: CheckContext) -> bool:
    if not ctx.spec.has(DRAFT_PATH):
        return True  # SGLang fills the target's own path in (0.5.11 server_args.py:3504-3507)
    return ctx.draft is not None and ctx.draft.architecture in HYV3_NEXTN_DRAFTS


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "EAGLE"
        or ctx.spec.get("device") != "xpu"
        or ctx.target is None
        or ctx.target.architecture != HYV3
        or not drafts_with_hyv3_nextn(ctx)
    ):
        return
    yield RULE.finding(
        f"{ctx.spec.get('speculative_algorithm')} on {HYV3} with {ctx.flag('--device')} xpu in SGLang {ctx.version}: "
        "when the draft takes the target's embedding and head, HYV3ForCausalLMNextN.set_embed_and_head calls "
        "torch.cuda.synchronize(), which an XPU build of PyTorch refuses ('Torch not compiled with CUDA "
        "enabled'), so the server dies while the draft worker starts. SGLang 0.5.22 calls the device's module "
        "instead; upgrade, or serve this target on XPU without speculation",
        flags=("--device", "--speculative-algorithm"),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own model class
    check=check,
    code="AB351",
    category=Category.START,
    name="hyv3-nextn-cuda-sync-on-xpu",
    summary="the HYV3 NextN draft calls torch.cuda.synchronize() when it takes the target's head, which fails on "
    "--device xpu (0.5.11-0.5.21)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm` EAGLE or NEXTN on a target whose config.json architectures[0] is "
        "HYV3ForCausalLM, drafting with its own NextN layer (no `--speculative-draft-model-path`, or one whose "
        "architecture is HYV3ForCausalLM / HYV3ForCausalLMNextN), with `--device xpu`, SGLang 0.5.11 through 0.5.21.",
        why="A HYV3 target's draft loads as HYV3ForCausalLMNextN (0.5.11 configs/model_config.py:405-406), and the "
        "EAGLE worker hands it the target's embedding and head through `set_embed_and_head` (0.5.21 "
        "speculative/eagle_worker_v2.py:367), which ends with `torch.cuda.empty_cache()` and "
        "`torch.cuda.synchronize()` (0.5.11 models/hunyuan_v3_nextn.py:153-159, 0.5.21 :152-158). PyTorch's XPU "
        "builds have no CUDA: `torch.cuda.synchronize()` initialises CUDA and raises 'Torch not compiled with CUDA "
        "enabled'. 0.5.22 calls `torch.get_device_module()` instead (:157-158, unchanged in 0.5.23). On NPU "
        "SGLang imports torch_npu's transfer_to_npu, which maps torch.cuda onto the NPU "
        "(hardware_backend/npu/utils.py:216), so NPU is not judged; nor is `--device cpu`. The class is new "
        "in 0.5.11 (no HYV3 file in 0.5.10.post1).",
        fix="Upgrade to SGLang 0.5.22, or serve without speculation on XPU. No automatic fix.",
        fix_safety="No fix: the release and the device are the user's choice.",
    ),
    bad=Example(
        argv=(
            "--model-path",
            "/models/hyv3",
            "--speculative-algorithm",
            "EAGLE",
            "--device",
            "xpu",
        ),
        target={"architectures": (HYV3,)},
        sglang_version="0.5.21",
    ),
    good=Example(
        argv=(
            "--model-path",
            "/models/hyv3",
            "--speculative-algorithm",
            "EAGLE",
            "--device",
            "xpu",
        ),
        target={"architectures": (HYV3,)},
        sglang_version="0.5.22",
    ),
    sources=(
        "sglang 0.5.10.post1: python/sglang/srt/models/ (no hunyuan_v3.py / hunyuan_v3_nextn.py)",
        "sglang 0.5.11: python/sglang/srt/models/hunyuan_v3_nextn.py:153-159; configs/model_config.py:405-406",
        "sglang 0.5.21: python/sglang/srt/models/hunyuan_v3_nextn.py:152-158; speculative/eagle_worker_v2.py:349,367",
        "sglang 0.5.22: python/sglang/srt/models/hunyuan_v3_nextn.py:157-158 (torch.get_device_module())",
        "sglang 0.5.21: python/sglang/srt/hardware_backend/npu/utils.py:216 (transfer_to_npu)",
    ),
    sglang_versions=">=0.5.11,<=0.5.21",
)
