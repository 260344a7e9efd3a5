"""SL002 draft-context-caps-rollout."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Dialect, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.draft_model._common import derived_context_length
from specguard.rules.slime._slime import SLIME_HEAD
from specguard.sglang_facts.algorithms import DRAFT_CHECKPOINT_ALGORITHMS

OVERWRITE_ENV = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"


def _slime_int(ctx: CheckContext, flag: str) -> int | None:
    for item in reversed(ctx.spec.items):
        if item.flag == flag and item.extra and len(item.values) == 1:
            try:
                return int(item.values[0])
            except ValueError:
                return None
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in DRAFT_CHECKPOINT_ALGORITHMS or ctx.draft is None:
        return
    if ctx.spec.get("speculative_draft_model_path") is None or ctx.spec.env_flag(OVERWRITE_ENV):
        return
    draft_ctx = derived_context_length(ctx.draft)
    target_ctx = derived_context_length(ctx.target)
    if draft_ctx is None or (target_ctx is not None and target_ctx <= draft_ctx):
        return
    given = ctx.spec.get("context_length")
    cap = min(given, draft_ctx) if given is not None else draft_ctx
    response = _slime_int(ctx, "--rollout-max-response-len")
    prompt = _slime_int(ctx, "--rollout-max-prompt-len")
    context = _slime_int(ctx, "--rollout-max-context-len")
    if prompt is None and context is not None:
        prompt = context - 1  # slime's own default (slime/utils/arguments.py)
    truncate = ctx.spec.has("--allow-auto-truncate")
    consequence = (
        "SGLang truncates them silently (--sglang-allow-auto-truncate), cutting responses short"
        if truncate
        else "SGLang rejects them with 'Requested token count exceeds the model's maximum context length'"
    )
    severity = Severity.WARNING if truncate else None
    lead = f"the draft has {draft_ctx} positions, so each rollout's prompt + response must fit in {cap} tokens"
    if context is not None and context > cap:
        yield RULE.finding(
            f"{lead}, but --rollout-max-context-len is {context}: prompts up to {context - 1} tokens pass slime's "
            f"filter and {consequence}. Set --rollout-max-context-len {cap}",
            flags=("--context-length",),
            severity=severity,
        )
        return
    if response is not None and response >= cap:
        yield RULE.finding(
            f"{lead}, but --rollout-max-response-len is {response}: every request asks for at least "
            f"{response + 1} tokens and {consequence}. Lower --rollout-max-response-len below {cap}",
            flags=("--context-length",),
            severity=severity,
        )
        return
    if response is not None and prompt is not None:
        if prompt + response > cap:
            yield RULE.finding(
                f"{lead}, but prompts may have {prompt} tokens and responses {response} ({prompt + response} in "
                f"all): requests with prompts over {cap - response} tokens fail, {consequence}. Set "
                f"--rollout-max-prompt-len {cap - response} (or a shorter --rollout-max-response-len)",
                flags=("--context-length",),
                severity=severity,
            )
        return
    missing = [f for f, v in (("--rollout-max-prompt-len", prompt), ("--rollout-max-response-len", response)) if v is None]
    yield RULE.finding(
        f"{lead} (slime's guide: 'the combined length of prompt + response cannot exceed 2048 tokens'). "
        f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set, so longer requests reach SGLang "
        f"and {consequence}. Set them so that prompt + response <= {cap}",
        flags=("--context-length",),
        severity=Severity.WARNING,
    )


RULE = Rule(
    check=check,
    code="SL002",
    category=Category.WRONG_OUTPUT,
    name="draft-context-caps-rollout",
    summary="A short draft context caps prompt + response in slime rollouts",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="In slime, with a separate draft whose derived context (max_position_embeddings with rope "
        "scaling) is shorter than the target's, compares slime's `--rollout-max-context-len`, "
        "`--rollout-max-prompt-len` and `--rollout-max-response-len` with the context the server can "
        "serve: the draft's, or a smaller `--sglang-context-length`.",
        why="SGLang refuses to build the draft past its positions unless "
        "`SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1` (DM002), so the server runs with the draft's context "
        "(slime's guide: `--sglang-context-length 2048  # Limited by draft model`). slime sends each rollout "
        "with `max_new_tokens = --rollout-max-response-len` (`slime/rollout/sglang_rollout.py`), and SGLang's "
        "tokenizer manager rejects any request whose prompt + max_new_tokens exceed the context "
        "(`managers/tokenizer_manager.py:1333-1377`, 0.5.23) unless `--allow-auto-truncate`, which cuts "
        "the response instead. slime filters prompts by `--rollout-max-prompt-len` (default "
        "`--rollout-max-context-len - 1`) and does not clip the response. An error when a configured limit "
        "cannot fit, a warning when the limits are not set (or when truncation hides it).",
        fix="Set `--rollout-max-response-len` and `--rollout-max-prompt-len` (or "
        "`--rollout-max-context-len`) so that prompt + response fit. No automatic fix: how to split the "
        "budget is the user's choice.",
        fix_safety="No fix.",
    ),
    bad=Example(
        argv=("--hf-checkpoint", "/root/Llama-3.1-8B-Instruct", "--rollout-num-gpus-per-engine", "1",
              "--sglang-speculative-algorithm", "EAGLE3",
              "--sglang-speculative-draft-model-path", "/root/sglang-EAGLE3-LLaMA3.1-Instruct-8B",
              "--sglang-context-length", "2048", "--rollout-max-response-len", "8192"),
        target={"max_position_embeddings": 131072},
        draft={"max_position_embeddings": 2048},
        dialect=Dialect.SLIME,
    ),
    good=Example(
        argv=("--hf-checkpoint", "/root/Llama-3.1-8B-Instruct", "--rollout-num-gpus-per-engine", "1",
              "--sglang-speculative-algorithm", "EAGLE3",
              "--sglang-speculative-draft-model-path", "/root/sglang-EAGLE3-LLaMA3.1-Instruct-8B",
              "--sglang-context-length", "2048", "--rollout-max-prompt-len", "1024",
              "--rollout-max-response-len", "1024"),
        target={"max_position_embeddings": 131072},
        draft={"max_position_embeddings": 2048},
        dialect=Dialect.SLIME,
    ),
    sources=(
        "seed: slime-speculative-decoding.en.md (Llama 3.1 8B EAGLE3 Issues: Context Length Limitation)",
        f"THUDM/slime {SLIME_HEAD}: slime/utils/arguments.py (--rollout-max-context-len, --rollout-max-prompt-len, --rollout-max-response-len; prompt default context-1)",
        f"THUDM/slime {SLIME_HEAD}: slime/rollout/sglang_rollout.py (max_new_tokens=args.rollout_max_response_len)",
        "sglang 0.5.23: python/sglang/srt/managers/tokenizer_manager.py:1333-1377",
    ),
    dialects=(Dialect.SLIME,),
)
