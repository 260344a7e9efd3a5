"""PL214 pd-decode-rejection-sampling-first-verify."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention._greedy_verify import (
    platform,
    rejection_sampling_on,
)
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE_CHAIN
from specguard.sglang_facts.algorithms import EAGLE_HEAD_ALGORITHMS
from specguard.sglang_facts.changes import HIP_REJECTION_SAMPLED_VERIFY

REJECTION = "--speculative-use-rejection-sampling"
MODE = "--disaggregation-mode"


def check(ctx: CheckContext) -> Iterator[Finding]:
    # The EAGLE heads: their PD decode node rebuilds its draft input in build_eagle_disagg_draft_input
    # and drafts with the EAGLE v2 workers (0.5.21 speculative/spec_info.py:341-350).
    if ctx.algorithm not in EAGLE_HEAD_ALGORITHMS or ctx.spec.last_value(MODE) != "decode":
        return
    typed = bool(ctx.spec.get("speculative_use_rejection_sampling"))
    # 0.5.21 turns rejection sampling on by itself for EAGLE chains on ROCm (AB201's reading).
    automatic = (
        not typed
        and platform(ctx) == "rocm"
        and HIP_REJECTION_SAMPLED_VERIFY.present_in(ctx.version)
        and rejection_sampling_on(ctx) is True
    )
    if not (typed or automatic):
        return
    how = (
        f"{ctx.flag(REJECTION)}"
        if typed
        else "rejection sampling (SGLang turns it on by itself for an EAGLE chain on ROCm)"
    )
    yield RULE.finding(
        f"{ctx.flag(MODE)} decode with {ctx.algorithm} and {how} in SGLang {ctx.version}: the draft input a decode "
        "node builds for each request transferred from prefill carries no draft probabilities, while the "
        "rejection-sampling draft step starts its proposal list from them. Alone in the batch the request crashes "
        "the eager draft step (torch.stack over None) or, on the draft CUDA graph, is verified against stale "
        "probabilities; merged into a running batch the probability rows no longer match the batch. Fixed in "
        + (
            f"0.5.22; until then drop {ctx.flag(REJECTION)} on the decode node"
            if typed
            else "0.5.22; upgrade the decode node"
        ),
        flags=(MODE, REJECTION) if typed else (MODE, "--speculative-algorithm"),
        fix=fix_of(
            f"drop {REJECTION}", Applicability.UNSAFE, Edit(name=REJECTION, value=None)
        )
        if typed
        else None,
    )


RULE = Rule(
    check=check,
    code="PL214",
    category=Category.CRASH,
    name="pd-decode-rejection-sampling-first-verify",
    summary="A PD decode node with EAGLE/EAGLE3 and --speculative-use-rejection-sampling has no draft probabilities "
    "for transferred requests (0.5.14-0.5.21)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.SOMETIMES,
    dialects=SGLANG_DIALECTS,
    sglang_versions=">=0.5.14,<0.5.22",
    docs=RuleDocs(
        what="`--disaggregation-mode decode` with `--speculative-algorithm` EAGLE, NEXTN or EAGLE3 and "
        "`--speculative-use-rejection-sampling`, SGLang 0.5.14 to 0.5.21; on ROCm in 0.5.21 also an EAGLE chain "
        "without the flag, where SGLang turns rejection sampling on by itself (speculative_hook.py:40-62).",
        why="0.5.14 added rejection sampling (arg_groups/speculative_hook.py:341; absent from 0.5.13). The EAGLE v2 "
        "draft step seeds its proposal list with the incoming `spec_info.draft_probs` and stacks it "
        "(0.5.21 eagle_worker_v2.py:718-719, :838-840; 0.5.14 :602, :702-713), but a PD decode node's "
        "`build_eagle_disagg_draft_input` builds the EagleDraftInput of a transferred request without draft "
        "probabilities (0.5.14 eagle_disaggregation.py:53-58; 0.5.21 :99-108). Eager, `torch.stack` meets None; "
        "on the draft CUDA graph the replay skips the copy and reads whatever the buffer held (0.5.21 "
        "eagle_draft_cuda_graph_runner.py:619-623), so the first verify accepts against a wrong proposal; merged "
        "into a running batch, EagleDraftInput.merge_batch keeps only the running rows (eagle_info.py:296-297). "
        "0.5.22 gives the first verify a one-hot proposal of the received token (`pd_first_draft_proposal`, "
        "eagle_disaggregation.py:25-47, :124-135).",
        fix="Drop `--speculative-use-rejection-sampling` on the decode node (verify then matches tokens), or "
        "upgrade to 0.5.22 (the only way where ROCm turned it on by itself).",
        fix_safety="Unsafe: sampled requests are verified by token matching instead of rejection sampling.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE_CHAIN, MODE, "decode", REJECTION),
        sglang_version="0.5.21",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE_CHAIN, MODE, "decode", REJECTION),
        sglang_version="0.5.22",
    ),
    sources=(
        "sglang 0.5.13: python/sglang/srt/server_args.py (no --speculative-use-rejection-sampling)",
        "sglang 0.5.14: python/sglang/srt/speculative/eagle_disaggregation.py:53-58; speculative/eagle_worker_v2.py:602,702-713",
        "sglang 0.5.21: python/sglang/srt/speculative/eagle_disaggregation.py:99-108",
        "sglang 0.5.21: python/sglang/srt/speculative/eagle_worker_v2.py:718-719,838-840",
        "sglang 0.5.21: python/sglang/srt/speculative/eagle_draft_cuda_graph_runner.py:619-623; speculative/eagle_info.py:296-297",
        "sglang 0.5.22: python/sglang/srt/speculative/eagle_disaggregation.py:25-47,124-135 (pd_first_draft_proposal)",
    ),
)
