"""FX510 two-batch-overlap-spec-v2-eager-verify-split."""

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
from specguard.rules.spec_params._spec_v2 import (
    BETA,
    ENV,
    beta_spec_flag,
    runs_overlapped_spec_v2,
    v2_switch,
)
from specguard.sglang_facts.changes import Change

TBO = "--enable-two-batch-overlap"
A2A = "--moe-a2a-backend"
NO_GRAPHS = "--disable-cuda-graph"
# Two-batch overlap splits a batch only where the scheduler syncs MLP inputs: DP attention, or an MoE
# all-to-all backend (0.5.11 utils/common.py:2990-3011 require_attn_tp_gather / require_mlp_sync); from 0.5.8
# SGLang refuses TBO without an all-to-all backend anyway ("When enabling two batch overlap, moe_a2a_backend
# cannot be 'none'.", 0.5.11 server_args.py:6937-6940). The rule speaks only with a backend named.
NO_A2A = "none"
# The V2 verify input leaves seq_lens_cpu None (0.5.11 speculative/eagle_worker_v2.py:390-404), while the TBO
# split of a verify batch reads it for the custom mask (0.5.11 batch_overlap/two_batch_overlap.py:180-211:
# `spec_info.seq_lens_cpu.shape[0]`), so Python raises:
# "AttributeError: 'NoneType' object has no attribute 'shape'"
VERIFY_SPLIT_FIXED = Change(
    "0.5.12",
    "0.5.12 speculative/eagle_info_v2.py:299-302 prepare_for_v2_verify sets seq_lens_cpu/seq_lens_sum on the verify "
    "input for TBO's split_spec_info; 0.5.11 eagle_info_v2.py:242- does not",
)
# Up to 0.5.5 ForwardBatch.init_new splits every TBO batch, so CUDA-graph replays too (0.5.5
# model_executor/forward_batch_info.py:454); from 0.5.6 only the eager forward splits (prepare_mlp_sync_batch,
# 0.5.6 forward_batch_info.py:797, reached when no graph runs: model_runner.py:2679-2689).
SPLIT_ONLY_WHEN_EAGER = Change(
    "0.5.6",
    "0.5.6 model_executor/forward_batch_info.py:797 (TboForwardBatchPreparer.prepare moved into "
    "prepare_mlp_sync_batch); 0.5.5 forward_batch_info.py:454 calls it from init_new",
)
# No log signature: the same AttributeError is AB007's and many other bugs' (tests/launch/test_signatures.py).
SHAPE_ERROR = "AttributeError: 'NoneType' object has no attribute 'shape'"


def _every_verify_eager_or_split(ctx: CheckContext) -> bool:
    """Whether every verify batch goes through the TBO split: before 0.5.6 always, later only without CUDA graphs."""
    return not SPLIT_ONLY_WHEN_EAGER.present_in(ctx.version) or bool(
        ctx.spec.get("disable_cuda_graph")
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if VERIFY_SPLIT_FIXED.present_in(ctx.version) or not ctx.spec.has(TBO):
        return
    backend = ctx.spec.last_value(A2A)
    if backend is None or backend == NO_A2A or not runs_overlapped_spec_v2(ctx):
        return
    if not _every_verify_eager_or_split(ctx):
        return
    when = (
        f"with {ctx.flag(NO_GRAPHS)} every verify runs eager and"
        if SPLIT_ONLY_WHEN_EAGER.present_in(ctx.version)
        else "every verify batch"
    )
    to_v1 = f"without {ctx.flag(BETA)}" if beta_spec_flag(ctx) else f"{ENV}=0"
    yield RULE.finding(
        f"{ctx.flag(TBO)} with {ctx.algorithm} on the SpecV2 worker ({v2_switch(ctx)}) in SGLang {ctx.version}: "
        f"{when} is split in two by two-batch overlap, which slices the draft tree mask by the verify input's "
        "seq_lens_cpu, left None by the V2 worker, so the first verify fails with "
        f'"{SHAPE_ERROR}" (fixed in 0.5.12). Drop {ctx.flag(TBO)}, run the V1 worker ({to_v1}), or upgrade',
        flags=(TBO, "--speculative-algorithm"),
        fix=fix_of(f"drop {TBO}", Applicability.UNSAFE, Edit(name=TBO, value=None)),
    )


_DEEPSEEK_V3_MTP_TBO = (
    "--model-path", "deepseek-ai/DeepSeek-V3", "--tp-size", "8",
    "--speculative-algorithm", "NEXTN",
    "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
    A2A, "deepep", TBO,
)  # fmt: skip

RULE = Rule(
    check=check,
    code="FX510",
    category=Category.CRASH,
    name="two-batch-overlap-spec-v2-eager-verify-split",
    summary="--enable-two-batch-overlap with EAGLE on the SpecV2 worker crashes splitting a verify batch (up to 0.5.11)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--enable-two-batch-overlap` with an MoE all-to-all backend (`--moe-a2a-backend` other than none) and "
        "EAGLE/NEXTN, EAGLE3 or STANDALONE on the SpecV2 worker with the overlap scheduler on (`--enable-beta-spec`, "
        "`SGLANG_ENABLE_SPEC_V2=1`, or the 0.5.11 default), SGLang 0.5.3.post2 to 0.5.11: in 0.5.3.post2-0.5.5 "
        "always, from 0.5.6 with `--disable-cuda-graph`.",
        why="The V2 worker builds its verify input with `seq_lens_cpu=None` (0.5.11 speculative/eagle_worker_v2.py:"
        "390-404; 0.5.3.post2 :149) and `prepare_for_v2_verify` never fills it (0.5.11 eagle_info_v2.py:242-). "
        "Two-batch overlap splits a verify batch with `split_spec_info`, which slices the tree mask (always built, "
        "speculative/eagle_utils.py build_tree_kernel_efficient) by `spec_info.seq_lens_cpu.shape[0]` "
        "(0.5.11 batch_overlap/two_batch_overlap.py:180-211; 0.5.3.post2 two_batch_overlap.py:177-200): an "
        "AttributeError on the first verify. Up to 0.5.5 `ForwardBatch.init_new` splits every batch "
        "(forward_batch_info.py:454); from 0.5.6 the split happens in `prepare_mlp_sync_batch` "
        "(forward_batch_info.py:797; 0.5.11 :925), which only the eager forward reaches (0.5.11 model_runner.py:"
        "3221-3232), so with CUDA graphs on only batches above the graph size fail (not judged here). CUDA-graph "
        "capture passes (its verify input has no draft tokens, cuda_graph_runner.py:1372-1386). 0.5.12 sets "
        "`seq_lens_cpu` in `prepare_for_v2_verify` (eagle_info_v2.py:299-302). The V1 worker fills it.",
        fix="Drop `--enable-two-batch-overlap`, run the V1 worker (`SGLANG_ENABLE_SPEC_V2=0`), or upgrade to 0.5.12.",
        fix_safety="Unsafe: without two-batch overlap the MoE all-to-all no longer overlaps compute (slower).",
    ),
    bad=Example(
        argv=(*_DEEPSEEK_V3_MTP_TBO, NO_GRAPHS),
        target={
            "architectures": ("DeepseekV3ForCausalLM",),
            "num_nextn_predict_layers": 1,
        },
        sglang_version="0.5.11",
    ),
    good=Example(
        argv=(*_DEEPSEEK_V3_MTP_TBO, NO_GRAPHS),
        target={
            "architectures": ("DeepseekV3ForCausalLM",),
            "num_nextn_predict_layers": 1,
        },
        sglang_version="0.5.12",
    ),
    sources=(
        "sglang 0.5.3.post2: python/sglang/srt/speculative/eagle_worker_v2.py:149",
        "sglang 0.5.3.post2: python/sglang/srt/two_batch_overlap.py:177-200",
        "sglang 0.5.5: python/sglang/srt/model_executor/forward_batch_info.py:454",
        "sglang 0.5.6: python/sglang/srt/model_executor/forward_batch_info.py:797",
        "sglang 0.5.6: python/sglang/srt/model_executor/model_runner.py:2679-2689",
        "sglang 0.5.11: python/sglang/srt/speculative/eagle_worker_v2.py:390-404",
        "sglang 0.5.11: python/sglang/srt/batch_overlap/two_batch_overlap.py:180-211,655-688",
        "sglang 0.5.11: python/sglang/srt/model_executor/forward_batch_info.py:925-927",
        "sglang 0.5.11: python/sglang/srt/model_executor/model_runner.py:3221-3232",
        "sglang 0.5.11: python/sglang/srt/utils/common.py:2990-3011",
        "sglang 0.5.11: python/sglang/srt/server_args.py:6937-6940",
        "sglang 0.5.12: python/sglang/srt/speculative/eagle_info_v2.py:299-302",
    ),
    sglang_versions=">=0.5.3.post2,<=0.5.11",
)
