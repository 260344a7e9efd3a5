"""AB111 hpc-ops-speculative."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS, proposed_backend
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3

BACKEND = "hpc_ops"
_FLAGS = ("--attention-backend", "--prefill-attention-backend", "--decode-attention-backend")


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None:
        return
    flags = [f for f in _FLAGS if (item := ctx.spec.item(f)) is not None and item.values == (BACKEND,)]
    if not flags:
        return
    # hpc_ops runs on Hopper only, where fa3 is the usual choice.
    replacement = proposed_backend(ctx, avoid=frozenset({BACKEND})) or "fa3"
    yield RULE.finding(
        f"{', '.join(ctx.flag(f) for f in flags)} {BACKEND} with {ctx.algorithm}: SGLang {ctx.env.sglang_version}'s "
        f"{BACKEND} backend refuses speculative decoding, so building it raises ValueError 'hpc_ops backend does not "
        "support speculative decoding for now' when the server starts (after the weights load). "
        f"Use {replacement} for a speculative launch, or drop {ctx.flag('--speculative-algorithm')}.",
        flags=(*flags, "--speculative-algorithm"),
        fix=fix_of(f"use {replacement} instead of {BACKEND}", Applicability.UNSAFE,
                   *(Edit(name=f, value=replacement) for f in flags)),
    )


RULE = Rule(
    check=check,
    code="AB111",
    category=Category.START,
    name="hpc-ops-speculative",
    summary="The hpc_ops attention backend with a speculative algorithm is refused at start-up (0.5.17+)",
    severity=Severity.ERROR,
    sglang_versions=">=0.5.17",
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`hpc_ops` as the attention, prefill or decode attention backend together with any "
        "`--speculative-algorithm`, SGLang 0.5.17 or later.",
        why="0.5.17 added the hpc_ops backend (Tencent HPC-Ops kernels, Hopper only, page size 64). Its factory "
        "raises ValueError 'hpc_ops backend does not support speculative decoding for now.' when an algorithm is "
        "set (0.5.17 `layers/attention/attention_registry.py:268-271`), and the backend's constructor refuses "
        "again ('The hpc_ops attention backend does not support speculative decoding (MTP/EAGLE) yet.', "
        "`hpc_ops_backend.py:142-146`). The model runner builds it at start-up, after the weights load. Both "
        "refusals are unchanged up to 0.5.23 (`attention_registry.py:294-297`, `hpc_ops_backend.py:145-149`). "
        "0.5.16 has no hpc_ops backend.",
        fix="Use another attention backend (fa3 on Hopper) for a speculative launch.",
        fix_safety="Unsafe: another attention kernel runs.",
    ),
    bad=Example(argv=(*LLAMA31_8B_EAGLE3, "--attention-backend", BACKEND, "--page-size", "64"),
                gpu="H100", sglang_version="0.5.17"),
    good=Example(argv=(*LLAMA31_8B_EAGLE3, "--attention-backend", "fa3", "--page-size", "64"),
                 gpu="H100", sglang_version="0.5.17"),
    sources=(
        "sglang 0.5.16: python/sglang/srt/layers/attention/attention_registry.py (no hpc_ops backend)",
        ("sglang 0.5.17: python/sglang/srt/layers/attention/attention_registry.py:260-274; "
        "layers/attention/hpc_ops_backend.py:142-146"),
        ("sglang 0.5.23: python/sglang/srt/layers/attention/attention_registry.py:294-297; "
        "layers/attention/hpc_ops_backend.py:145-149"),
    ),
    log_signatures=(
        r"hpc_ops backend does not support speculative decoding",
        r"The hpc_ops attention backend does not support speculative decoding",
    ),
)
