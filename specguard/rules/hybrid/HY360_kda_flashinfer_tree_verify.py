"""HY360 kda-flashinfer-tree-verify."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import effective_topk
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.sglang_facts.architectures import KDA_ARCHITECTURES
from specguard.sglang_facts.changes import Change

FLASHINFER = "flashinfer"
BASE = "--linear-attn-backend"
DECODE = "--linear-attn-decode-backend"
VERIFY = "--linear-attn-verify-backend"
# 0.5.17 keys the guard on the new verify backend, which the Kimi hook pins to nv_cutedsl when a
# speculative launch leaves it unset (kimi_k3_hook.py:22-28): only a typed flashinfer is refused.
GUARD_ON_VERIFY = Change(
    "0.5.17",
    "0.5.17 layers/attention/linear/kda_backend.py:362-371 (0.5.16: decode, :263-275)",
)


def _flashinfer_source(ctx: CheckContext) -> str | None:
    """The flag that makes the guarded KDA kernel flashinfer, or None when it is not flashinfer."""
    if GUARD_ON_VERIFY.present_in(ctx.version):
        return VERIFY if ctx.spec.last_value(VERIFY) == FLASHINFER else None
    # 0.5.16: decode = --linear-attn-decode-backend or --linear-attn-backend (server_args.py:5264). The SM100
    # bf16-SSM default to flashinfer (:5252-5257) depends on the resolved mamba SSM dtype: left quiet.
    typed = ctx.spec.last_value(DECODE)
    if typed is not None:
        return DECODE if typed == FLASHINFER else None
    return BASE if ctx.spec.last_value(BASE) == FLASHINFER else None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm is None
        or ctx.target is None
        or ctx.target.architecture not in KDA_ARCHITECTURES
    ):
        return
    topk = effective_topk(ctx)
    source = _flashinfer_source(ctx)
    if topk is None or topk <= 1 or source is None:
        return
    fix = (
        fix_of(
            f"drop {VERIFY} (the Kimi hook pins nv_cutedsl)",
            Applicability.UNSAFE,
            Edit(name=VERIFY, value=None),
        )
        if source == VERIFY
        else fix_of(
            f"decode KDA with triton ({DECODE} triton)",
            Applicability.UNSAFE,
            Edit(name=DECODE, value="triton"),
        )
    )
    yield RULE.finding(
        f"{ctx.flag(source)} {FLASHINFER} on the KDA target {ctx.target.architecture} with a draft tree "
        f"(topk {topk}) in SGLang {ctx.version}: the FlashInfer KDA verify kernel is chain-only, so building the "
        "linear-attention backend raises 'KDA FlashInfer speculative decoding only supports topk=1' after the "
        f"weights load. Use another KDA {'verify' if source == VERIFY else 'decode'} backend, or draft a chain "
        f"({ctx.flag('--speculative-eagle-topk')} 1)",
        flags=(source, "--speculative-eagle-topk"),
        fix=fix,
    )


KIMI_LINEAR_EAGLE3_TREE = (
    "--model-path",
    "moonshotai/Kimi-Linear-48B-A3B-Instruct",
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    "/ckpt/kimi-linear-eagle3",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "4",
    "--speculative-num-draft-tokens",
    "8",
)
KIMI_LINEAR_FACTS = {"architectures": ("KimiLinearForCausalLM",)}

RULE = Rule(
    check=check,
    code="HY360",
    category=Category.START,
    name="kda-flashinfer-tree-verify",
    summary="a Kimi Linear / Kimi-K3 (KDA) target with a flashinfer linear-attention kernel refuses a draft tree "
    "(topk > 1) at backend setup (0.5.16+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="A target whose config.json architectures[0] is KimiLinearForCausalLM or KimiK3ForConditionalGeneration "
        "(SGLang's KDA linear-attention backend) with a speculative draft tree (topk above 1, typed or chosen by "
        "SGLang) and a FlashInfer KDA kernel: in 0.5.16 the decode kernel (`--linear-attn-decode-backend flashinfer`, "
        "or `--linear-attn-backend flashinfer` without a decode override), from 0.5.17 the verify kernel "
        "(`--linear-attn-verify-backend flashinfer`).",
        why="0.5.16 added the FlashInfer KDA kernel (recurrent_kda), which has no tree-ancestor traversal, and "
        '`KDAAttnBackend.__init__` raises "KDA FlashInfer speculative decoding only supports topk=1 (EAGLE tree '
        'verify / retrieve_parent_token is unsupported)." when the decode backend is flashinfer and '
        "`speculative_eagle_topk` is above 1 (0.5.16 layers/attention/linear/kda_backend.py:263-275; decode "
        "resolution server_args.py:5264). 0.5.15 has no flashinfer KDA decode kernel (kda_backend.py:55-59 "
        "refuses it for every launch). 0.5.17 keys the test on the new verify backend (kda_backend.py:362-371); "
        "an unset verify backend follows a flashinfer decode backend (linear/utils.py:73-76), but for these two "
        "architectures the Kimi hook pins it to nv_cutedsl whenever speculation is on (kimi_k3_hook.py:22-28, "
        "called from server_args.py:5094-5104), so only a typed flashinfer verify backend is refused. Unchanged in "
        "0.5.23 (kda_backend.py:499-512; hook from arg_groups/model_hook.py:239-249). The SM100 default of a "
        "flashinfer decode backend under a bfloat16 mamba SSM state (0.5.16 server_args.py:5252-5257) depends on a "
        "resolved dtype specguard does not predict: that launch is not checked.",
        fix="On 0.5.17+ drop `--linear-attn-verify-backend flashinfer` (nv_cutedsl is pinned); on 0.5.16 decode KDA "
        "with triton. Or draft a chain (`--speculative-eagle-topk 1`).",
        fix_safety="Unsafe: it changes the linear-attention kernel that runs.",
    ),
    bad=Example(
        argv=(*KIMI_LINEAR_EAGLE3_TREE, VERIFY, FLASHINFER),
        target=KIMI_LINEAR_FACTS,
        sglang_version="0.5.17",
    ),
    good=Example(
        argv=(*KIMI_LINEAR_EAGLE3_TREE, VERIFY, "triton"),
        target=KIMI_LINEAR_FACTS,
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.15: python/sglang/srt/layers/attention/linear/kda_backend.py:55-59 (no flashinfer KDA decode)",
        (
            "sglang 0.5.16: python/sglang/srt/layers/attention/linear/kda_backend.py:263-275; server_args.py:5252-5264; "
            "layers/attention/attention_registry.py:399-400"
        ),
        (
            "sglang 0.5.17: python/sglang/srt/layers/attention/linear/kda_backend.py:362-371; linear/utils.py:73-76; "
            "arg_groups/kimi_k3_hook.py:22-28; server_args.py:5094-5104"
        ),
        (
            "sglang 0.5.23: python/sglang/srt/layers/attention/linear/kda_backend.py:499-512; "
            "arg_groups/model_hook.py:239-249"
        ),
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(r"KDA FlashInfer speculative decoding only supports topk=1",),
)
