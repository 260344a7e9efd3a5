"""DM002 draft-context-shorter-than-target."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    CheckContext,
    Example,
    Rule,
    RuleDocs,
    fix_of,
    set_flags,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.algorithms import DRAFT_CHECKPOINT_ALGORITHMS
from specguard.sglang_facts.changes import (
    DRAFT_CONTEXT_GUARD,
    DRAFT_OWN_CONTEXT,
    DRAFT_TARGET_CONTEXT_AGAIN,
    Change,
)

OVERWRITE_ENV = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"
# FROZEN_KV_MTP's draft worker, new in 0.5.12; 0.5.11's --speculative-algorithm refuses the name.
FROZEN_KV_MTP_DRAFT = Change(
    "0.5.12", "0.5.12 speculative/frozen_kv_mtp_worker.py:118 (0.5.11 server_args.py:5367 choices lack FROZEN_KV_MTP)"
)


def served_context(ctx: CheckContext) -> int | None:
    """The context the target serves: --context-length, else its own max_position_embeddings."""
    given = ctx.spec.get("context_length")
    if given is not None:
        return given
    return ctx.target.max_position_embeddings if ctx.target else None


def check(ctx: CheckContext) -> Iterator[Finding]:
    # FROZEN_KV_MTP (0.5.12+) builds its Gemma 4 assistant draft from --speculative-draft-model-path with the target's
    # context the same way, 0.5.17 aside (frozen_kv_mtp_worker_v2.py: 0.5.16 :677-678, 0.5.18 :149).
    drafted = ctx.algorithm in DRAFT_CHECKPOINT_ALGORITHMS or (
        ctx.algorithm == "FROZEN_KV_MTP" and FROZEN_KV_MTP_DRAFT.present_in(ctx.version)
    )
    if not drafted or ctx.draft is None:
        return
    draft_max = ctx.draft.max_position_embeddings
    context = served_context(ctx)
    if draft_max is None or context is None or context <= draft_max:
        return
    cap = set_flags(
        f"cap --context-length at {draft_max}, the draft's max_position_embeddings",
        Applicability.UNSAFE,
        context_length=draft_max,
    )
    context_flag = ctx.flag("--context-length")
    if ctx.version < DRAFT_CONTEXT_GUARD.release:
        yield RULE.finding(
            f"the target serves {context} tokens but the draft only has {draft_max} positions; SGLang "
            f"{ctx.env.sglang_version} (before 0.5.1, PR 9388) stretches the draft silently and long "
            f"requests hit 'illegal memory access': cap {context_flag} at {draft_max} or upgrade",
            flags=("--context-length",),
            fix=cap,
        )
        return
    if ctx.spec.get("context_length") is None and DRAFT_OWN_CONTEXT.present_in(ctx.version) and not DRAFT_TARGET_CONTEXT_AGAIN.present_in(ctx.version):
        yield RULE.finding(
            f"the target serves {context} tokens but the draft's max_position_embeddings is {draft_max}: SGLang "
            f"{ctx.env.sglang_version} builds the draft with its own context ({draft_max}) instead of the target's, so "
            f"the server starts, and requests longer than {draft_max} tokens run the draft past the positions it was "
            f"built for (0.5.16 and 0.5.18 give it the target's context and refuse at start). Cap {context_flag} at {draft_max}",
            flags=("--context-length",),
            fix=cap,
            severity=Severity.WARNING,
        )
        return
    if ctx.spec.env_flag(OVERWRITE_ENV):
        yield RULE.finding(
            f"the draft has {draft_max} positions and {OVERWRITE_ENV}=1 stretches it to {context}: "
            "SGLang will start, but past the draft's trained length acceptance collapses and "
            "speculation can run slower than none (issue 6783)",
            flags=("--context-length",),
            fix=fix_of(
                f"cap --context-length at {draft_max} and drop {OVERWRITE_ENV}",
                Applicability.UNSAFE,
                Edit(name="--context-length", value=draft_max),
                Edit(target="env", name=OVERWRITE_ENV, value=None),
            ),
            severity=Severity.WARNING,
        )
        return
    yield RULE.finding(
        f"the target serves {context} tokens but the draft's max_position_embeddings is {draft_max}: "
        f"SGLang raises 'context_length ({context}) is greater than the derived context_length "
        f"({draft_max})' when the draft worker starts, after the target weights have loaded. Cap "
        f"{context_flag} at {draft_max}, or set {OVERWRITE_ENV}=1 to stretch the draft (slower past {draft_max})",
        flags=("--context-length",),
        fix=cap,
    )


RULE = Rule(
    check=check,
    code="DM002",
    category=Category.START,
    name="draft-context-shorter-than-target",
    summary="The draft's max_position_embeddings is below the context the target serves",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="Compares the target's served context (`--context-length`, else the target's "
        "`max_position_embeddings`) with the draft's `max_position_embeddings`.",
        why="The draft worker is built with the target's context length. Since SGLang 0.5.1 "
        "(PR 9388) a longer context than the draft's own makes the draft's ModelConfig raise "
        "unless `SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1`; that happens at worker start-up, "
        "after the target weights are loaded, and SGLang's argument checks do not see it "
        "(catalogue P59). 0.5.17 alone builds the draft without the target's context (0.5.16 "
        "eagle_worker_v2.py:1044-1048 passed it, 0.5.18 :179 passes it again), so with `--context-length` "
        "unset the draft derives its own and the server starts with a draft shorter than the requests it "
        "serves (a warning there). FROZEN_KV_MTP's draft worker does the same: the target's context in 0.5.12-0.5.16 "
        "(0.5.12 frozen_kv_mtp_worker.py:118, 0.5.16 frozen_kv_mtp_worker_v2.py:677-678) and from 0.5.18 "
        "(frozen_kv_mtp_worker_v2.py:149; 0.5.23 :156), none in 0.5.17. Before 0.5.1 the draft was stretched silently and long requests hit "
        "illegal memory accesses. With the env var set the server starts, but a 2048-position "
        "EAGLE3 head performs worse than no speculation past 2k tokens (issue 6783). In slime, "
        "a 2048-token draft caps prompt plus response (see SL002).",
        fix="Cap `--context-length` at the draft's `max_position_embeddings` (slime's guide: "
        "`--sglang-context-length 2048`), or accept the stretch explicitly with the env var.",
        fix_safety="Unsafe: it shortens the context the server accepts.",
    ),
    bad=Example(
        argv=LLAMA31_8B_EAGLE3,
        target={"max_position_embeddings": 131072},
        draft={"max_position_embeddings": 2048},
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--context-length", "2048"),
        target={"max_position_embeddings": 131072},
        draft={"max_position_embeddings": 2048},
    ),
    sources=(
        "seed: slime-speculative-decoding.en.md (--sglang-context-length 2048; PR #9388)",
        "https://github.com/sgl-project/sglang/pull/9388",
        "https://github.com/sgl-project/sglang/issues/6783",
        "sglang 0.5.23: python/sglang/srt/configs/model_config.py:1291-1321 (_derive_context_length)",
        "sglang 0.5.23: python/sglang/srt/managers/tp_worker.py:468-481",
        "sglang 0.5.16: python/sglang/srt/speculative/eagle_worker_v2.py:1044-1048 (the target's context)",
        "sglang 0.5.17: python/sglang/srt/configs/model_config.py:553-557 (server_args.context_length, none passed)",
        "sglang 0.5.18: python/sglang/srt/speculative/eagle_worker_v2.py:179",
        "sglang 0.5.16: python/sglang/srt/speculative/frozen_kv_mtp_worker_v2.py:677-678 (the target's context)",
        "sglang 0.5.17: python/sglang/srt/speculative/frozen_kv_mtp_worker_v2.py (no context_length passed)",
        "sglang 0.5.18: python/sglang/srt/speculative/frozen_kv_mtp_worker_v2.py:149",
    ),
    log_signatures=(
        r"context_length \(\d+\) is greater than the derived context_length",
    ),
)
