"""AB383 dflash-selector-greedy-on-npu."""

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
from specguard.sglang_facts.changes import selector_draft_class

# A local DFlash2 checkpoint: the selector is a property of the draft class, not of a published draft.
DFLASH_SELECTOR = (
    "--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "DFLASH",
    "--speculative-draft-model-path", "/models/dflash2-selector-draft",
)  # fmt: skip
SELECTOR_DRAFT = {"architectures": ("DFlash2DraftModel",)}


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DFLASH" or device(ctx) != "npu" or ctx.draft is None:
        return
    if not selector_draft_class(ctx.draft.architecture, ctx.version):
        return
    yield RULE.finding(
        f"DFLASH with a candidate-selector draft ({ctx.draft.architecture}) on {ctx.flag('--device')} npu in SGLang "
        f"{ctx.version}: the selector's sampling is off on Ascend, so requests with temperature > 0 (SGLang's default "
        "sampling params sample) are drafted and verified by argmax, and temperature, top_p and top_k are ignored "
        "('DFLASH non-greedy verification is unavailable on this build/device; falling back to greedy argmax "
        "verification.'). Greedy requests are unaffected; serve greedy traffic only, or sample on CUDA",
        flags=("--device", "--speculative-draft-model-path"),
    )


RULE = Rule(
    check=check,
    code="AB383",
    category=Category.WRONG_OUTPUT,
    name="dflash-selector-greedy-on-npu",
    summary="DFLASH with a candidate-selector draft on an Ascend NPU verifies sampled requests greedily (0.5.20+)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` on `--device npu` with a draft whose config.json names a "
        "candidate-selector class (`DFlash2DraftModel`, and from 0.5.23 `DFlash2BeamDraftModel`, "
        "`MiniMaxDFlash2DraftModel`), SGLang 0.5.20 or later.",
        why="0.5.20 sets `self._selector_sampling_enabled = not _is_npu` in `DFlashWorkerV2.__init__` "
        "(speculative/dflash_worker_v2.py:419-421; 0.5.21 :435, 0.5.22 :431, 0.5.23 :444). With it off the selector "
        "proposes with temperature 1 and an all-greedy mask (:1386-1395), no sampled selector state is kept for the "
        'accept (:1403, 2547-2551), and `_validate_phase1_sampling_support` logs once "DFLASH non-greedy '
        "verification is unavailable on this build/device; falling back to greedy argmax verification. The "
        "requested sampling distribution will not be preserved; use temperature=0 and top_k=1 for lossless greedy "
        'decoding." (:2139-2154; 0.5.23 :2287-2298). 0.5.19 has no such switch: a selector draft verified through '
        "accept_sampling on every device (0.5.19 dflash_worker_v2.py:1712-1721). The launch cannot show whether "
        "clients sample, so this is a warning.",
        fix="Serve greedy traffic (temperature 0) with this draft on Ascend, or sample on a CUDA GPU.",
        fix_safety="No automatic fix: the device and the traffic are the user's.",
    ),
    bad=Example(
        argv=(*DFLASH_SELECTOR, "--device", "npu"),
        draft=SELECTOR_DRAFT,
        sglang_version="0.5.20",
    ),
    good=Example(
        argv=DFLASH_SELECTOR, draft=SELECTOR_DRAFT, gpu="H100", sglang_version="0.5.20"
    ),
    sources=(
        "sglang 0.5.19: python/sglang/srt/speculative/dflash_worker_v2.py:1712-1721 (selector drafts never fall back)",
        "sglang 0.5.20: python/sglang/srt/speculative/dflash_worker_v2.py:419-421, 1386-1403, 2139-2154, 2547-2551",
        "sglang 0.5.20: python/sglang/srt/models/dflash.py:1145-1160, 1225-1230 (DFlash2DraftModel, the selector draft)",
        "sglang 0.5.23: python/sglang/srt/speculative/dflash_worker_v2.py:444, 2287-2298",
    ),
    sglang_versions=">=0.5.20",
    log_signatures=(
        r"DFLASH non-greedy verification is unavailable on this build/device; falling back to greedy argmax verification\. The requested sampling distribution will not be preserved",
    ),
)
