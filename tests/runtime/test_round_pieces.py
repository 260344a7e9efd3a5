"""The pieces the batched EAGLE3 round was made cheaper with (issue #28) compute what they replaced:
the chain's placements built once per round, the hidden states handed from the verify to the
next draft extend as one view, the NumPy argmax, the two input norms of the EAGLE3 midlayer as
one. (That the round's outputs stay plain greedy decoding's is test_batched_speculative.py's.)"""

from __future__ import annotations

import pytest
import torch

from specguard.runtime.model import (
    TokensPerRow,
    causal_placement,
    chain_placements,
    rms_norm,
)
from specguard.runtime.speculative import RowHidden, greedy_tokens, stack_hidden


def test_chain_placements_place_each_step_as_a_causal_placement_of_one_token():
    rows, starts, steps, cache = [3, 4, 5], [7, 2, 9], 3, (2, 40)
    placements = chain_placements(
        rows, starts, steps, cache, torch.float32, torch.device("cpu")
    )
    assert len(placements) == steps
    for i, where in enumerate(placements):
        alone = causal_placement(
            rows, [s + i for s in starts], 1, torch.float32, torch.device("cpu")
        )
        assert torch.equal(where.rows, alone.rows) and torch.equal(
            where.slots, alone.slots
        )
        assert where.row_range == alone.row_range == slice(3, 6)
        # the chain's span is its last step's: the slots past a step's own are masked
        assert where.span == max(starts) + steps
        assert torch.equal(where.bias[:, :, : alone.span], alone.bias)
        assert torch.isinf(where.bias[:, :, alone.span :]).all()
        fresh = TokensPerRow(
            where.rows, where.slots, where.span, where.bias, where.row_range
        )
        assert torch.equal(where.cache_index(*cache), fresh.cache_index(*cache))


def test_one_token_per_row_shares_its_mask_across_the_query_group():
    where = chain_placements(
        [0, 1], [4, 6], 1, (2, 16), torch.float32, torch.device("cpu")
    )[0]
    grouped = where.grouped_bias(2)
    assert grouped.shape == (2, 1, 1, where.span)
    assert grouped.data_ptr() == where.bias.data_ptr()  # a view, not a copy per group


def test_hidden_states_of_one_verify_reach_the_extend_as_one_view():
    batch = torch.randn(4, 3, 5)
    rows = [RowHidden(batch, i, n) for i, n in enumerate([3, 1, 2, 3])]
    stacked = stack_hidden(rows)
    assert stacked.shape == (4, 3, 5) and stacked.data_ptr() == batch.data_ptr()
    for row, got in zip(rows, stacked):
        assert torch.equal(got[: row.length], row.tensor())
    gathered = stack_hidden([rows[0], rows[2]])  # a row left the batch: one gather
    assert torch.equal(gathered[1, :2], rows[2].tensor()) and gathered.shape == (
        2,
        3,
        5,
    )
    apart = [
        RowHidden.of(torch.randn(2, 5)),
        RowHidden.of(torch.randn(4, 5)),
    ]  # two prefills: padded
    padded = stack_hidden(apart)
    assert padded.shape == (2, 4, 5) and torch.equal(padded[0, :2], apart[0].tensor())


@pytest.mark.parametrize("shape", [(512,), (16, 256), (16, 4, 512)])
def test_greedy_tokens_is_torchs_argmax(shape):
    logits = torch.randn(shape)
    flat = logits.view(-1, shape[-1])
    flat[0, 3] = flat[0, 9] = flat[0].max() + 1  # a tie: the first maximum
    if flat.shape[0] > 1:
        flat[1, 5] = float("nan")  # NaN wins, as in torch
    assert torch.equal(greedy_tokens(logits), logits.argmax(-1))


def test_the_two_input_norms_as_one_equal_each_alone():
    embeds, hidden = torch.randn(6, 8), torch.randn(6, 8) * 3
    weight = torch.randn(2, 8)
    both = rms_norm(
        torch.cat([embeds, hidden], dim=-1).view(6, 2, 8), weight, 1e-6
    ).view(6, 16)
    alone = torch.cat(
        [rms_norm(embeds, weight[0], 1e-6), rms_norm(hidden, weight[1], 1e-6)], dim=-1
    )
    assert torch.equal(both, alone)
