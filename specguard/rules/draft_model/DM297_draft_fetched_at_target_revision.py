"""DM297 draft-fetched-at-target-revision."""

from __future__ import annotations

import re
from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.sglang_facts.changes import DRAFT_REVISION_FLAG

# A Hugging Face repository id (owner/name); a path with a leading /, . or ~ is a directory.
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
# A commit hash names one repository's history, so another repository never has it.
COMMIT = re.compile(r"^[0-9a-f]{7,40}$")
DRAFT_REVISION = "--speculative-draft-model-revision"


def check(ctx: CheckContext) -> Iterator[Finding]:
    revision = ctx.spec.get("revision")
    draft = ctx.spec.get("speculative_draft_model_path")
    if ctx.algorithm is None or not revision or revision == "main" or not draft:
        return
    if draft == ctx.spec.get("model_path") or ctx.spec.get(
        "speculative_draft_model_revision"
    ):
        return  # the same repository, or the draft's own revision is given
    if not HUB_ID.match(str(draft)) or (
        ctx.draft is not None and ctx.draft.origin == "local"
    ):
        return  # a local directory has no revisions
    commit = bool(COMMIT.match(str(revision)))
    outcome = (
        f'the commit {revision} belongs to the target\'s repository, so the hub answers "Revision Not Found" and '
        "the server fails to start"
        if commit
        else f"the server starts only if {draft} has a branch or tag named {revision}, and then serves that draft revision"
    )
    can_pin = DRAFT_REVISION_FLAG.present_in(ctx.version)
    advice = (
        f"give the draft its own revision ({ctx.flag(DRAFT_REVISION)} main)"
        if can_pin
        else "drop the revision"
    )
    yield RULE.finding(
        f"{ctx.flag('--revision')} {revision} with the draft {draft} in SGLang {ctx.version}: the draft's config and "
        f"weights are fetched at the target's revision too; {outcome}. Upgrade to 0.5.6, which fetches a separate "
        f"draft at main, or {advice}",
        flags=("--revision", "--speculative-draft-model-path"),
        severity=Severity.ERROR if commit else Severity.WARNING,
        fix=set_flags(
            f"set {DRAFT_REVISION} main",
            Applicability.UNSAFE,
            speculative_draft_model_revision="main",
        )
        if can_pin
        else None,
    )


_LLAMA_EAGLE3_PINNED = (
    "--model-path",
    "meta-llama/Llama-3.1-8B-Instruct",
    "--revision",
    "0e9e39f249a16976918f6564b8830bc894c89659",
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B",
)

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM297",
    category=Category.START,
    name="draft-fetched-at-target-revision",
    summary="--revision with a separate hub draft before 0.5.6: the draft is fetched at the target's revision",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.SOMETIMES,
    docs=RuleDocs(
        what="`--revision` other than `main` together with a `--speculative-draft-model-path` that is another Hugging "
        "Face repository and no `--speculative-draft-model-revision`, SGLang up to 0.5.5.post3. An error when the "
        "revision is a commit hash (no other repository has it), a warning for a branch or tag name.",
        why="The draft worker builds its model config with the server's `--revision` (0.4.1.post5 managers/tp_worker.py:"
        "55-61). From 0.5.2 it passes `--speculative-draft-model-revision` (tp_worker.py:85-89), but "
        "`ModelConfig.from_server_args` falls back to `server_args.revision` when that is None (0.5.5.post3 "
        "tp_worker.py:229-233, configs/model_config.py:224-234), so the draft's config and weights are downloaded "
        "at the target's revision: a commit hash of the target repository is not found in the draft's and the "
        'server stops with the hub\'s "Revision Not Found" error. 0.5.6 sets the draft revision to `main` when a draft '
        "path is given without one (server_args.py:1662-1666; a target's own MTP draft takes its --revision, :1716).",
        fix="Add `--speculative-draft-model-revision main` (or the draft's own revision; the flag exists from 0.5.2), "
        "or upgrade to 0.5.6.",
        fix_safety="Unsafe: it picks which draft weights are served; main is what 0.5.6 and later fetch.",
    ),
    bad=Example(argv=_LLAMA_EAGLE3_PINNED, sglang_version="0.5.5.post3"),
    good=Example(argv=_LLAMA_EAGLE3_PINNED, sglang_version="0.5.6"),
    sources=(
        "sglang 0.4.1.post5: python/sglang/srt/managers/tp_worker.py:55-61",
        "sglang 0.5.2: python/sglang/srt/managers/tp_worker.py:85-89; python/sglang/srt/server_args.py:262,1548",
        "sglang 0.5.5.post3: python/sglang/srt/managers/tp_worker.py:229-233",
        "sglang 0.5.5.post3: python/sglang/srt/configs/model_config.py:224-234",
        "sglang 0.5.6: python/sglang/srt/server_args.py:1662-1666,1716",
    ),
    sglang_versions=">=0.4.1.post5,<=0.5.5.post3",
    log_signatures=(r"Revision Not Found",),
)
