"""SL080 draft-weights-lost-on-rollout-offload."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Dialect, Edit, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of
from specguard.rules.slime._slime import SLIME_HEAD
from specguard.sglang_facts.algorithms import DRAFT_CHECKPOINT_ALGORITHMS
from specguard.sglang_facts.changes import DRAFT_WEIGHTS_CPU_BACKUP, WEIGHTS_CPU_BACKUP
from specguard.slime_flags import slime_flags

# Algorithms whose draft is a set of weights the memory saver releases (NGRAM has none).
# sglang 0.5.3 model_runner.py:785-787: the weights region takes enable_weights_cpu_backup (target and draft).
# sglang 0.5.5.post3 model_runner.py:760-761: the draft alone, with enable_draft_weights_cpu_backup.
# slime 0df48a2c (#1288, 2025-12-29) passes enable_draft_weights_cpu_backup=True to every engine itself.
SLIME_SETS_BACKUP = "0df48a2c (#1288, 2025-12-29)"


def rollout_offloaded(ctx: CheckContext) -> bool:
    """slime's own resolution (slime/utils/arguments.py at HEAD): --offload, --offload-rollout, or --colocate."""
    if ctx.spec.has("--debug-rollout-only") or ctx.spec.has("--no-offload-rollout"):
        return False
    return any(ctx.spec.has(flag) for flag in ("--offload", "--offload-rollout", "--colocate"))


def _mtp_layers(ctx: CheckContext) -> int:
    """--mtp-num-layers (MODEL_ARGS of slime's model scripts): Megatron then holds the MTP weights."""
    item = ctx.spec.item("--mtp-num-layers")
    if item is None or len(item.values) != 1:
        return 0
    try:
        return int(item.values[0])
    except ValueError:
        return 0


def slime_sets_backup(ctx: CheckContext) -> bool:
    """Whether the launch's slime (--slime-version) passes the draft's CPU backup to every engine
    itself; without a slime version specguard knows, it cannot tell."""
    found = slime_flags(ctx.env.slime_version) if ctx.env.slime_version else None
    return found is not None and "enable_draft_weights_cpu_backup" in found.engine_sets


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in DRAFT_CHECKPOINT_ALGORITHMS or not rollout_offloaded(ctx):
        return
    if slime_sets_backup(ctx):
        return
    if ctx.spec.has("--enable-draft-weights-cpu-backup") or ctx.spec.has("--enable-weights-cpu-backup"):
        return
    if ctx.spec.has("--enable-mtp-training") or _mtp_layers(ctx):
        return  # Megatron holds the MTP layer, so slime's weight sync refills the draft
    lead = (
        "slime releases the rollout engines' GPU memory between rollouts (--colocate / --offload-rollout turn on "
        "SGLang's memory saver), and nothing restores the draft's weights on resume: slime syncs only the "
        "weights it trains, so from the second rollout the draft proposes garbage and the accept length falls "
        "to about 1 (slime #971: 'to avoid MTP acc len issue'), silently"
    )
    if ctx.version >= DRAFT_WEIGHTS_CPU_BACKUP.release:
        flag = "--enable-draft-weights-cpu-backup"
    elif ctx.version >= WEIGHTS_CPU_BACKUP.release:
        flag = "--enable-weights-cpu-backup"
    else:
        yield RULE.finding(
            f"{lead}. SGLang {ctx.env.sglang_version} has no CPU backup for weights (added in 0.5.3): load the "
            "MTP layer into Megatron (--mtp-num-layers 1), run without rollout offload, or upgrade",
            flags=("--speculative-algorithm",),
        )
        return
    yield RULE.finding(
        f"{lead}. Add {ctx.flag(flag)} (slime's scripts since #971; slime since {SLIME_SETS_BACKUP} passes it "
        "itself, so an older slime needs it typed), or load the MTP layer into Megatron (--mtp-num-layers 1, so slime's weight sync refills it)",
        flags=(flag,),
        fix=fix_of(f"add {ctx.flag(flag)}", Applicability.UNSAFE, Edit(name=flag, value=True)),
    )


RULE = Rule(
    check=check,
    code="SL080",
    category=Category.PERF,
    name="draft-weights-lost-on-rollout-offload",
    summary="slime: colocated or offloaded rollouts lose the draft's weights without a CPU backup",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="slime launches with a draft that has weights (EAGLE/EAGLE3/NEXTN/MTP, STANDALONE, DFLASH) whose "
        "rollout engines are offloaded (`--colocate`, `--offload-rollout` or `--offload`, as slime resolves "
        "them; not `--debug-rollout-only` or `--no-offload-rollout`), without "
        "`--sglang-enable-draft-weights-cpu-backup` (or `--sglang-enable-weights-cpu-backup`) and without "
        "`--mtp-num-layers` / `--enable-mtp-training` (include MODEL_ARGS from slime's model scripts: "
        "`scripts/models/mimo-7B-rl.sh` sets `--mtp-num-layers 1`).",
        why="slime passes `enable_memory_saver = --offload-rollout` (on by default under `--colocate`) and calls "
        "`release_memory_occupation` / `resume_memory_occupation` around every training step. The memory "
        "saver discards the weights region of the target and of the draft; the target is refilled by slime's "
        "weight sync, the draft only when Megatron holds the MTP layer (`--mtp-num-layers`, slime #128 "
        "syncs it with `update_weights_from_tensor`). Otherwise the draft comes back as "
        "zeros and every proposal is rejected (accept length ~1), with no error. SGLang backs the region up "
        "on the host only when asked: `--enable-weights-cpu-backup` since 0.5.3 (`model_runner.py:785-787`), "
        "the draft alone with `--enable-draft-weights-cpu-backup` since 0.5.5.post3 (`model_runner.py:760-761`; "
        "0.5.5 has neither branch for the draft); 0.5.23 still defaults both off "
        "(`model_runner_components/load_model_utils.py:307-309`). slime added the flag to its MTP scripts in "
        f"#971 'to avoid MTP acc len issue' and passes it to every engine itself since {SLIME_SETS_BACKUP} "
        "(`sglang_engine.py`; `specguard/data/slime-flags.json` records it per slime commit), so the rule is quiet "
        "for a `--slime-version` at or after it; without one specguard cannot tell. sglang#31674 (open) reports setups where the "
        "backup alone does not restore the draft.",
        fix="Add `--sglang-enable-draft-weights-cpu-backup` (before 0.5.5.post3: "
        "`--sglang-enable-weights-cpu-backup`), or train the MTP layer online (`--mtp-num-layers 1`, with `--enable-mtp-training` to train it).",
        fix_safety="Unsafe: it keeps a host copy of the draft's weights (slime #1024 dropped it from the MiMo "
        "script, which trains its MTP layer, over an out-of-memory).",
    ),
    bad=Example(
        argv=("--hf-checkpoint", "/root/Qwen3-Next-80B-A3B-Thinking", "--rollout-num-gpus-per-engine", "8",
              "--sglang-speculative-algorithm", "EAGLE", "--sglang-speculative-num-steps", "2",
              "--sglang-speculative-eagle-topk", "1", "--sglang-speculative-num-draft-tokens", "3", "--colocate"),
        dialect=Dialect.SLIME,
        sglang_version="0.5.5.post3",
    ),
    good=Example(
        argv=("--hf-checkpoint", "/root/Qwen3-Next-80B-A3B-Thinking", "--rollout-num-gpus-per-engine", "8",
              "--sglang-speculative-algorithm", "EAGLE", "--sglang-speculative-num-steps", "2",
              "--sglang-speculative-eagle-topk", "1", "--sglang-speculative-num-draft-tokens", "3",
              "--sglang-enable-draft-weights-cpu-backup", "--colocate"),
        dialect=Dialect.SLIME,
        sglang_version="0.5.5.post3",
    ),
    sources=(
        "THUDM/slime 2cb386ee (#971, 2025-11-30): 'Super tiny enable draft-weights-cpu-backup to avoid MTP acc len issue'",
        "THUDM/slime 0df48a2c (#1288, 2025-12-29): slime/backends/sglang_utils/sglang_engine.py enable_draft_weights_cpu_backup=True ('so that we run training without mtp weights')",
        "https://github.com/THUDM/slime/pull/128 ('Support update_weights_from_tensor for mtp layers in sglang')",
        f"THUDM/slime {SLIME_HEAD}: slime/utils/arguments.py (colocate sets offload_rollout); sglang_engine.py (enable_memory_saver=args.offload_rollout)",
        "https://github.com/sgl-project/sglang/pull/13318 ('[RL] support only do cpu backup on draft model': colocated RL without the draft's weights on the trainer side)",
        "https://github.com/sgl-project/sglang/pull/13268 (draft weights become zero after resume in veRL)",
        "https://github.com/sgl-project/sglang/pull/31674 (open: draft weights across release/resume_memory_occupation)",
        "sglang 0.5.3: python/sglang/srt/model_executor/model_runner.py:785-787",
        "sglang 0.5.5.post3: python/sglang/srt/model_executor/model_runner.py:760-761",
        "sglang 0.5.23: python/sglang/srt/model_executor/model_runner_components/load_model_utils.py:307-309",
    ),
    dialects=(Dialect.SLIME,),
)
