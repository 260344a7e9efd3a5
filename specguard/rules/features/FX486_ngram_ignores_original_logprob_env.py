"""FX486 ngram-ignores-original-logprob-env."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import (
    Applicability,
    Category,
    Edit,
    Finding,
    RequestFeature,
    Severity,
)
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import QWEN25_7B_NGRAM

SGLANG_NAME = "SGLANG_RETURN_ORIGINAL_LOGPROB"
# The unprefixed name the NGRAM worker of these two releases reads instead.
NGRAM_NAME = "RETURN_ORIGINAL_LOGPROB"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "NGRAM"
        or not ctx.spec.env_flag(SGLANG_NAME)
        or ctx.spec.env_flag(NGRAM_NAME)
    ):
        return
    yield RULE.finding(
        f"{SGLANG_NAME}=1 with NGRAM in SGLang {ctx.version}: the NGRAM worker reads the unprefixed {NGRAM_NAME} "
        "instead, so the logprobs of the tokens it verifies stay computed from temperature-scaled logits while "
        f"the rest of the server returns the original ones. Also set {NGRAM_NAME}=1, or upgrade to 0.5.5.post3",
        flags=(),
        fix=fix_of(
            f"also set {NGRAM_NAME}=1",
            Applicability.SAFE,
            Edit(target="env", name=NGRAM_NAME, value="1"),
        ),
    )


RULE = Rule(
    check=check,
    code="FX486",
    category=Category.WRONG_OUTPUT,
    needs=RequestFeature.LOGPROBS,
    name="ngram-ignores-original-logprob-env",
    summary="NGRAM ignores SGLANG_RETURN_ORIGINAL_LOGPROB and returns temperature-scaled logprobs "
    "(0.5.5.post1-0.5.5.post2)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`SGLANG_RETURN_ORIGINAL_LOGPROB=1` with `--speculative-algorithm NGRAM` (and no "
        "`RETURN_ORIGINAL_LOGPROB=1`), SGLang 0.5.5.post1 and 0.5.5.post2, for requests that ask for logprobs.",
        why="0.5.5.post1 gave the NGRAM worker logprobs (`add_logprob_values`), but it reads "
        '`get_bool_env_var("RETURN_ORIGINAL_LOGPROB")` (speculative/ngram_worker.py:22, 219-226) while the EAGLE '
        "worker reads `SGLANG_RETURN_ORIGINAL_LOGPROB` (eagle_worker.py:67, 778): with only the documented name "
        "set, NGRAM's verified tokens get log_softmax(logits / temperature). 0.5.5.post3 reads "
        "`envs.SGLANG_RETURN_ORIGINAL_LOGPROB` (ngram_worker.py:218); 0.5.5 has no NGRAM logprobs.",
        fix="Set `RETURN_ORIGINAL_LOGPROB=1` too (what these releases' NGRAM worker reads), or upgrade to "
        "0.5.5.post3.",
        fix_safety="Safe: it makes NGRAM follow the setting the launch already asks for.",
    ),
    bad=Example(
        argv=QWEN25_7B_NGRAM, env={SGLANG_NAME: "1"}, sglang_version="0.5.5.post2"
    ),
    good=Example(
        argv=QWEN25_7B_NGRAM, env={SGLANG_NAME: "1"}, sglang_version="0.5.5.post3"
    ),
    sources=(
        "sglang 0.5.5: python/sglang/srt/speculative/ngram_worker.py (no add_logprob_values)",
        "sglang 0.5.5.post1: python/sglang/srt/speculative/ngram_worker.py:22,202-226",
        "sglang 0.5.5.post2: python/sglang/srt/speculative/ngram_worker.py:22,202-226; speculative/eagle_worker.py:67,778",
        "sglang 0.5.5.post3: python/sglang/srt/speculative/ngram_worker.py:201-225",
    ),
    sglang_versions=">=0.5.5.post1,<=0.5.5.post2",
)
