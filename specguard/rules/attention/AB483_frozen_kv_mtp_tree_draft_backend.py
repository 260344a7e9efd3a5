"""AB483 frozen-kv-mtp-tree-draft-backend."""

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
from specguard.rules.draft_model._common import GEMMA4_ASSISTANTS
from specguard.sglang_facts.changes import Change

FROZEN_KV_MTP = "FROZEN_KV_MTP"
DRAFT_BACKEND = "--speculative-draft-attention-backend"
# The flags the Frozen-KV MTP worker reads for its tree-draft backend, first set wins.
BACKEND_FLAGS = (DRAFT_BACKEND, "--decode-attention-backend", "--attention-backend")
TRITON = "triton"
TRTLLM_MHA = "trtllm_mha"
FROZEN_KV_MTP_ADDED = Change(
    "0.5.12", "0.5.12 speculative/frozen_kv_mtp_worker.py (no Frozen-KV MTP in 0.5.11)"
)
TRTLLM_MHA_TREE_DRAFT = Change(
    "0.5.17",
    "0.5.17 speculative/frozen_kv_mtp_worker_v2.py:234-246,261-264 (0.5.16 :231-241 triton only)",
)
# 0.5.12 promotes only Gemma4AssistantForCausalLM (server_args.py:333); 0.5.13 adds the unified assistant.
UNIFIED_ASSISTANT_PROMOTED = Change(
    "0.5.13", "0.5.13 arg_groups/speculative_hook.py:28-31"
)


def _runs_frozen_kv_mtp(ctx: CheckContext) -> bool:
    """FROZEN_KV_MTP as written, or EAGLE/NEXTN (EAGLE once aliased) with a Gemma 4 assistant draft, which
    SGLang promotes to it."""
    written = ctx.spec.get("speculative_algorithm")
    if written == FROZEN_KV_MTP:
        return True
    if ctx.algorithm != "EAGLE" or ctx.draft is None or not ctx.draft.architectures:
        return False
    promoted = (
        GEMMA4_ASSISTANTS
        if UNIFIED_ASSISTANT_PROMOTED.present_in(ctx.version)
        else {"Gemma4AssistantForCausalLM"}
    )
    return any(arch in promoted for arch in ctx.draft.architectures)


def _typed_backend(ctx: CheckContext) -> tuple[str, str] | None:
    """(flag, backend) the worker builds its tree-draft attention from, when a flag sets it. Unset, it is the
    target's resolved backend, which for a Gemma 4 target depends on the GPU and checkpoint: left quiet."""
    for flag in BACKEND_FLAGS:
        value = ctx.spec.last_value(flag)
        if value is not None:
            return flag, value
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    topk = ctx.spec.get("speculative_eagle_topk")
    if topk is None or topk <= 1 or not _runs_frozen_kv_mtp(ctx):
        return
    typed = _typed_backend(ctx)
    supported = (
        (TRITON, TRTLLM_MHA)
        if TRTLLM_MHA_TREE_DRAFT.present_in(ctx.version)
        else (TRITON,)
    )
    if typed is None or typed[1] in supported:
        return
    flag, backend = typed
    message = (
        f"Frozen-KV MTP topk > 1 currently supports triton and trtllm_mha attention backends, got {backend}."
        if TRTLLM_MHA_TREE_DRAFT.present_in(ctx.version)
        else f"Frozen-KV MTP topk > 1 currently supports only the triton attention backend, got {backend}."
    )
    yield RULE.finding(
        f"Frozen-KV MTP (Gemma 4 assistant draft) with {ctx.flag('--speculative-eagle-topk')} {topk} and a "
        f"{backend} draft attention backend ({ctx.flag(flag)}) in SGLang {ctx.version}: the tree draft builds its "
        f"own attention backend and the draft worker raises ValueError '{message}' at start-up, after the "
        f"weights load. Set {ctx.flag(DRAFT_BACKEND)} triton, or draft a chain (topk 1)",
        flags=(flag, "--speculative-eagle-topk"),
        fix=fix_of(
            f"set {DRAFT_BACKEND} triton",
            Applicability.UNSAFE,
            Edit(name=DRAFT_BACKEND, value=TRITON),
        ),
    )


GEMMA4_ASSISTANT_TREE = (
    "--model-path",
    "google/gemma-4-31B-it",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-draft-model-path",
    "google/gemma-4-31B-it-assistant",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "4",
    "--speculative-num-draft-tokens",
    "8",
)
GEMMA4_FACTS = {"architectures": ("Gemma4ForConditionalGeneration",)}
ASSISTANT_FACTS = {"architectures": ("Gemma4AssistantForCausalLM",)}

RULE = Rule(
    check=check,
    code="AB483",
    category=Category.START,
    name="frozen-kv-mtp-tree-draft-backend",
    summary="Frozen-KV MTP (a Gemma 4 assistant draft) with topk > 1 on a draft attention backend other than "
    "triton (0.5.12-0.5.16) or triton/trtllm_mha (0.5.17+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--speculative-algorithm FROZEN_KV_MTP`, or EAGLE/NEXTN with a Gemma 4 assistant draft (which SGLang "
        "promotes to it), with `--speculative-eagle-topk` above 1 and a draft backend set by "
        "`--speculative-draft-attention-backend`, else `--decode-attention-backend`, else `--attention-backend`, "
        "other than triton (0.5.12 to 0.5.16) or triton/trtllm_mha (0.5.17 on). With none of the three set the "
        "backend is the Gemma 4 target's default (triton, or trtllm_mha on SM100 depending on the release and "
        "checkpoint), which this rule does not resolve.",
        why="A topk-1 Frozen-KV draft reuses the runner's backend; a tree builds its own, and "
        "`_init_draft_attn_backend` reads the draft backend, else decode, else base and raises ValueError "
        "'Frozen-KV MTP topk > 1 currently supports only the triton attention backend, got X.' for anything but "
        "triton (0.5.12 speculative/frozen_kv_mtp_worker.py:199-216, the worker of those releases; 0.5.16 "
        "frozen_kv_mtp_worker_v2.py:224-241). 0.5.17 adds a TRTLLM MHA tree backend and raises 'Frozen-KV MTP "
        "topk > 1 currently supports triton and trtllm_mha attention backends, got X.' for the rest "
        "(frozen_kv_mtp_worker_v2.py:227-246, 261-264); unchanged in 0.5.23 (:248-272). 0.5.11 has no "
        "Frozen-KV MTP.",
        fix="Set `--speculative-draft-attention-backend triton` (or draft a chain with topk 1).",
        fix_safety="Unsafe: the draft runs another attention kernel.",
    ),
    bad=Example(
        argv=(*GEMMA4_ASSISTANT_TREE, DRAFT_BACKEND, "fa3"),
        target=GEMMA4_FACTS,
        draft=ASSISTANT_FACTS,
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=(*GEMMA4_ASSISTANT_TREE, DRAFT_BACKEND, TRITON),
        target=GEMMA4_FACTS,
        draft=ASSISTANT_FACTS,
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.11: python/sglang/srt/speculative/ (no frozen_kv_mtp_worker)",
        "sglang 0.5.12: python/sglang/srt/speculative/frozen_kv_mtp_worker.py:199-216; server_args.py:326-350",
        "sglang 0.5.16: python/sglang/srt/speculative/frozen_kv_mtp_worker_v2.py:224-241",
        "sglang 0.5.17: python/sglang/srt/speculative/frozen_kv_mtp_worker_v2.py:227-246,261-264",
        "sglang 0.5.23: python/sglang/srt/speculative/frozen_kv_mtp_worker_v2.py:248-272",
    ),
    sglang_versions=">=0.5.12",
    log_signatures=(
        r"Frozen-KV MTP topk > 1 currently supports only the triton attention backend",
        r"Frozen-KV MTP topk > 1 currently supports triton and trtllm_mha attention backends",
    ),
)
