"""DM043 standalone-hidden-size-mismatch."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import LLAMA31_8B


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "STANDALONE" or ctx.target is None or ctx.draft is None:
        return
    if ctx.spec.get("speculative_draft_model_path") is None:
        return
    target_hidden, draft_hidden = ctx.target.hidden_size, ctx.draft.hidden_size
    if target_hidden is None or draft_hidden is None or target_hidden == draft_hidden:
        return
    yield RULE.finding(
        f"STANDALONE with a draft of hidden_size {draft_hidden} and a target of {target_hidden}: SGLang "
        f"{ctx.env.sglang_version} sizes idle draft inputs by the target's width while the draft writes its "
        "own, so once an idle batch merges into a running one the server dies with 'Sizes of tensors must "
        f"match ... Expected size {target_hidden} but got size {draft_hidden}' (after some requests, under "
        "concurrency). From 0.5.12 a STANDALONE draft carries no hidden states; upgrade, or use a draft of the target's width",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    check=check,
    code="DM043",
    category=Category.CRASH,
    name="standalone-hidden-size-mismatch",
    summary="STANDALONE with a draft narrower or wider than the target crashes when batches merge (before 0.5.12)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    sglang_versions="<0.5.12",
    docs=RuleDocs(
        what="STANDALONE with a draft whose `hidden_size` differs from the target's, on releases before 0.5.12.",
        why="The draft's hidden states are draft-wide, but the idle `EagleDraftInput` made after verify is "
        "created with `batch.model_config.hidden_size`, the target's (sglang 0.5.9 "
        "`speculative/eagle_info.py:598-603`; 0.5.10 :600-605; 0.5.11 :640-646 still uses the target's "
        "`spec_hidden_size`). From 0.5.12 the STANDALONE draft input carries no hidden states at all "
        "(`eagle_info.py:728-735`, `hidden_size_for` returns None for STANDALONE). Before that, `EagleDraftInput.merge_batch` then concatenates the two widths and raises "
        "a size mismatch: reported for Llama-3.1-8B (4096) with Llama-3.2-1B (2048) on 0.5.9 "
        "(sgl-project/sglang#24215, fixed by #24217) and on the STANDALONE v1 and v2 workers "
        "(sgl-project/sglang#10090 and #12625 comments, 'after some number of requests'), and for "
        "Nemotron-9B (4480) with Llama-3.2-1B (sgl-project/sglang#14563). The server starts and serves, then "
        "crashes under concurrency, so this is an error.",
        fix="Upgrade to SGLang 0.5.12 or later, or choose a draft with the target's hidden_size. No automatic fix.",
        fix_safety="No fix: the release and the draft are the user's choice.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "STANDALONE",
              "--speculative-draft-model-path", "meta-llama/Llama-3.2-1B-Instruct"),
        target={"hidden_size": 4096},
        draft={"hidden_size": 2048},
        sglang_version="0.5.9",
    ),
    good=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "STANDALONE",
              "--speculative-draft-model-path", "meta-llama/Llama-3.2-1B-Instruct"),
        target={"hidden_size": 4096},
        draft={"hidden_size": 2048},
        sglang_version="0.5.12",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/24215",
        "https://github.com/sgl-project/sglang/pull/24217",
        "https://github.com/sgl-project/sglang/pull/12625",
        "https://github.com/sgl-project/sglang/pull/14563",
        "sglang 0.5.9: python/sglang/srt/speculative/eagle_info.py:598-603 (idle input sized by the target), :784 merge_batch",
        "sglang 0.5.11: python/sglang/srt/speculative/eagle_info.py:640-646 (still the target's spec_hidden_size)",
        "sglang 0.5.12: python/sglang/srt/speculative/eagle_info.py:728-735 (no hidden states for STANDALONE)",
    ),
    log_signatures=(
        # merge_batch joins the batches' hidden states on dimension 0 (0.5.9 eagle_info.py:802-804);
        # the frame names the place, the message alone is common. As a traceback prints them:
        #   File ".../speculative/eagle_info.py", line 802, in merge_batch
        #   RuntimeError: Sizes of tensors must match except in dimension 0. Expected size 4096 but got size 2048
        r"eagle_info\.py\", line \d+, in merge_batch",
        r"Sizes of tensors must match except in dimension 0\b",
    ),
)
