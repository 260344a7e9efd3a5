"""SP001 cases the differential suite (tests/parity) found."""

from __future__ import annotations

import pytest

from specguard.engine import check
from specguard.models import Applicability
from specguard.rules import ALL_RULES
from specguard.rules.base import Example

EAGLE3 = ("--model-path", "t", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d")


@pytest.mark.parametrize("topk", ["0", "-2"])
def test_topk_without_steps_below_one_gets_a_chain_fix(topk):
    # A tree of topk <= 0 offers no candidates; the fix used to search for enough steps forever.
    ctx = Example(argv=(*EAGLE3, "--speculative-eagle-topk", topk, "--speculative-num-draft-tokens", "8"),
                  target={"architectures": ("LlamaForCausalLM",)}).context()
    outcome = check(ALL_RULES, ctx, fix_level=Applicability.UNSAFE)
    corrected = outcome.corrected
    assert (corrected.get("speculative_num_steps"), corrected.get("speculative_eagle_topk"),
            corrected.get("speculative_num_draft_tokens")) == (7, 1, 8)
    assert not [f for f in outcome.errors if f.code in ("SP001", "SP005")]


@pytest.mark.parametrize("steps", ["0", "-1"])
def test_steps_below_one_without_topk_agrees_with_sp005(steps):
    # SP001 and SP005 both fix this; they used to set different draft-token counts, a conflict
    # that left both unapplied.
    ctx = Example(argv=(*EAGLE3, "--speculative-num-steps", steps, "--speculative-num-draft-tokens", "1"),
                  target={"architectures": ("LlamaForCausalLM",)}).context()
    outcome = check(ALL_RULES, ctx, fix_level=Applicability.UNSAFE)
    assert not outcome.conflicts
    corrected = outcome.corrected
    assert (corrected.get("speculative_num_steps"), corrected.get("speculative_eagle_topk"),
            corrected.get("speculative_num_draft_tokens")) == (1, 1, 2)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (("--speculative-num-steps", "-1", "--speculative-num-draft-tokens", "8"), (1, 1, 2)),
        (("--speculative-num-steps", "5", "--speculative-num-draft-tokens", "0"), (5, 1, 6)),
        (("--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "0"), (3, 4, 2)),
    ],
)
def test_sp001_and_sp005_fixes_do_not_conflict(extra, expected):
    ctx = Example(argv=(*EAGLE3, *extra), target={"architectures": ("LlamaForCausalLM",)}).context()
    outcome = check(ALL_RULES, ctx, fix_level=Applicability.UNSAFE)
    assert not outcome.conflicts
    corrected = outcome.corrected
    assert (corrected.get("speculative_num_steps"), corrected.get("speculative_eagle_topk"),
            corrected.get("speculative_num_draft_tokens")) == expected
    assert not [f for f in outcome.errors if f.code in ("SP001", "SP005")]
