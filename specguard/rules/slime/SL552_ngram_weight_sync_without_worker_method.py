"""SL552 ngram-weight-sync-without-worker-method."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Dialect, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.slime._slime import SLIME_HEAD

# What the scheduler raises at the first weight sync (Python's own text for the missing method):
#   AttributeError: 'NGRAMWorker' object has no attribute 'update_weights_from_tensor'
SLIME_NGRAM = (
    "--hf-checkpoint", "/root/Qwen3-4B", "--rollout-num-gpus-per-engine", "1",
    "--sglang-speculative-algorithm", "NGRAM",
)  # fmt: skip


def syncs_weights_by_tensor(ctx: CheckContext) -> bool:
    """Whether slime pushes each new policy to the rollout engines with update_weights_from_tensor: a colocated
    run that trains and rolls out, on the default nccl transport (slime/backends/megatron_utils/actor.py at
    HEAD: UpdateWeightFromTensor when --colocate, unless --update-weight-transport disk)."""
    if not ctx.spec.has("--colocate"):
        return False
    if ctx.spec.has("--debug-rollout-only") or ctx.spec.has("--debug-train-only"):
        return False  # no weight sync at all (actor.update_weights returns at once)
    transport = ctx.spec.item("--update-weight-transport")
    return transport is None or not transport.values or transport.values[-1] != "disk"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "NGRAM" or not syncs_weights_by_tensor(ctx):
        return
    yield RULE.finding(
        f"NGRAM on a colocated slime run in SGLang {ctx.version}: slime syncs every new policy with "
        "update_weights_from_tensor, which this release sends to the draft worker when there is one, and "
        'NGRAMWorker has no such method, so the first weight sync after training step 1 raises "AttributeError: '
        "'NGRAMWorker' object has no attribute 'update_weights_from_tensor'\" in the scheduler. Upgrade SGLang "
        "to 0.5.12 (NGRAMWorker forwards it to the target), or sync from disk (--update-weight-transport disk)",
        flags=("--speculative-algorithm", "--colocate"),
    )


RULE = Rule(
    check=check,
    code="SL552",
    category=Category.CRASH,
    name="ngram-weight-sync-without-worker-method",
    summary="slime --colocate with NGRAM: the weight sync raises AttributeError in SGLang 0.5.5.post3-0.5.11",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    dialects=(Dialect.SLIME,),
    docs=RuleDocs(
        what="A slime launch with `--sglang-speculative-algorithm NGRAM` and `--colocate` that trains (not "
        "`--debug-rollout-only` / `--debug-train-only`) and syncs over the default transport (not "
        "`--update-weight-transport disk`), on SGLang 0.5.5.post3 through 0.5.11.",
        why="A colocated slime run pushes each new policy with `update_weights_from_tensor` (slime "
        f"{SLIME_HEAD} slime/backends/megatron_utils/actor.py:166-175; sglang_engine.py:245-269). From 0.5.5.post3 "
        "SGLang's scheduler hands that request to `self.draft_worker or self.tp_worker` "
        "(managers/scheduler_update_weights_mixin.py:77-80; 0.5.11 :96-101, unless the request sets "
        "`disable_draft_model`, which slime does not), and for NGRAM the draft worker is `NGRAMWorker`, a class "
        "with no base and no such method (0.5.5.post3 speculative/ngram_worker.py:26; 0.5.11 :27), so the call "
        "raises AttributeError. 0.5.5.post2 sent it to the target worker only (:77-79); 0.5.12 adds "
        "`NGRAMWorker.update_weights_from_tensor`, which forwards to the target (ngram_worker.py:86-93).",
        fix="Upgrade SGLang to 0.5.12 or later, or use `--update-weight-transport disk` (a slime with that flag).",
        fix_safety="No automatic fix: both change the run's SGLang or its weight-sync path.",
    ),
    bad=Example(
        argv=(*SLIME_NGRAM, "--colocate"),
        dialect=Dialect.SLIME,
        sglang_version="0.5.11",
    ),
    good=Example(
        argv=(*SLIME_NGRAM, "--colocate"),
        dialect=Dialect.SLIME,
        sglang_version="0.5.12",
    ),
    sources=(
        f"THUDM/slime {SLIME_HEAD}: slime/backends/megatron_utils/actor.py:166-175 (UpdateWeightFromTensor when --colocate)",
        "sglang 0.5.5.post2: python/sglang/srt/managers/scheduler_update_weights_mixin.py:77-79 (tp_worker only)",
        "sglang 0.5.5.post3: python/sglang/srt/managers/scheduler_update_weights_mixin.py:77-80; speculative/ngram_worker.py:26",
        "sglang 0.5.11: python/sglang/srt/managers/scheduler_update_weights_mixin.py:93-101; speculative/ngram_worker.py:27",
        "sglang 0.5.12: python/sglang/srt/speculative/ngram_worker.py:86-93 (forwards to the target worker)",
    ),
    sglang_versions=">=0.5.5.post3,<0.5.12",
    log_signatures=(
        r"'NGRAMWorker' object has no attribute 'update_weights_from_tensor'",
    ),
)
