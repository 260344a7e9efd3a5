"""MM602 dflash-full-prefill-graph-keeps-padded-rows."""

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
from specguard.rules.examples import QWEN3_8B_DFLASH
from specguard.rules.hybrid._hybrid import MAMBA_RADIX_ARCHITECTURES
from specguard.sglang_facts.architectures import GDN_ARCHITECTURES, KDA_ARCHITECTURES

PREFILL_BACKEND = "--cuda-graph-backend-prefill"
# Flags that may turn the prefill graph off or set its backend another way; not read here, so the rule stays quiet.
OTHER_PREFILL_SETTINGS = (
    "--disable-cuda-graph",
    "--disable-prefill-cuda-graph",
    "--cuda-graph-config",
)
# Targets with linear-attention or mamba layers: fewer attention layers than num_hidden_layers, for which SGLang
# skips the prefill CUDA graph altogether (0.5.16 model_runner_components/cuda_graph_setup.py:228-234).
HYBRID_TARGETS = MAMBA_RADIX_ARCHITECTURES | GDN_ARCHITECTURES | KDA_ARCHITECTURES
# What the DFLASH worker raises at the first such prefill (0.5.16 speculative/dflash_worker_v2.py:1042-1046):
# "DFLASH cache_loc length mismatch: cache_loc=37, target_hidden=64."


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DFLASH":
        return  # DSPARK's injector trims the target's hidden rows to the prefill's tokens (0.5.16 dspark_kv_inject.py:46-48)
    if ctx.spec.last_value(PREFILL_BACKEND) != "full" or any(
        ctx.spec.has(flag) for flag in OTHER_PREFILL_SETTINGS
    ):
        return
    target = ctx.target
    if (
        target is None
        or target.architecture is None
        or target.architecture in HYBRID_TARGETS
    ):
        return
    yield RULE.finding(
        f"{ctx.flag(PREFILL_BACKEND)} full with DFLASH in SGLang {ctx.version}: the full prefill graph "
        "replays at a padded token bucket and strips the padding with hs[:num_tokens], which on the target's "
        "(hidden states, auxiliary hidden states) tuple keeps the padded rows; the draft then gets more hidden "
        "rows than the prefill has tokens, and DFLASH fails the first prefill whose length is not a bucket size "
        "with 'DFLASH cache_loc length mismatch'. SGLang 0.5.17 fixes it; until then use another prefill "
        f"backend ({ctx.flag(PREFILL_BACKEND)} breakable)",
        flags=(PREFILL_BACKEND, "--speculative-algorithm"),
        fix=fix_of(
            f"{PREFILL_BACKEND} breakable",
            Applicability.UNSAFE,
            Edit(name=PREFILL_BACKEND, value="breakable"),
        ),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="MM602",
    category=Category.CRASH,
    name="dflash-full-prefill-graph-keeps-padded-rows",
    summary="DFLASH with --cuda-graph-backend-prefill full hands the draft padded target rows and fails "
    "at prefill (0.5.15-0.5.16)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with `--cuda-graph-backend-prefill full` on a "
        "target without linear-attention or mamba layers, SGLang 0.5.15 to 0.5.16.",
        why="0.5.15 allowed the full backend for prefill: one graph per token bucket, replayed with the batch "
        "padded up to the bucket, whose replay returns `hs[:raw_num_tokens] if full_path else hs` (0.5.15 "
        "model_executor/runner/prefill_cuda_graph_runner.py:1013; 0.5.16 :1137). A DFLASH target captures "
        "auxiliary hidden states, so its decoder body returns a `(hidden_states, aux_hidden_states)` tuple "
        "(e.g. 0.5.16 models/llama.py:427), and slicing the tuple keeps it whole: the padded rows stay. The "
        "prefill graph is skipped only for the EAGLE family (0.5.16 "
        "model_runner_components/cuda_graph_setup.py:164-181) and for targets with fewer attention layers than "
        "layers (:228-234), and the full backend has no incompatibility rules (server_args.py:3817-3828). The "
        "DFLASH worker then writes the target's hidden rows into the draft KV by the batch's cache locations and "
        "raises `DFLASH cache_loc length mismatch` when the counts differ (0.5.16 "
        "speculative/dflash_worker_v2.py:1041-1046; 0.5.15 :893-897). 0.5.17 slices every tensor of the nested "
        "output (`_slice_output_rows`, 0.5.17 prefill_cuda_graph_runner.py:173-189, :1638; 0.5.23 :221-237, "
        ":2211); 0.5.14 refused the full backend for prefill. DSPARK is quiet: its prefill injector cuts the target's "
        "hidden rows to the prefill's positions before writing them (0.5.16 "
        "speculative/dspark_components/dspark_kv_inject.py:46-48). Not judged: `--cuda-graph-config`, the disable "
        "flags, or the Inkling default (its class has no capture hook before 0.5.17, DM445).",
        fix="Use another prefill CUDA-graph backend (`breakable`), or SGLang 0.5.17 or later.",
        fix_safety="Unsafe: it changes how prefill is captured (an experimental backend for a supported one).",
    ),
    bad=Example(
        argv=(*QWEN3_8B_DFLASH, PREFILL_BACKEND, "full"),
        target={"architectures": ("Qwen3ForCausalLM",)},
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=(*QWEN3_8B_DFLASH, PREFILL_BACKEND, "full"),
        target={"architectures": ("Qwen3ForCausalLM",)},
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.14: python/sglang/srt/model_executor/runner/prefill_cuda_graph_runner.py:23 (full rejected for prefill)",
        "sglang 0.5.15: python/sglang/srt/model_executor/runner/prefill_cuda_graph_runner.py:274,1013",
        "sglang 0.5.16: python/sglang/srt/model_executor/runner/prefill_cuda_graph_runner.py:276,1115-1137",
        "sglang 0.5.16: python/sglang/srt/model_executor/model_runner_components/cuda_graph_setup.py:164-181,228-234",
        "sglang 0.5.16: python/sglang/srt/speculative/dflash_worker_v2.py:1041-1046",
        "sglang 0.5.16: python/sglang/srt/speculative/dspark_components/dspark_kv_inject.py:46-48",
        "sglang 0.5.17: python/sglang/srt/model_executor/runner/prefill_cuda_graph_runner.py:173-189,1638",
        "sglang 0.5.23: python/sglang/srt/model_executor/runner/prefill_cuda_graph_runner.py:221-237,2211",
    ),
    sglang_versions=">=0.5.15,<0.5.17",
    log_signatures=(
        r"DFLASH cache_loc length mismatch: cache_loc=\d+, target_hidden=\d+",
    ),
)
