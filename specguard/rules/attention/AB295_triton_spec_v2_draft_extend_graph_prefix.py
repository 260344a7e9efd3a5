"""AB295 triton-spec-v2-draft-extend-graph-prefix."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE3_CHAIN
from specguard.rules.spec_params._spec_v2 import (
    ENV,
    runs_overlapped_spec_v2,
)

DRAFT_BACKEND = "--speculative-draft-attention-backend"


def draft_extend_backend(ctx: CheckContext) -> str | None:
    """The backend of the V2 draft extend: --speculative-draft-attention-backend, else the prefill (or,
    with --speculative-attention-mode decode, the decode) backend, else the target's
    (0.5.12.post1 speculative/draft_utils.py:21-37, 69-98)."""
    typed = ctx.spec.get("speculative_draft_attention_backend")
    if typed:
        return str(typed)
    mode = ctx.spec.item("--speculative-attention-mode")
    phase = (
        "decode_attention_backend"
        if mode is not None and mode.values and mode.values[-1] == "decode"
        else "prefill_attention_backend"
    )
    return ctx.spec.get(phase) or ctx.resolution.attention_backend


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.spec.get("disable_cuda_graph") or ctx.spec.has("--enable-multi-layer-eagle"):
        return
    gpu = ctx.env.gpu
    if (gpu is not None and gpu.platform != "cuda") or ctx.spec.get("device") not in (
        None,
        "cuda",
    ):
        return  # the CUDA draft-extend graph is captured on CUDA (and MUSA) only
    if draft_extend_backend(ctx) != "triton" or not runs_overlapped_spec_v2(ctx):
        return
    yield RULE.finding(
        f"{ctx.algorithm} on the SpecV2 worker with a triton draft extend and CUDA graphs in SGLang {ctx.version}: the "
        "graphed draft extend builds its KV indices from the sequence lengths already bumped by the draft tokens, so "
        "the draft attends the new tokens a second time, unmasked, and its next proposals get worse (lower acceptance, "
        "outputs stay correct). Fixed in 0.5.13; otherwise run the V1 worker "
        f"({ENV}=0) or give the draft another backend with {ctx.flag(DRAFT_BACKEND)}",
        flags=("--speculative-algorithm", "--attention-backend", DRAFT_BACKEND),
        fix=fix_of(
            f"set {ENV}=0 (the V1 worker)",
            Applicability.UNSAFE,
            Edit(target="env", name=ENV, value="0"),
        ),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB295",
    category=Category.PERF,
    name="triton-spec-v2-draft-extend-graph-prefix",
    summary="SpecV2 with a triton draft extend under CUDA graphs (0.5.10-0.5.12.post1): the draft attends its new tokens twice",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3, NEXTN or STANDALONE on the SpecV2 overlap worker (`SGLANG_ENABLE_SPEC_V2=1` in "
        "0.5.10-0.5.10.post1, the default in 0.5.11-0.5.12.post1) whose draft extend runs on triton "
        "(`--speculative-draft-attention-backend triton`, else the prefill backend, else `--attention-backend` or "
        "SGLang's default), with CUDA graphs on, on CUDA.",
        why="The V2 worker captures the draft extend in a CUDA graph when its backend is triton "
        "(0.5.10 speculative/eagle_worker_v2.py:296-312; 0.5.12.post1 :313-330). Before the extend, "
        "`prepare_for_extend_to_fill_draft_kvcache` bumps `seq_lens` by the draft tokens (0.5.10 "
        "speculative/eagle_info_v2.py:193-196) and the graph runner hands those lengths to the backend "
        "(eagle_draft_extend_cuda_graph_runner.py:445, 496-500). The triton replay branch for the draft extend builds "
        "`kv_indptr`/`kv_indices` from them (0.5.10 layers/attention/triton_backend.py:762-784; 0.5.12.post1 "
        ":846-868), while the eager path covers only `extend_prefix_lens` (0.5.12.post1 :430-466) and the extend K/V "
        "are passed separately, so under the graph each draft token sees the new tokens twice and without the causal "
        "mask. 0.5.13 builds them from the prefix only (`_update_draft_extend_buffers`, triton_backend.py:427-470: "
        '"kv_indptr/kv_indices must cover only the prefix portion", PR 26651). Before 0.5.10 the graph was chosen '
        "by the draft decode backend (0.5.10rc0 eagle_worker_v2.py:296-299) and 0.5.8-0.5.9 size the graphed query by "
        "the accept lengths (0.5.9 triton_backend.py:760-775): other layouts, which this rule does not judge. "
        "The verify still checks every token, so only the acceptance suffers.",
        fix="Upgrade to 0.5.13 or later, run the V1 worker (`SGLANG_ENABLE_SPEC_V2=0`), or give the draft another "
        "backend with `--speculative-draft-attention-backend` (fa3 or flashinfer where the GPU has them).",
        fix_safety="Unsafe: the V1 worker runs without the overlap scheduler (slower).",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3_CHAIN, "--attention-backend", "triton"),
        gpu="H100",
        sglang_version="0.5.12.post1",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3_CHAIN, "--attention-backend", "triton"),
        gpu="H100",
        sglang_version="0.5.13",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/pull/26651",
        "sglang 0.5.10rc0: python/sglang/srt/speculative/eagle_worker_v2.py:296-299 (graph chosen by the draft decode backend)",
        "sglang 0.5.10: python/sglang/srt/speculative/eagle_worker_v2.py:296-312",
        "sglang 0.5.10: python/sglang/srt/layers/attention/triton_backend.py:762-784",
        "sglang 0.5.10: python/sglang/srt/speculative/eagle_info_v2.py:193-196",
        "sglang 0.5.10: python/sglang/srt/speculative/eagle_draft_extend_cuda_graph_runner.py:445,496-500",
        "sglang 0.5.12.post1: python/sglang/srt/speculative/eagle_worker_v2.py:313-330",
        "sglang 0.5.12.post1: python/sglang/srt/speculative/draft_utils.py:21-37,69-98",
        "sglang 0.5.12.post1: python/sglang/srt/layers/attention/triton_backend.py:430-466,846-868",
        "sglang 0.5.13: python/sglang/srt/layers/attention/triton_backend.py:427-470",
    ),
    sglang_versions=">=0.5.10,<=0.5.12.post1",
)
