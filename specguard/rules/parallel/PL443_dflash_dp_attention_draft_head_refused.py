"""PL443 dflash-dp-attention-draft-head-refused."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.draft_model.DM345_lilicorr_draft_refused import LILICORR_DRAFT
from specguard.rules.draft_model.DM414_dflash_domino_draft_refused import DOMINO
from specguard.rules.examples import QWEN3_8B_DFLASH
from specguard.rules.spec_params._shared import (
    attn_dp_enabled,
    attn_dp_flags,
    device,
    drop_attn_dp,
)

# What the DFLASH worker raises (0.5.23 speculative/dflash_worker_v2.py:455-460):
# "DFLASH with dp attention supports plain DFlash and DFlash2 drafts; Domino and LiLiCorr heads are not supported."


def refused_head(ctx: CheckContext) -> str | None:
    """The draft head DFLASH refuses under attention DP: a Domino or a LiLiCorr draft; None for any other."""
    draft = ctx.draft
    if draft is None:
        return None
    if draft.dflash_projector_type == DOMINO:
        return "a Domino draft (projector_type domino)"
    if draft.architecture == LILICORR_DRAFT:
        return f"a LiLiCorr draft ({LILICORR_DRAFT})"
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "DFLASH"
        or not attn_dp_enabled(ctx)
        # The refusal is off NPU only; PL001 refuses devices other than CUDA and NPU.
        or device(ctx) == "npu"
        or (head := refused_head(ctx)) is None
    ):
        return
    flags = attn_dp_flags(ctx)
    written = " ".join(ctx.flag(flag) for flag in flags)
    yield RULE.finding(
        f"DFLASH with attention DP ({written}) and {head}: SGLang {ctx.version}'s DFLASH worker raises 'DFLASH with dp "
        "attention supports plain DFlash and DFlash2 drafts; Domino and LiLiCorr heads are not supported.' when it "
        "starts, after the target has loaded. Turn attention DP off, or use a plain DFlash or DFlash2 draft",
        flags=(*flags, "--speculative-draft-model-path"),
        fix=drop_attn_dp("turn attention DP off"),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="PL443",
    category=Category.START,
    name="dflash-dp-attention-draft-head-refused",
    summary="DFLASH with attention DP refuses Domino and LiLiCorr drafts at worker start (0.5.23+, off NPU)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--speculative-algorithm DFLASH` with attention DP (`--attn-dp-size` > 1, or `--enable-dp-attention` "
        "with `--dp-size` > 1) on a device other than an Ascend NPU, and a draft whose config.json makes it a Domino "
        "draft (`dflash_config.projector_type`, else the top-level one, is `domino`) or a `LiLiCorrDraftModel`, "
        "SGLang 0.5.23 or later.",
        why="0.5.23 is the first release that lets DFLASH run with attention DP on CUDA (PL001; 0.5.22 refused it off "
        "NPU at argument time, `arg_groups/speculative_hook.py:295-300`). Its DFLASH worker then refuses the two "
        "heads it cannot shard that way: `if get_parallel().attn_dp_enabled and not _is_npu: if self._is_domino or "
        "self.lilicorr is not None: raise ValueError(...)` (0.5.23 `speculative/dflash_worker_v2.py:445, 451-460`; "
        "`is_domino` is `projector_type == 'domino'`, `dflash_utils.py:541-543`; `LiLiCorrDraftModel` sets "
        "`self.lilicorr`, `models/lilicorr.py:529-541`). It happens while the server starts, after the target's "
        "weights have loaded.",
        fix="Turn attention DP off, or use a plain DFlash or DFlash2 draft with attention DP.",
        fix_safety="Unsafe: it changes the parallel layout.",
    ),
    bad=Example(
        argv=(
            *QWEN3_8B_DFLASH,
            "--tp-size",
            "2",
            "--attn-dp-size",
            "2",
            "--enable-dp-lm-head",
        ),
        draft={"architectures": ("DFlashDraftModel",), "dflash_projector_type": DOMINO},
        gpu="H100",
        sglang_version="0.5.23",
    ),
    good=Example(
        argv=(
            *QWEN3_8B_DFLASH,
            "--tp-size",
            "2",
            "--attn-dp-size",
            "2",
            "--enable-dp-lm-head",
        ),
        draft={"architectures": ("DFlashDraftModel",)},
        gpu="H100",
        sglang_version="0.5.23",
    ),
    sources=(
        "sglang 0.5.22: python/sglang/srt/arg_groups/speculative_hook.py:295-300",
        "sglang 0.5.23: python/sglang/srt/speculative/dflash_worker_v2.py:445, 451-460",
        "sglang 0.5.23: python/sglang/srt/speculative/dflash_utils.py:541-543",
        "sglang 0.5.23: python/sglang/srt/models/lilicorr.py:529-541",
    ),
    sglang_versions=">=0.5.23",
    log_signatures=(
        r"DFLASH with dp attention supports plain DFlash and DFlash2 drafts; Domino and LiLiCorr heads are not supported",
    ),
)
