"""AB283 dflash-on-npu-without-ascend-draft."""

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
from specguard.rules.examples import QWEN3_8B_DFLASH
from specguard.rules.spec_params._shared import device

# The draft backends the DFLASH worker keeps (0.5.11-0.5.12.post1 speculative/dflash_worker.py:102); any
# other name is replaced by flashinfer (triton on ROCm).
KEPT_DRAFT_BACKENDS = ("flashinfer", "fa3", "fa4", "triton")
DRAFT_BACKEND = "--speculative-draft-attention-backend"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DFLASH" or device(ctx) != "npu":
        return
    # On an NPU every attention backend is forced to ascend (hardware_backend/npu/utils.py:50-52), so only a
    # draft backend typed for the draft alone escapes the fallback; one the worker keeps is the user's choice.
    if ctx.spec.get("speculative_draft_attention_backend") in KEPT_DRAFT_BACKENDS:
        return
    yield RULE.finding(
        f"DFLASH on {ctx.flag('--device')} npu in SGLang {ctx.env.sglang_version}: the DFLASH draft worker keeps only "
        f"{', '.join(KEPT_DRAFT_BACKENDS)} and replaces the NPU's ascend backend with flashinfer (\"DFLASH draft "
        "worker only supports attention_backend in ... but got 'ascend'. Falling back to 'flashinfer'\"), a CUDA "
        "library with no NPU build, and the DFLASH draft model has no NPU attention path, so the draft worker "
        "cannot run on the NPU. SGLang 0.5.13 adds the ascend DFLASH draft; upgrade or serve without DFLASH",
        flags=("--device", "--speculative-algorithm"),
    )


NPU_DFLASH = (*QWEN3_8B_DFLASH, "--device", "npu")

RULE = Rule(
    check=check,
    code="AB283",
    category=Category.START,
    name="dflash-on-npu-without-ascend-draft",
    summary="DFLASH on an Ascend NPU before SGLang 0.5.13: the draft falls back to flashinfer, which has no NPU build",
    severity=Severity.ERROR,
    sglang_versions=">=0.5.11,<=0.5.12.post1",
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with `--device npu`, SGLang 0.5.11 (DFLASH's first release) through "
        "0.5.12.post1, unless `--speculative-draft-attention-backend` names one of the backends the DFLASH worker keeps.",
        why="On an NPU `set_default_server_args` forces the attention, prefill and decode backends to ascend "
        "(0.5.11 hardware_backend/npu/utils.py:44-52, called from server_args.py:1167-1171). The DFLASH draft worker "
        "takes `--speculative-draft-attention-backend` or else the prefill backend, keeps only flashinfer, fa3, fa4 "
        "and triton, and replaces anything else with flashinfer (triton on ROCm) with the warning 'DFLASH draft worker "
        "only supports attention_backend in ... Falling back to ...' (0.5.11 and 0.5.12.post1 "
        "speculative/dflash_worker.py:101-131); flashinfer is imported only where it is available "
        "(layers/attention/flashinfer_backend.py:48-55), and the DFLASH draft attention has only the CUDA "
        "split/norm/rotary path. 0.5.13 adds ascend to the kept backends (dflash_worker.py:104) and an NPU path to "
        "the draft attention (models/dflash.py:125, 152-153). 0.5.13-0.5.15.post1 run DFLASH on NPU; 0.5.16 refuses "
        "it again at argument time (AB173).",
        fix="Upgrade to SGLang 0.5.13 or later (0.5.17+, since 0.5.16 refuses DFLASH off CUDA), or serve without DFLASH on the NPU.",
        fix_safety="No automatic fix: the device is the hardware and the release is the user's choice.",
    ),
    bad=Example(argv=NPU_DFLASH, sglang_version="0.5.12.post1"),
    good=Example(argv=NPU_DFLASH, sglang_version="0.5.13"),
    sources=(
        "sglang 0.5.11: python/sglang/srt/speculative/dflash_worker.py:101-131; hardware_backend/npu/utils.py:44-52; server_args.py:1167-1171",
        "sglang 0.5.12.post1: python/sglang/srt/speculative/dflash_worker.py:101-131; layers/attention/flashinfer_backend.py:48-55",
        "sglang 0.5.13: python/sglang/srt/speculative/dflash_worker.py:104; models/dflash.py:125,152-153",
    ),
    log_signatures=(
        r"DFLASH draft worker only supports attention_backend in .* but got 'ascend'",
    ),
)
