"""DM414 dflash-domino-draft-refused."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.AB173_dflash_device_unsupported import allowed_devices
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import QWEN3_8B_DFLASH
from specguard.rules.spec_params._shared import device

DOMINO = "domino"
POOL = "--speculative-domino-candidate-pool-size"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "DFLASH"
        or ctx.draft is None
        or ctx.draft.dflash_projector_type != DOMINO
    ):
        return
    where = device(ctx)
    allowed = allowed_devices(ctx.version) or ()
    # A device DFLASH itself refuses at argument time is AB173's; the Domino check comes after the load.
    if where is not None and where != "cuda" and where in allowed:
        yield RULE.finding(
            f"the DFLASH draft is a Domino draft (projector_type domino) on device {where!r}: SGLang {ctx.version} loads "
            f'both models, then the DFLASH worker raises "DFLASH Domino currently requires CUDA, got {where}." '
            "Serve this draft on a CUDA (or ROCm) GPU, or use a non-Domino DFLASH draft",
            flags=("--speculative-draft-model-path",),
        )
    pool = ctx.spec.last_value(POOL)
    if pool is not None and pool.lstrip("-").isdigit() and int(pool) < 0:
        yield RULE.finding(
            f"{ctx.flag(POOL)} {pool} with a Domino DFLASH draft: SGLang {ctx.version} loads both models, then the "
            f'DFLASH worker raises "--speculative-domino-candidate-pool-size must be non-negative, got {pool}." '
            "Use 0 (score the full vocabulary) or a positive pool (default 2048)",
            flags=(POOL,),
        )
    target_vocab = ctx.target.vocab_size if ctx.target is not None else None
    draft_vocab = ctx.draft.vocab_size
    if (
        target_vocab is not None
        and draft_vocab is not None
        and target_vocab != draft_vocab
    ):
        yield RULE.finding(
            f"the DFLASH draft is a Domino draft (projector_type domino) with vocab_size {draft_vocab}, the target "
            f'{target_vocab}: SGLang {ctx.version} loads both models, then the DFLASH worker raises "DFLASH Domino '
            f'requires identical target and draft vocab sizes, got target={target_vocab}, draft={draft_vocab}." '
            "Use a Domino draft trained for this target's vocabulary",
            flags=("--speculative-draft-model-path",),
        )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM414",
    category=Category.START,
    name="dflash-domino-draft-refused",
    summary="A Domino DFLASH draft fails at start off CUDA or with a vocab_size other than the target's (0.5.20+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with a draft whose config.json `dflash_config.projector_type` (else "
        "the top-level `projector_type`) is `domino`, on a device other than CUDA/ROCm that DFLASH otherwise "
        "accepts (npu, xpu), or with a draft `vocab_size` (text config) other than the target's, or with a negative "
        "`--speculative-domino-candidate-pool-size`.",
        why="0.5.20 added Domino drafts: `parse_dflash_draft_config` reads `projector_type` "
        "(speculative/dflash_utils.py:736-743), and the DFLASH worker, after loading both models, refuses a "
        "negative `--speculative-domino-candidate-pool-size` (dflash_worker_v2.py:429-435) and calls "
        '`validate_domino_runtime` (:425-455), which raises `ValueError("DFLASH Domino currently '
        'requires CUDA, got <device>.")` for a non-CUDA torch device (ROCm builds use the cuda device type) and '
        '`ValueError("DFLASH Domino requires identical target and draft vocab sizes, ...")` when the two '
        "`model_config.vocab_size` differ (speculative/domino_utils.py:124-152). 0.5.23 keeps both "
        "(domino_utils.py:147-160; dflash_worker_v2.py:454, 479-490). 0.5.19 has no Domino support (no "
        "domino_utils.py; dflash_utils.py never reads projector_type). A device DFLASH refuses outright is AB173's.",
        fix="Serve a Domino draft on a CUDA or ROCm GPU with the target it was trained for; otherwise use a plain "
        "DFLASH draft. No automatic fix.",
        fix_safety="No fix: the device and the draft checkpoint are the user's choice.",
    ),
    bad=Example(
        argv=QWEN3_8B_DFLASH,
        target={"vocab_size": 151936},
        draft={"dflash_projector_type": DOMINO, "vocab_size": 152064},
        sglang_version="0.5.20",
    ),
    good=Example(
        argv=QWEN3_8B_DFLASH,
        target={"vocab_size": 151936},
        draft={"dflash_projector_type": DOMINO, "vocab_size": 151936},
        sglang_version="0.5.20",
    ),
    sources=(
        "sglang 0.5.19: python/sglang/srt/speculative/dflash_utils.py (no projector_type; no domino_utils.py)",
        "sglang 0.5.20: python/sglang/srt/speculative/dflash_utils.py:736-743",
        "sglang 0.5.20: python/sglang/srt/speculative/dflash_worker_v2.py:425-455",
        "sglang 0.5.20: python/sglang/srt/speculative/domino_utils.py:124-152",
        "sglang 0.5.23: python/sglang/srt/speculative/dflash_worker_v2.py:454,464-470,479-490",
        "sglang 0.5.23: python/sglang/srt/speculative/domino_utils.py:147-160",
    ),
    sglang_versions=">=0.5.20",
    log_signatures=(
        r"DFLASH Domino currently requires CUDA, got",
        r"DFLASH Domino requires identical target and draft vocab sizes",
        r"--speculative-domino-candidate-pool-size must be non-negative",
    ),
)
