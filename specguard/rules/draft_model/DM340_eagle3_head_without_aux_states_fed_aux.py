"""DM340 eagle3-head-without-aux-states-fed-aux."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3

DRAFT = {
    "architectures": ("LlamaForCausalLMEagle3",),
    "eagle_use_aux_hidden_state": False,
}


def check(ctx: CheckContext) -> Iterator[Finding]:
    # Only a head that states use_aux_hidden_state false: SGLang's default (and every release's) is true.
    if (
        ctx.algorithm != "EAGLE3"
        or ctx.draft is None
        or ctx.draft.eagle_use_aux_hidden_state is not False
    ):
        return
    yield RULE.finding(
        "The EAGLE3 draft's config.json sets eagle_config.use_aux_hidden_state: false (it was trained on the "
        f"target's last hidden state), but SGLang {ctx.version} does not read that key: the target always "
        "captures three aux layers and the head projects their concatenation through its fc, an input it was not "
        "trained on. Its drafts are poor and few are accepted, so decoding is slower than it should be (the "
        "output stays correct). SGLang 0.5.8 and later feed such a head the last hidden state",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM340",
    category=Category.PERF,
    name="eagle3-head-without-aux-states-fed-aux",
    summary="An EAGLE3 head with use_aux_hidden_state false is fed three aux layers through fc before 0.5.8",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm EAGLE3` with a draft whose config.json sets "
        "`eagle_config.use_aux_hidden_state: false`, SGLang 0.4.4.post2 (the first release with EAGLE3) to 0.5.7.",
        why="Up to 0.5.7 the target's model runner calls `set_eagle3_layers_to_capture` for every EAGLE3 launch "
        "without reading `use_aux_hidden_state` (0.4.4.post2 `model_executor/model_runner.py:211-213`, 0.5.7 "
        ":553-575), so the draft receives three concatenated target layers and `LlamaModel.forward` projects them "
        "through `fc` whenever their width differs from the embeddings' (0.4.4.post2 `models/llama_eagle3.py:"
        "108-111, 127-129`; 0.5.7 :135-139, 162-163). A head trained on the last hidden state alone runs on an "
        "input it never saw (its `fc`, if the checkpoint has none, keeps its initial values): acceptance falls. "
        "0.5.8 reads the key (`model_runner.py:320-345`, and captures aux layers only when it is true, :587-590; "
        "`speculative/eagle_worker.py:188-196`, `eagle_worker_v2.py:150-157`); the head then gets the last hidden "
        "state and skips `fc` (`llama_eagle3.py:162-163`). 0.5.23 still reads it "
        "(`model_executor/model_runner_components/spec_aux_hidden_state.py:186-191`).",
        fix="Use SGLang 0.5.8 or later with this head, or a head trained on aux hidden states.",
        fix_safety="No automatic fix: the release and the draft checkpoint are the user's choice.",
    ),
    bad=Example(argv=LLAMA31_8B_EAGLE3, draft=DRAFT, sglang_version="0.5.7"),
    good=Example(argv=LLAMA31_8B_EAGLE3, draft=DRAFT, sglang_version="0.5.8"),
    sources=(
        "sglang 0.4.4.post2: python/sglang/srt/model_executor/model_runner.py:211-213",
        "sglang 0.4.4.post2: python/sglang/srt/models/llama_eagle3.py:108-111, 127-129",
        "sglang 0.5.7: python/sglang/srt/model_executor/model_runner.py:553-575",
        "sglang 0.5.7: python/sglang/srt/models/llama_eagle3.py:135-139, 162-163",
        "sglang 0.5.8: python/sglang/srt/model_executor/model_runner.py:320-345, 587-590",
        "sglang 0.5.8: python/sglang/srt/speculative/eagle_worker.py:188-196",
        "sglang 0.5.8: python/sglang/srt/speculative/eagle_worker_v2.py:150-157",
        "sglang 0.5.23: python/sglang/srt/model_executor/model_runner_components/spec_aux_hidden_state.py:186-191",
    ),
    sglang_versions=">=0.4.4.post2,<0.5.8",
)
