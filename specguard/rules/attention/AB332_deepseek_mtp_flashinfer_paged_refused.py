"""AB332 deepseek-mtp-flashinfer-paged-refused."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.examples import DEEPSEEK_V3_MLA_FACTS
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

# The architectures ServerArgs.__post_init__ treats as DeepSeek MTP targets (0.5.1 server_args.py:633-634).
MTP_ARCHITECTURES = ("DeepseekV3ForCausalLM", "Glm4MoeForCausalLM")


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.target is None:
        return
    if (
        ctx.target.architecture not in MTP_ARCHITECTURES
        or ctx.spec.get("attention_backend") != "flashinfer"
    ):
        return
    pages = ctx.spec.get("page_size")
    if pages is None or pages == 1:
        return
    yield RULE.finding(
        f"{ctx.flag('--attention-backend')} flashinfer with {ctx.flag('--page-size')} {pages} and {ctx.algorithm} "
        f"on {ctx.target.architecture}: SGLang {ctx.env.sglang_version} raises ValueError 'Speculative decoding "
        "with page_size != 1 is not supported. Please set page_size to 1.' at argument time. Use page size 1, or "
        "SGLang 0.5.1.post2 or later",
        flags=("--attention-backend", "--page-size", "--speculative-algorithm"),
        fix=set_flags("use page size 1", Applicability.UNSAFE, page_size=1),
    )


DEEPSEEK_V3_NEXTN = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3",
    "--speculative-algorithm",
    "NEXTN",
    "--attention-backend",
    "flashinfer",
)

RULE = Rule(
    check=check,
    code="AB332",
    category=Category.START,
    name="deepseek-mtp-flashinfer-paged-refused",
    summary="EAGLE/NEXTN on a DeepSeek-V3 or GLM-4.5 target with flashinfer and a page size other than 1 "
    "(0.5.1-0.5.1.post1)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 or NEXTN on a target whose first architecture is DeepseekV3ForCausalLM or "
        "Glm4MoeForCausalLM, with `--attention-backend flashinfer` and a `--page-size` other than 1, on SGLang 0.5.1 "
        "or 0.5.1.post1.",
        why="0.5.1 added, in `ServerArgs.__post_init__`'s EAGLE branch for these two architectures, `if self.page_size "
        "!= 1 and self.attention_backend == 'flashinfer': raise ValueError('Speculative decoding with page_size != 1 "
        "is not supported. Please set page_size to 1.')` (0.5.1 `server_args.py:633-645`; 0.5.0rc2 `:606-613` "
        "has only the draft-path default). The attention backend is the typed one there: before 0.5.5 the default "
        "is picked later, in the model runner, and an unset page size has become 1 at `:520-521`. 0.5.1.post2 drops "
        "the raise (`server_args.py:634-641`).",
        fix="Use page size 1 (or another backend), or SGLang 0.5.1.post2 or later.",
        fix_safety="Unsafe: the KV cache's page size changes.",
    ),
    bad=Example(
        argv=(*DEEPSEEK_V3_NEXTN, "--page-size", "64"),
        target=DEEPSEEK_V3_MLA_FACTS,
        gpu="B200",
        sglang_version="0.5.1",
    ),
    good=Example(
        argv=(*DEEPSEEK_V3_NEXTN, "--page-size", "1"),
        target=DEEPSEEK_V3_MLA_FACTS,
        gpu="B200",
        sglang_version="0.5.1",
    ),
    sources=(
        "sglang 0.5.0rc2: python/sglang/srt/server_args.py:606-613",
        "sglang 0.5.1: python/sglang/srt/server_args.py:520-521, 633-645",
        "sglang 0.5.1.post1: python/sglang/srt/server_args.py:642-645",
        "sglang 0.5.1.post2: python/sglang/srt/server_args.py:634-641",
    ),
    sglang_versions=">=0.5.1,<0.5.1.post2",
    log_signatures=(
        r"Speculative decoding with page_size != 1 is not supported\. Please set page_size to 1\.",
    ),
)
