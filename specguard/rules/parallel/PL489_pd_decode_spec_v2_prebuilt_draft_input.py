"""PL489 pd-decode-spec-v2-prebuilt-draft-input."""

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
from specguard.sglang_facts.changes import SPEC_V2_ENV_ADDED, spec_v2_algorithms

BETA_FLAG = "--enable-beta-spec"
SPEC_V2_ENV = "SGLANG_ENABLE_SPEC_V2"


def _spec_v2_switch(ctx: CheckContext) -> Edit | None:
    """How this launch turns the overlap (SpecV2) EAGLE worker on, as the edit that turns it off; None when
    it runs the V1 worker. 0.5.3.post2 to 0.5.4 read --enable-beta-spec (0.5.4 server_args.py:1296-1305): it
    turns the overlap scheduler back on for EAGLE only, so an EAGLE3 launch with --disable-overlap-schedule keeps
    the V1 worker (scheduler.py:562-564). From 0.5.4.post1 the variable decides, which the resolution follows."""
    if not SPEC_V2_ENV_ADDED.present_in(ctx.version):
        overlap_kept_off = ctx.algorithm != "EAGLE" and ctx.spec.get(
            "disable_overlap_schedule"
        )
        return (
            Edit(name=BETA_FLAG, value=None)
            if ctx.spec.has(BETA_FLAG) and not overlap_kept_off
            else None
        )
    if ctx.resolution.disable_overlap_schedule is False:
        return Edit(target="env", name=SPEC_V2_ENV, value=None)
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.spec.last_value(
        "--disaggregation-mode"
    ) != "decode" or ctx.algorithm not in spec_v2_algorithms(ctx.version):
        return
    switch = _spec_v2_switch(ctx)
    if switch is None:
        return
    what = ctx.flag(BETA_FLAG) if switch.target == "flag" else f"{SPEC_V2_ENV}=1"
    yield RULE.finding(
        f"a PD decode node running {ctx.algorithm} on the overlap (SpecV2) worker ({what}) in SGLang {ctx.version}: "
        "the batch built for each request the prefill node hands over carries a draft input without "
        "allocate_lens and without future-map slots, which the overlap worker reads on the first decode step, so "
        f"the decode scheduler crashes as soon as transferred requests start decoding. Turn SpecV2 off ({what} "
        "removed), or upgrade to 0.5.5.post3",
        flags=("--disaggregation-mode", BETA_FLAG)
        if switch.target == "flag"
        else ("--disaggregation-mode",),
        fix=fix_of(f"turn SpecV2 off ({what} removed)", Applicability.UNSAFE, switch),
    )


PD_DECODE_EAGLE = (
    "--model-path",
    "meta-llama/Llama-3.1-8B-Instruct",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-draft-model-path",
    "lmsys/sglang-EAGLE-LLaMA3-Instruct-8B",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
    "--disaggregation-mode",
    "decode",
)

RULE = Rule(
    check=check,
    code="PL489",
    category=Category.CRASH,
    name="pd-decode-spec-v2-prebuilt-draft-input",
    summary="A PD decode node on the overlap (SpecV2) EAGLE worker crashes on transferred requests "
    "(0.5.3.post2-0.5.5.post2)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--disaggregation-mode decode` with EAGLE/EAGLE3/NEXTN on the SpecV2 worker: `--enable-beta-spec` in "
        "0.5.3.post2 to 0.5.4, `SGLANG_ENABLE_SPEC_V2=1` from 0.5.4.post1 to 0.5.5.post2 (where the variable keeps the overlap "
        "scheduler on).",
        why="The SpecV2 decode allocates KV by the draft input's `allocate_lens` (0.5.3.post2 "
        "managers/schedule_batch.py:1064-1089 `allocate_for_eagle_v2`, from `prepare_for_decode` :1524-1526; 0.5.4 "
        "speculative/eagle_info_v2.py:80-103; 0.5.5.post2 :82-105), and the overlap scheduler reads each batch's "
        "draft input back from the future map (managers/overlap_utils.py:101-113 in 0.5.5.post2). The decode "
        "node's `process_prebuilt` (0.5.4 `process_prebuilt_extend`, disaggregation/decode_schedule_batch_mixin.py"
        ":103; 0.5.3.post2 :163-169) builds the transferred requests' EagleDraftInput without `allocate_lens` and never stores it in "
        "the future map (0.5.5.post2 :104-172), so the first decode of a transferred request fails. 0.5.5.post3 "
        "sets `new_seq_lens`/`allocate_lens` and stores the input when overlap is on (:104, 166-183). 0.5.3.post1 has "
        "no SpecV2 worker (no --enable-beta-spec).",
        fix="Turn SpecV2 off (drop `--enable-beta-spec` / unset `SGLANG_ENABLE_SPEC_V2`), or upgrade to 0.5.5.post3.",
        fix_safety="Unsafe: the decode node runs the V1 worker without the overlap scheduler (slower).",
    ),
    bad=Example(
        argv=PD_DECODE_EAGLE, env={SPEC_V2_ENV: "1"}, sglang_version="0.5.5.post2"
    ),
    good=Example(
        argv=PD_DECODE_EAGLE, env={SPEC_V2_ENV: "1"}, sglang_version="0.5.5.post3"
    ),
    sources=(
        "sglang 0.5.3.post1: python/sglang/srt/server_args.py (no enable_beta_spec)",
        "sglang 0.5.3.post2: python/sglang/srt/managers/schedule_batch.py:1064-1089,1516-1526",
        "sglang 0.5.3.post2: python/sglang/srt/disaggregation/decode_schedule_batch_mixin.py:163-169",
        "sglang 0.5.3.post2: python/sglang/srt/server_args.py:1179-1189",
        "sglang 0.5.4: python/sglang/srt/server_args.py:1296-1305; speculative/eagle_info_v2.py:80-103",
        "sglang 0.5.4: python/sglang/srt/managers/scheduler.py:562-564 (EAGLEWorkerV2 only with overlap on)",
        "sglang 0.5.4: python/sglang/srt/disaggregation/decode_schedule_batch_mixin.py:103 (process_prebuilt_extend)",
        "sglang 0.5.5.post2: python/sglang/srt/disaggregation/decode_schedule_batch_mixin.py:104-172",
        "sglang 0.5.5.post2: python/sglang/srt/managers/overlap_utils.py:101-113; server_args.py:1526-1539",
        "sglang 0.5.5.post3: python/sglang/srt/disaggregation/decode_schedule_batch_mixin.py:104,166-183",
    ),
    sglang_versions=">=0.5.3.post2,<=0.5.5.post2",
)
