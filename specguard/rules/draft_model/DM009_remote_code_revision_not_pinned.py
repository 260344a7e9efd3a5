"""DM009 remote-code-revision-not-pinned."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Dialect, Finding, ModelFacts, Severity
from specguard.refs import is_full_commit
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.draft_model._common import is_hub_reference


def _unpinned(path: str | None, revision: str | None, facts: ModelFacts | None) -> bool:
    if not is_hub_reference(path, facts):
        return False
    if facts is not None and facts.has_remote_code is False:
        return False  # no auto_map: trust_remote_code runs nothing from this repository today
    return not is_full_commit(revision)


def check(ctx: CheckContext) -> Iterator[Finding]:
    slime = ctx.spec.dialect is Dialect.SLIME
    if not (ctx.spec.get("trust_remote_code") or slime):
        return
    why = "slime always passes trust_remote_code=True" if slime else f"with {ctx.flag('--trust-remote-code')}"
    model_path = ctx.spec.get("model_path")
    revision = ctx.spec.get("revision")
    if _unpinned(model_path, revision, ctx.target):
        now = f"at revision {revision!r}" if revision else "at its default branch"
        yield RULE.finding(
            f"{why}, the Python code in {model_path} {now} runs in the server process with its rights, and "
            f"whatever is pushed there next runs on the next start. Pin the commit you reviewed: "
            f"{ctx.flag('--revision')} <40-hex commit>",
            flags=("--revision",),
        )
    draft_path = ctx.spec.get("speculative_draft_model_path")
    if ctx.algorithm is not None and draft_path is not None and draft_path != model_path:
        draft_revision = ctx.spec.get("speculative_draft_model_revision")
        if _unpinned(draft_path, draft_revision, ctx.draft):
            now = f"at revision {draft_revision!r}" if draft_revision else "at 'main' (SGLang's default for the draft)"
            yield RULE.finding(
                f"{why}, the draft's code in {draft_path} {now} runs in the server process too. Pin it: "
                f"{ctx.flag('--speculative-draft-model-revision')} <40-hex commit>",
                flags=("--speculative-draft-model-revision",),
            )


RULE = Rule(
    check=check,
    code="DM009",
    category=Category.EXPOSED,
    name="remote-code-revision-not-pinned",
    summary="--trust-remote-code with a hub model whose revision is not a commit",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="With `--trust-remote-code` (always on in slime), fires for a target or draft given as a hub "
        "repo id (not a local directory) whose `--revision` / `--speculative-draft-model-revision` is not "
        "a 40-hex commit, unless its config.json has no `auto_map` (then no repository code runs).",
        why="`trust_remote_code` makes transformers import the repository's Python files (`auto_map`) in "
        "the server process. A branch or tag can move: the next restart runs whatever was pushed. SGLang "
        "sets the draft's revision to `main` when none is given (P11, `speculative_hook.py:123-131`). "
        "specguard reads the revision SGLang will be given, not the commit specguard itself resolved.",
        fix="Pin each hub model to a commit you reviewed: `--revision <commit>` and "
        "`--speculative-draft-model-revision <commit>` (e.g. the sgl-jax docs pin "
        "`AngelSlim/Qwen3-32B_eagle3` at `67caf31f9062d7ab64872e0a111d499bc16cd205`).",
        fix_safety="No fix: only the user can choose the commit to trust.",
    ),
    bad=Example(
        argv=("--model-path", "XiaomiMiMo/MiMo-7B-RL", "--trust-remote-code", "--speculative-algorithm", "EAGLE"),
        target={"has_remote_code": True, "revision": "0123456789abcdef0123456789abcdef01234567"},
    ),
    good=Example(
        argv=("--model-path", "XiaomiMiMo/MiMo-7B-RL", "--trust-remote-code", "--speculative-algorithm", "EAGLE",
              "--revision", "0123456789abcdef0123456789abcdef01234567"),
        target={"has_remote_code": True, "revision": "0123456789abcdef0123456789abcdef01234567"},
    ),
    sources=(
        "design: sglang-spec-checks.md P11 (draft revision defaults to main)",
        "design: dialects.md §1.3 (slime passes trust_remote_code=True) and §2 (pinned AngelSlim revision)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:123-131",
        "seed: sglang-speculative-decoding.md (Multi Token Prediction: MiMo-7B-RL with --trust-remote-code)",
    ),
)
