"""SV002 remote-code-will-run."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Dialect, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs


def check(ctx: CheckContext) -> Iterator[Finding]:
    slime = ctx.spec.dialect is Dialect.SLIME
    if not (ctx.spec.get("trust_remote_code") or slime):
        return
    why = "slime always passes trust_remote_code=True" if slime else f"with {ctx.flag('--trust-remote-code')}"
    for role, facts in (("target", ctx.target), ("draft", ctx.draft)):
        if facts is None or not facts.has_remote_code:
            continue
        yield RULE.finding(
            f"{why}, the {role}'s config.json names Python code (auto_map) in {facts.source}: transformers "
            "imports and runs it in the server process with the server's rights. Read it first, or drop "
            f"{ctx.flag('--trust-remote-code')} where SGLang has a native implementation of the architecture.",
            flags=("--trust-remote-code",),
        )


RULE = Rule(
    check=check,
    code="SV002",
    category=Category.EXPOSED,
    name="remote-code-will-run",
    summary="--trust-remote-code with a model whose config.json has an auto_map: its code will run",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="With `--trust-remote-code` (always on in slime), fires for the target or the draft whose "
        "config.json has an `auto_map`, wherever the model comes from (a local directory included).",
        why="`auto_map` points transformers at Python files shipped with the model; with "
        "`trust_remote_code` SGLang's config and tokenizer loading imports them, so they run in the "
        "server process with its rights (GPU, files, network, credentials). DM009 asks to pin a hub "
        "model's revision; this rule says that code runs at all, pinned or not.",
        fix="Review the repository's Python files before launching, or leave `--trust-remote-code` off "
        "when SGLang implements the architecture natively.",
        fix_safety="No fix: only the user can decide to trust the code.",
    ),
    bad=Example(
        argv=("--model-path", "XiaomiMiMo/MiMo-7B-RL", "--trust-remote-code", "--speculative-algorithm", "EAGLE"),
        target={"has_remote_code": True},
    ),
    # The same model without --trust-remote-code: SGLang implements MiMoForCausalLM itself, so
    # the repository's Python files are never imported.
    good=Example(
        argv=("--model-path", "XiaomiMiMo/MiMo-7B-RL", "--speculative-algorithm", "EAGLE"),
        target={"has_remote_code": True},
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/models/mimo.py:160 (EntryClass = MiMoForCausalLM, native)",
        "sglang 0.5.23: python/sglang/srt/configs/model_config.py:622,685 (trust_remote_code passed to the HF loaders)",
        "design: dialects.md §1.3 (slime passes trust_remote_code=True)",
    ),
)
