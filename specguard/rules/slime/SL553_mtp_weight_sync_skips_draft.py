"""SL553 mtp-weight-sync-skips-draft."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Dialect, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.slime._slime import SLIME_HEAD
from specguard.rules.slime.SL080_draft_weights_lost_on_rollout_offload import (
    rollout_offloaded,
)
from specguard.rules.slime.SL552_ngram_weight_sync_without_worker_method import (
    syncs_weights_by_tensor,
)
from specguard.sglang_facts.algorithms import MTP_DRAFT_ALGORITHMS

MTP_TRAINING = "--enable-mtp-training"
MTP_LAYERS = "--mtp-num-layers"
CPU_BACKUP = "--enable-weights-cpu-backup"
SLIME_MTP = (
    "--hf-checkpoint", "/root/MiMo-7B-RL", "--rollout-num-gpus-per-engine", "1",
    "--sglang-speculative-algorithm", "EAGLE", "--sglang-speculative-num-steps", "1",
    "--sglang-speculative-eagle-topk", "1", "--sglang-speculative-num-draft-tokens", "2",
    "--colocate", MTP_LAYERS, "1",
)  # fmt: skip


def _draft_harm(ctx: CheckContext) -> str | None:
    """What the target-only sync costs the draft on this run; None when the draft needs nothing from it."""
    if ctx.spec.has(MTP_TRAINING):
        return (
            f"the MTP layer {ctx.flag(MTP_TRAINING)} trains never reaches the draft, which keeps drafting with the "
            "weights it loaded while the policy moves on, so acceptance falls as training proceeds"
        )
    if (
        ctx.spec.has(MTP_LAYERS)
        and rollout_offloaded(ctx)
        and not ctx.spec.has(CPU_BACKUP)
    ):
        return (
            "the rollout engines are offloaded and nothing backs the draft's weights up, so after the first "
            "release the draft comes back without its weights and the sync does not refill it (accept length ~1)"
        )
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in MTP_DRAFT_ALGORITHMS or not syncs_weights_by_tensor(ctx):
        return
    harm = _draft_harm(ctx)
    if harm is None:
        return
    yield RULE.finding(
        f"slime sends the MTP layer with update_weights_from_tensor, and SGLang {ctx.version} applies that request "
        f"to the target model only: {harm}. This holds for SGLang's released wheel; slime's own builds (its docker "
        "image and build_conda.sh apply docker/patch/*/sglang.patch) route the sync to the draft or keep the "
        "draft's weights, so check which SGLang the engines run. Upgrade SGLang to 0.5.5.post3, which loads the "
        "tensors into the draft too",
        flags=("--speculative-algorithm", MTP_LAYERS),
    )


RULE = Rule(
    check=check,
    code="SL553",
    category=Category.PERF,
    name="mtp-weight-sync-skips-draft",
    summary="slime --colocate with an MTP draft: SGLang before 0.5.5.post3 syncs the target only, the draft goes stale",
    # Info: slime's own SGLang builds carry a patch that avoids this (see the docs), and a launch does not show
    # whether the engines run that build or the released wheel.
    severity=Severity.INFO,
    fix_availability=FixAvailability.NEVER,
    dialects=(Dialect.SLIME,),
    docs=RuleDocs(
        what="A colocated slime run that syncs by tensor (see SL552) with EAGLE/NEXTN drafting from the MTP layer, "
        "on SGLang before 0.5.5.post3, where the draft needs the sync: `--enable-mtp-training`, or "
        "`--mtp-num-layers` on offloaded rollouts without `--sglang-enable-weights-cpu-backup`. An info, not a "
        "warning: slime's own SGLang builds patch this away, and the launch does not show which build runs.",
        why="slime hands the MTP layer to the rollout engines through `update_weights_from_tensor` (slime #128; "
        f"{SLIME_HEAD} actor.py:166-175). Up to 0.5.5.post2 the scheduler sends that request to "
        "`self.tp_worker` alone (managers/scheduler_update_weights_mixin.py:77-79), so the draft's model runner "
        "never sees the tensors: a trained MTP layer stays at its loaded weights, and after "
        "`release_memory_occupation` pauses the weights region (:125-130, the draft's weights included) nothing "
        "refills the draft unless the weights CPU backup is on. 0.5.5.post3 sends it to `self.draft_worker or "
        "self.tp_worker` (:77-80), and `EAGLEWorker.update_weights_from_tensor` loads the tensors into the draft "
        "runner, then the target (speculative/eagle_worker.py:997-1011). slime patches the SGLang it ships "
        "(docker/Dockerfile and build_conda.sh apply docker/patch/<version>/sglang.patch): from #640 (f81ecfee2, "
        "2025-10-31, the commit that adds `--enable-mtp-training`) the patch sends the sync to the draft worker "
        "(behind `--sglang-speculative-enable-weights-update` until aa7a14ae, 2025-11-01; v0.5.5.post1/sglang.patch "
        "`worker = self.draft_worker or self.tp_worker`), and from #204 (e9436812, 2025-08-20, before slime's MTP "
        "support in #128) it keeps the draft's weights out of the released region, later backs them up "
        "(aa7a14ae `enable_cpu_backup=... if not self.is_draft_worker else True`). So the harm needs the released "
        "wheel, which the launch does not show.",
        fix="Upgrade SGLang to 0.5.5.post3 or later.",
        fix_safety="No automatic fix: it changes the run's SGLang.",
    ),
    bad=Example(
        argv=(*SLIME_MTP, MTP_TRAINING),
        dialect=Dialect.SLIME,
        sglang_version="0.5.5.post2",
    ),
    good=Example(
        argv=(*SLIME_MTP, MTP_TRAINING),
        dialect=Dialect.SLIME,
        sglang_version="0.5.5.post3",
    ),
    sources=(
        "https://github.com/THUDM/slime/pull/128 (176b2eb7 'Add XiaomiMiMo/MiMo-7B-RL with MTP support': MTP params in the weight sync)",
        "THUDM/slime f81ecfee2 (#640), aa7a14aee (#655): docker/patch/latest/sglang.patch scheduler_update_weights_mixin.py (sync to the draft worker)",
        "THUDM/slime e94368121 (#204): docker/patch sglang.patch model_runner.py (draft weights outside the memory saver's weights region)",
        f"THUDM/slime {SLIME_HEAD}: slime/backends/megatron_utils/actor.py:166-175 (UpdateWeightFromTensor when --colocate)",
        "sglang 0.5.5.post2: python/sglang/srt/managers/scheduler_update_weights_mixin.py:77-79,125-130",
        "sglang 0.5.5.post3: python/sglang/srt/managers/scheduler_update_weights_mixin.py:77-80",
        "sglang 0.5.5.post3: python/sglang/srt/speculative/eagle_worker.py:997-1011",
    ),
    sglang_versions="<0.5.5.post3",
)
