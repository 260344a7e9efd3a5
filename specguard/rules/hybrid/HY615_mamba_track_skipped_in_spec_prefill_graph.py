"""HY615 mamba-track-skipped-in-spec-prefill-graph."""

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
from specguard.rules.hybrid._hybrid import mamba_strategy, runs_extra_buffer
from specguard.sglang_facts.changes import Change

# The prefill CUDA graph backend on CUDA is breakable (BCG) from 0.5.15 (model_executor/cuda_graph_config.py:101);
# 0.5.14 defaults to tc_piecewise, on which an EAGLE target runs its prefill eagerly (model_runner.py:2616-2632).
BREAKABLE_PREFILL_DEFAULT = Change(
    "0.5.15",
    "0.5.15 model_executor/cuda_graph_config.py:101 (0.5.14 :90-92 tc_piecewise)",
)
# 0.5.17 turns BCG prefill off for Nemotron-H for this very reason ('the mamba state-track write is not wired into the
# captured buffers, so a replay can commit a cache slot it never wrote', server_args.py:4473-4479).
NEMOTRON_H_BCG_OFF = Change("0.5.17", "0.5.17 server_args.py:4473-4479 (0.5.16 :3763-3815 has no such rule)")
# Nemotron-H's Mamba2 layers run eagerly between graph segments on the replayed static batch (0.5.15 models/nemotron_h.py:
# 561-565, 1205-1242) and save the prefix conv and SSM state only when that batch carries a track mask
# (layers/attention/mamba/mamba.py:568-575, hybrid_linear_attn_backend.py:766). Qwen3-Next's GDN layers save it from
# metadata built on the live batch (prefill_cuda_graph_runner.py:544-546, gdn_backend.py:293-299, 474, 559), so they
# are not affected; Falcon-H1 calls its mamba block inside a captured segment (falcon_h1.py:339-351), which this rule
# does not follow.
NEMOTRON_H_TARGETS = frozenset({"NemotronHForCausalLM", "NemotronHPuzzleForCausalLM"})
PREFILL_GRAPH = "--disable-prefill-cuda-graph"
# Launch options with which no BCG prefill graph runs in 0.5.15-0.5.16: graphs off or another backend chosen, a
# decode-only PD server, and the BCG incompatibility rules (LoRA, DP attention, MoE all-to-all, context parallel;
# server_args.py as above). Two-batch overlap, refused only from 0.5.17, is left quiet.
NO_BCG_FLAGS = (
    "--disable-cuda-graph",
    PREFILL_GRAPH,
    "--cuda-graph-config",
    "--enable-lora",
    "--lora-paths",
    "--enable-dp-attention",
    "--moe-a2a-backend",
    "--enable-two-batch-overlap",
    "--attn-cp-size",
    "--enable-prefill-cp",
)


def _runs_bcg_prefill(ctx: CheckContext) -> bool:
    gpu = ctx.env.gpu
    if gpu is None or gpu.platform != "cuda":
        return False  # BCG is the default on CUDA only (cuda_graph_config.py:101)
    if any(ctx.spec.has(flag) for flag in NO_BCG_FLAGS):
        return False
    backend = ctx.spec.last_value("--cuda-graph-backend-prefill")
    if backend not in (None, "breakable"):
        return False
    dcp = ctx.spec.last_value("--dcp-size")
    return ctx.spec.get("disaggregation_mode") != "decode" and dcp in (None, "1")


def check(ctx: CheckContext) -> Iterator[Finding]:
    version = ctx.version
    if ctx.algorithm is None or not BREAKABLE_PREFILL_DEFAULT.present_in(version):
        return
    if NEMOTRON_H_BCG_OFF.present_in(version) or ctx.target is None:
        return
    arch = ctx.target.architecture
    if arch not in NEMOTRON_H_TARGETS:
        return
    if (
        ctx.spec.has("--disable-radix-cache")
        or not runs_extra_buffer(ctx)
        or not _runs_bcg_prefill(ctx)
    ):
        return
    yield RULE.finding(
        f"{ctx.algorithm} on {arch} with mamba state tracking ({mamba_strategy(ctx)} strategy) in SGLang {version}: "
        "prefill batches replay the breakable prefill CUDA graph, whose static batch under speculative decoding carries "
        "no mamba track mask, so the Mamba2 layers never write the prefix conv and SSM checkpoints the radix cache then "
        "stores; later requests that hit those prefixes resume from state that was never saved and can generate wrong "
        f"text. Add {ctx.flag(PREFILL_GRAPH)} (prefill runs eagerly), or move to SGLang 0.5.17, which turns breakable "
        "prefill graphs off for Nemotron-H",
        flags=("--speculative-algorithm",),
        fix=fix_of(
            f"run prefill eagerly ({PREFILL_GRAPH})",
            Applicability.UNSAFE,
            Edit(name=PREFILL_GRAPH, value=True),
        ),
    )


_NEMOTRON_H_MTP = (
    "--model-path",
    "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
    "--speculative-algorithm",
    "NEXTN",
    "--mamba-radix-cache-strategy",
    "extra_buffer",
)
_NEMOTRON_H = {"architectures": ("NemotronHForCausalLM",)}

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="HY615",
    category=Category.WRONG_OUTPUT,
    name="mamba-track-skipped-in-spec-prefill-graph",
    summary="Speculative decoding on Nemotron-H with mamba state tracking replays prefill CUDA graphs that skip the "
    "prefix mamba checkpoints (0.5.15-0.5.16)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="Any `--speculative-algorithm` on Nemotron-H on a CUDA GPU with the mamba radix cache tracking state "
        "(`--mamba-radix-cache-strategy extra_buffer` or `extra_buffer_lazy`, or `auto` resolving to extra_buffer) and "
        "the default breakable prefill CUDA graph, SGLang 0.5.15 and 0.5.16. Qwen3-Next is not affected (its GDN "
        "layers save the track state from metadata built on the live batch); Falcon-H1 runs its mamba block inside a "
        "captured segment, which this rule does not follow, so it stays quiet there.",
        why="The prefill graph runner registers the mamba track buffers (indices, mask, seqlens) only when "
        "`_is_mamba_track_enabled` holds, which until 0.5.17 requires `spec_algorithm.is_none()` (0.5.15 "
        "model_executor/runner/prefill_cuda_graph_runner.py:363-368; 0.5.16 :368-373), so under speculation the static "
        "forward batch a replay builds has no track mask (0.5.15 load_batch :839-898). Nemotron-H's Mamba2 layers run "
        "eagerly between graph segments on that static batch (models/nemotron_h.py:561-565, 1205-1242, reading "
        "`context.forward_batch`), and Mamba2 saves the prefix conv state and SSM state only when the batch carries "
        "the mask (layers/attention/mamba/mamba.py:568-575; hybrid_linear_attn_backend.py:766), so the extend never "
        "writes the checkpoint slot the extra_buffer radix cache then stores and restores. SGLang's own comment when "
        "0.5.17 turned breakable prefill off for Nemotron-H says it plainly: 'the mamba state-track write is not wired "
        "into the captured buffers, so a replay can commit a cache slot it never wrote' (0.5.17 server_args.py:"
        "4473-4479). GDN layers (Qwen3-Next) also run eagerly but take has_mamba_track_mask and the track indices from "
        "the backend metadata, which the replay builds from the live batch (prefill_cuda_graph_runner.py:544-546; "
        "linear/gdn_backend.py:293-299, 474, 559), so their checkpoints are written. Breakable prefill graphs are the "
        "CUDA default from 0.5.15 (cuda_graph_config.py:101; 0.5.14 defaults to tc_piecewise, where an EAGLE target "
        "prefills eagerly, model_runner.py:2616-2632).",
        fix="Run prefill without CUDA graphs (`--disable-prefill-cuda-graph`), or upgrade to 0.5.17.",
        fix_safety="Unsafe: eager prefill is slower for short prompts.",
    ),
    bad=Example(
        argv=_NEMOTRON_H_MTP, target=_NEMOTRON_H, gpu="H100", sglang_version="0.5.16"
    ),
    good=Example(
        argv=(*_NEMOTRON_H_MTP, PREFILL_GRAPH),
        target=_NEMOTRON_H,
        gpu="H100",
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.14: python/sglang/srt/model_executor/cuda_graph_config.py:90-92; model_executor/model_runner.py:2616-2632",
        (
            "sglang 0.5.15: python/sglang/srt/model_executor/cuda_graph_config.py:101; "
            "model_executor/runner/prefill_cuda_graph_runner.py:363-368,544-546,839-898; server_args.py:3341-3390"
        ),
        (
            "sglang 0.5.15: python/sglang/srt/models/nemotron_h.py:561-565,1205-1242; "
            "layers/attention/mamba/mamba.py:568-575; layers/attention/hybrid_linear_attn_backend.py:766; "
            "layers/attention/linear/gdn_backend.py:293-299,474,559"
        ),
        "sglang 0.5.16: python/sglang/srt/model_executor/runner/prefill_cuda_graph_runner.py:368-373; server_args.py:3763-3815",
        "sglang 0.5.17: python/sglang/srt/server_args.py:4473-4479",
    ),
    sglang_versions=">=0.5.15,<=0.5.16",
)
