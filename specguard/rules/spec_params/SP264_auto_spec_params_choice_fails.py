"""SP264 auto-spec-params-choice-fails."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE3, LLAMA31_8B_EAGLE3_CHAIN
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import AUTO_SPEC_PARAMS_LOCAL_CONFIG

# What auto_choose_speculative_params returns for every architecture in these releases
# (0.4.4.post4 .. 0.4.6 server_args.py, four rows, all (5, 4, 8)).
AUTO_STEPS, AUTO_TOPK, AUTO_DRAFT_TOKENS = 5, 4, 8
# Where specguard found config.json when --model-path named a hub repository, not a folder.
HUB_ORIGINS = frozenset({"hub", "hf-cache"})


def _failure(ctx: CheckContext) -> str | None:
    """How the automatic choice fails for this launch; None when it does not, or cannot be told."""
    if not AUTO_SPEC_PARAMS_LOCAL_CONFIG.present_in(ctx.version):
        return (
            "which first reads self.decrypted_config_file, a field ServerArgs does not have, so argument parsing "
            "fails with AttributeError before anything loads"
        )
    if ctx.target is None or ctx.target.origin not in HUB_ORIGINS:
        return None  # a local folder has its config.json; an unknown origin stays quiet
    return (
        f"which opens {ctx.flag('--model-path')}/config.json as a file; {ctx.target.source} is a hub repository, "
        "not a folder, so argument parsing raises ValueError '.../config.json is not found.' before anything loads"
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS:
        return
    params = (
        "speculative_num_steps",
        "speculative_eagle_topk",
        "speculative_num_draft_tokens",
    )
    if any(ctx.spec.get(dest) is not None for dest in params):
        return  # a partial set fails the assert before the read (SP001)
    failure = _failure(ctx)
    if failure is None:
        return
    steps, topk, tokens = (
        ctx.flag("--speculative-num-steps"),
        ctx.flag("--speculative-eagle-topk"),
        ctx.flag("--speculative-num-draft-tokens"),
    )
    yield RULE.finding(
        f"{ctx.algorithm} with none of {steps}, {topk}, {tokens}: SGLang {ctx.version} chooses them in "
        f"auto_choose_speculative_params, {failure}. Set the three flags (SGLang "
        f"would choose {steps} {AUTO_STEPS}, {topk} {AUTO_TOPK}, {tokens} {AUTO_DRAFT_TOKENS})",
        flags=("--speculative-algorithm",),
        fix=set_flags(
            f"set {steps} {AUTO_STEPS}, {topk} {AUTO_TOPK}, {tokens} {AUTO_DRAFT_TOKENS} (SGLang's own choice)",
            Applicability.SAFE,
            speculative_num_steps=AUTO_STEPS,
            speculative_eagle_topk=AUTO_TOPK,
            speculative_num_draft_tokens=AUTO_DRAFT_TOKENS,
        ),
    )


RULE = Rule(
    check=check,
    code="SP264",
    category=Category.START,
    name="auto-spec-params-choice-fails",
    summary="EAGLE with no steps/topk/draft tokens fails at argument time (0.4.4.post4-0.4.5.post3; 0.4.6 for a hub id)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 or NEXTN with none of `--speculative-num-steps`, `--speculative-eagle-topk`, "
        "`--speculative-num-draft-tokens`: SGLang 0.4.4.post4 through 0.4.5.post3 always; 0.4.6 when "
        "`--model-path` is a hub repository (specguard read its config.json from the hub or the Hugging Face "
        "cache; a local folder or an unknown origin stays quiet).",
        why="With the three unset, `ServerArgs.__post_init__` calls `auto_choose_speculative_params(self)` "
        "(0.4.4.post4 server_args.py:341-351; 0.4.5.post3 :334-344), whose first line reads "
        "`self.decrypted_config_file` (0.4.4.post4 :1319; 0.4.5.post3 :1367). No release in that range declares the "
        "field (it appears nowhere else in the 0.4.5.post3 wheel), so the launch fails with AttributeError at "
        "argument time. 0.4.6 drops the read but opens `os.path.join(model_path, 'config.json')` and raises "
        "`ValueError('<path> is not found.')` when that file does not exist (server_args.py:1357-1365), as for a "
        "hub id. 0.4.6.post2 takes the architecture from `get_config` instead (server_args.py:347, 1414-1424). "
        "Every architecture gets (5, 4, 8) in these releases, so setting the three flags runs what SGLang meant to.",
        fix="Set `--speculative-num-steps 5 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8`.",
        fix_safety="Safe: the values SGLang's automatic choice returns for every architecture in these releases.",
    ),
    bad=Example(argv=LLAMA31_8B_EAGLE3, sglang_version="0.4.5.post3"),
    good=Example(argv=LLAMA31_8B_EAGLE3_CHAIN, sglang_version="0.4.5.post3"),
    sources=(
        "sglang 0.4.4.post2: python/sglang/srt/server_args.py (no auto_choose_speculative_params)",
        "sglang 0.4.4.post4: python/sglang/srt/server_args.py:341-351,1313-1320",
        "sglang 0.4.5.post3: python/sglang/srt/server_args.py:334-344,1361-1372",
        "sglang 0.4.6: python/sglang/srt/server_args.py:330-340,1357-1365",
        "sglang 0.4.6.post2: python/sglang/srt/server_args.py:347,365,1414-1424 (get_model_arch through get_config)",
    ),
    sglang_versions=">=0.4.4.post4,<=0.4.6",
    log_signatures=(
        r"'ServerArgs' object has no attribute 'decrypted_config_file'",
        r"config\.json is not found\.",
    ),
)
