"""PL382 pd-ngram-embedding-table-unfilled."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, ModelFacts, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)

PD_MODE = "--disaggregation-mode"
# The config class SGLang registers for this model_type derives use_ngram_embedding from the ratio.
LONGCAT_FLASH_MODEL_TYPE = "longcat_flash"
LONGCAT_NEXTN = (
    "--model-path",
    "/models/longcat-flash-ngram",
    "--speculative-algorithm",
    "NEXTN",
    "--tp",
    "8",
)
TARGET = {"model_type": LONGCAT_FLASH_MODEL_TYPE, "ngram_vocab_size_ratio": 0.5}


def uses_ngram_embedding(target: ModelFacts | None) -> bool | None:
    """SGLang's ModelConfig.use_ngram_embedding for this config.json; None when the config is unknown."""
    if target is None or target.model_type is None:
        return None
    if target.model_type == LONGCAT_FLASH_MODEL_TYPE:
        return target.ngram_vocab_size_ratio is not None
    return target.use_ngram_embedding is True


def check(ctx: CheckContext) -> Iterator[Finding]:
    role = ctx.spec.get("disaggregation_mode")
    if (
        ctx.algorithm is None
        or role not in ("prefill", "decode")
        or not uses_ngram_embedding(ctx.target)
    ):
        return
    yield RULE.finding(
        f"A target with n-gram embedding (LongCat) on a PD {role} node in SGLang {ctx.version}: the PD event loops "
        "never fill the n-gram token table, so a forward without a CUDA graph hands the n-gram kernel no table and "
        "the scheduler dies at the first prefill or eager decode, and a graph replay reads a table never filled for "
        "these requests (wrong embeddings, wrong output). Fixed in 0.5.16; serve it colocated (no "
        f"{ctx.flag(PD_MODE)}) on this release",
        flags=(PD_MODE,),
    )


RULE = Rule(
    check=check,
    code="PL382",
    category=Category.CRASH,
    name="pd-ngram-embedding-table-unfilled",
    summary="A target with n-gram embedding (LongCat) on a PD prefill/decode node never gets its token table filled (0.5.10rc0-0.5.15.post1)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="A speculative launch with `--disaggregation-mode` prefill or decode whose target uses n-gram "
        "embedding: config.json `model_type` `longcat_flash` with `ngram_vocab_size_ratio` set, or "
        "`use_ngram_embedding: true` for another config; SGLang 0.5.10rc0 to 0.5.15.post1.",
        why="0.5.10rc0 added LongCat's n-gram embedding: `ModelConfig.use_ngram_embedding` reads the config's "
        "`use_ngram_embedding` (0.5.10rc0 configs/model_config.py:206, 0.5.15.post1 :430), which `LongcatFlashConfig` "
        "sets to `ngram_vocab_size_ratio is not None` (configs/longcat_flash.py:108). Only the colocated "
        "`Scheduler.get_next_batch_to_run` fills the token table and hands it to the batch "
        "(`_maybe_prepare_ngram_embedding`, 0.5.10rc0 managers/scheduler.py:1113, 2226; 0.5.15.post1 :1313-1356, "
        ":2728); the PD loops take `get_next_disagg_prefill_batch_to_run` / `get_next_disagg_decode_batch_to_run` "
        "(0.5.15.post1 disaggregation/prefill.py:484, decode.py:1804) and never call it. The forward batch then "
        "carries `ne_token_table=None` into `NgramEmbeddingInfo` (model_executor/forward_batch_info.py:842-843, "
        "995-1006), and `NgramEmbedding.forward` passes it to `compute_n_gram_ids` (layers/n_gram_embedding.py:134-172), "
        "a JIT kernel whose table is a non-optional `tvm::ffi::TensorView` (jit_kernel/csrc/ngram_embedding.cuh:193-204); "
        "the decode CUDA graph captures `model_runner.token_table` instead (runner/decode_cuda_graph_runner.py:201-202, "
        "328), which these requests never wrote. 0.5.16 calls `ngram_embedding_manager.prepare_for_forward` in both "
        "PD loops (disaggregation/prefill.py:524-526, decode.py:2004-2006). The exact error text is not quoted here.",
        fix="Upgrade to 0.5.16 or later, or serve the model without PD disaggregation.",
        fix_safety="No automatic fix: leaving PD changes the deployment.",
    ),
    bad=Example(
        argv=(*LONGCAT_NEXTN, PD_MODE, "prefill"),
        target=TARGET,
        sglang_version="0.5.15.post1",
    ),
    good=Example(argv=LONGCAT_NEXTN, target=TARGET, sglang_version="0.5.15.post1"),
    sources=(
        "sglang 0.5.9: python/sglang/srt/configs/model_config.py (no use_ngram_embedding)",
        "sglang 0.5.10rc0: python/sglang/srt/configs/model_config.py:206; configs/longcat_flash.py:108",
        "sglang 0.5.10rc0: python/sglang/srt/managers/scheduler.py:1113, 2226",
        "sglang 0.5.15.post1: python/sglang/srt/managers/scheduler.py:1313-1356, 2728",
        "sglang 0.5.15.post1: python/sglang/srt/disaggregation/prefill.py:484; disaggregation/decode.py:1804",
        "sglang 0.5.15.post1: python/sglang/srt/model_executor/forward_batch_info.py:842-843, 995-1006",
        "sglang 0.5.15.post1: python/sglang/srt/layers/n_gram_embedding.py:134-172",
        "sglang 0.5.15.post1: python/sglang/jit_kernel/csrc/ngram_embedding.cuh:193-204",
        "sglang 0.5.16: python/sglang/srt/disaggregation/prefill.py:524-526; disaggregation/decode.py:2004-2006",
    ),
    sglang_versions=">=0.5.10rc0,<=0.5.15.post1",
)
