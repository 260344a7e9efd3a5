"""HY024 mamba-extra-buffer-verify-none-track."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs
from specguard.rules.hybrid._hybrid import (
    STRATEGY_FLAGS,
    is_mamba_radix_target,
    mamba_strategy,
    runs_extra_buffer,
    strategy_flag,
)
from specguard.rules.hybrid.HY312_mamba_lazy_buffer_spec_refused import (
    lazy_refused_at_start,
)
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import NGRAM_VERIFY_TRACKS_MAMBA


def check(ctx: CheckContext) -> Iterator[Finding]:
    algorithm = ctx.algorithm
    verifies = algorithm in EAGLE_WORKER_ALGORITHMS or (algorithm == "NGRAM" and ctx.version >= NGRAM_VERIFY_TRACKS_MAMBA.release)
    if not verifies or not is_mamba_radix_target(ctx) or not runs_extra_buffer(ctx):
        return
    if lazy_refused_at_start(ctx):
        return  # refused while parsing the arguments (HY312): it never serves
    arch = ctx.target.architecture  # type: ignore[union-attr]
    strategy = mamba_strategy(ctx)
    how = f"{strategy_flag(ctx)} {strategy}" if strategy != "auto" else "'auto', which resolves to extra_buffer here"
    yield RULE.finding(
        f"{arch} with speculative decoding and the mamba extra_buffer tracking ({how}) in SGLang {ctx.version}: "
        "before every target-verify pass SGLang builds the mamba track indices from each request's "
        "mamba_next_track_idx, which is still None for a request that has not been through decode yet or that "
        "finished during the verify step (structured output makes this routine). The scheduler then dies on "
        "every TP rank with \"TypeError: 'NoneType' object cannot be interpreted as an integer\" in "
        "set_mamba_track_indices_from_reqs, minutes into serving. SGLang 0.5.16 guards it (PR 27998); on this "
        f"release use {strategy_flag(ctx)} no_buffer with {ctx.flag('--disable-radix-cache')}",
        flags=tuple(f for f in STRATEGY_FLAGS if ctx.spec.has(f)) or (STRATEGY_FLAGS[0], STRATEGY_FLAGS[1]),
    )


RULE = Rule(
    check=check,
    code="HY024",
    category=Category.CRASH,
    name="mamba-extra-buffer-verify-none-track",
    summary="Speculative decoding on a mamba target with extra_buffer in 0.5.13-0.5.15 crashes on a None track index",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="EAGLE, EAGLE3, NEXTN/MTP or STANDALONE (NGRAM too from 0.5.14) on a hybrid mamba target (Qwen3-Next, "
        "Qwen3.5/3.6, Nemotron-H, Falcon-H1, ...) whose mamba strategy is extra_buffer or extra_buffer_lazy "
        "(typed, or 'auto' resolving to it from 0.5.14), in SGLang 0.5.13 to 0.5.15.",
        why="`set_mamba_track_indices_from_reqs` (0.5.13 managers/schedule_batch.py:1484-1495) turns "
        "`[req.mamba_next_track_idx for req in batch.reqs]` into an int64 tensor; it is called before every "
        "target verify (0.5.13 speculative/eagle_info_v2.py:404-405; 0.5.14 speculative/spec_utils.py:561-572). "
        "The index is None for a request whose ping-pong buffer was never allocated on that path (sglang#27325, "
        "#28484 on 0.5.13, H100 TP1 EAGLE), for one released after finishing in the verify step (sglang#28407, "
        "structured output), and for a fresh request under extra_buffer_lazy (sglang#34786 on 0.5.14). All TP "
        "schedulers die with the TypeError. PR 27998 guards None (first in 0.5.16, schedule_batch.py:1694-1700). "
        "extra_buffer_lazy with a typed --speculative-num-draft-tokens never serves: SGLang refuses it while parsing "
        "the arguments (HY312).",
        fix="Upgrade to 0.5.16 or later; on these releases use `--mamba-scheduler-strategy no_buffer` with "
        "`--disable-radix-cache` (no prefix reuse). No automatic fix.",
        fix_safety="No fix: both ways change what the server caches or which release runs.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen3.6-27B-FP8", "--speculative-algorithm", "EAGLE",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
              "--mamba-scheduler-strategy", "extra_buffer"),
        target={"architectures": ("Qwen3_5ForConditionalGeneration",)},
        gpu="H100",
        sglang_version="0.5.13",
    ),
    good=Example(
        argv=("--model-path", "Qwen/Qwen3.6-27B-FP8", "--speculative-algorithm", "EAGLE",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
              "--mamba-scheduler-strategy", "extra_buffer"),
        target={"architectures": ("Qwen3_5ForConditionalGeneration",)},
        gpu="H100",
        sglang_version="0.5.16",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/27325",
        "https://github.com/sgl-project/sglang/issues/28484",
        "https://github.com/sgl-project/sglang/issues/28312",
        "https://github.com/sgl-project/sglang/issues/28407",
        "https://github.com/sgl-project/sglang/issues/34786",
        "https://github.com/sgl-project/sglang/pull/27998",
        "sglang 0.5.13: python/sglang/srt/managers/schedule_batch.py:1484-1495; speculative/eagle_info_v2.py:404-405",
        "sglang 0.5.14: python/sglang/srt/speculative/spec_utils.py:561-572; server_args.py:4380-4395 (auto)",
        "sglang 0.5.16: python/sglang/srt/managers/schedule_batch.py:1694-1700 (None guarded)",
    ),
    sglang_versions=">=0.5.13,<0.5.16",
    dialects=SGLANG_DIALECTS,
)
