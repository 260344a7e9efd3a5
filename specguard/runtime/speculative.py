"""Plain and speculative decoding, per request (:class:`Sequence`) on its own cache row.

Several requests advance together: plain decode steps as one batched target forward
(:meth:`Decoder.plain_step`); speculative rounds as one batched draft (:func:`propose_batch`:
the drafters that share a model draft in one ragged catch-up or extend forward, then one
forward per chain step or tree depth for all rows) and one target forward verifying every
request's tree, padded to the largest, each row under its own tree mask and RoPE positions
(:meth:`Decoder.spec_step`); acceptance is per request. New requests' prompts are prefilled
together (:meth:`Decoder.prefill_many`). One request alone runs the one-row path
(:meth:`Decoder.spec_round`), as decoding always has.

Cache convention, for the target and for a draft model alike: the cache holds the keys and
values of every committed token except the last one, which is the *root* of the next round.
A round drafts a tree under the root, runs one target forward over the root and the drafts,
keeps the longest path the target agrees with plus one token of its own (the bonus), and
moves the kept path's KV into contiguous slots. Rejected slots are simply overwritten later.

Losslessness:

* greedy: a draft is kept only if it equals the target's argmax at its parent, so the output
  is the target's greedy output token for token;
* sampling, STANDALONE chain: Leviathan et al. (arXiv:2211.17192) Algorithm 1, the draft
  samples from its own distribution q and each draft is kept with probability min(1, p/q),
  the replacement sampled from norm(max(0, p - q));
* sampling, trees (STANDALONE topk>1, NGRAM): drafts are deterministic, so each child is a
  point-mass proposal: child x is kept with probability p'(x) where p' is the target's
  distribution with the already-rejected siblings removed and renormalised, and if every
  child is rejected the token is sampled from p'. The emitted token follows p exactly.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol

import torch

from specguard.runtime.eagle import EagleHead
from specguard.runtime.generate_input import GREEDY_EPS, SamplingParams
from specguard.runtime.model import (
    CausalLM,
    TokensPerRow,
    causal_placement,
    ragged_placement,
)
from specguard.runtime.ngram import NgramCorpus
from specguard.runtime.tree import DraftTree


@dataclass(frozen=True)
class SpecConfig:
    """Resolved speculative parameters; ``algorithm`` None means plain decoding."""

    algorithm: str | None = None
    num_steps: int = 0
    topk: int = 1
    num_draft_tokens: int = 1
    ngram_min_bfs_breadth: int = 1
    ngram_max_bfs_breadth: int = 10
    ngram_match_type: str = "BFS"
    ngram_max_trie_depth: int = 18
    ngram_capacity: int = 10_000_000


@dataclass
class RoundResult:
    tokens: list[int]
    accepted_drafts: int | None  # None for the prefill and for plain decode steps
    prefill: bool = False


def logits_to_probs(logits: torch.Tensor, params: SamplingParams) -> torch.Tensor:
    """The same transform for target and draft: temperature, then top-k, top-p and min-p."""
    logits = logits / max(params.temperature, GREEDY_EPS)
    if params.top_k > 0 and params.top_k < logits.shape[-1]:
        kth = torch.topk(logits, params.top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, dim=-1)
    if params.top_p < 1.0:
        sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
        cumulative = sorted_probs.cumsum(-1)
        remove = cumulative - sorted_probs > params.top_p
        sorted_probs = sorted_probs.masked_fill(remove, 0.0)
        probs = torch.zeros_like(probs).scatter(-1, order, sorted_probs)
    if params.min_p > 0.0:
        threshold = probs.max(dim=-1, keepdim=True).values * params.min_p
        probs = probs.masked_fill(probs < threshold, 0.0)
    return probs / probs.sum(dim=-1, keepdim=True)


def greedy_tokens(logits: torch.Tensor) -> torch.Tensor:
    """``logits.argmax(-1)`` (the first maximum, as torch's). A CPU float32 tensor goes through
    NumPy, whose argmax is vectorised where torch's CPU kernel is not: a 16-row verify's
    ``[16, 4, 512]`` logits take 3 us there against 32 us."""
    if logits.device.type == "cpu" and logits.dtype == torch.float32:
        return torch.as_tensor(logits.numpy().argmax(-1))
    return logits.argmax(-1)


def _sample(probs: torch.Tensor, gen: torch.Generator | None) -> int:
    return int(torch.multinomial(probs, 1, generator=gen).item())


def _uniform(gen: torch.Generator | None) -> float:
    device = gen.device if gen is not None else None
    return float(torch.rand((), generator=gen, device=device).item())


#: drafted tokens, and the drafter's distributions over them when it sampled a chain (the
#: chain-sampling verification needs them; None: greedy drafts or a deterministic tree)
Proposal = tuple[DraftTree, list[torch.Tensor] | None]


@dataclass(frozen=True)
class RowHidden:
    """The target's hidden states of one request: the first ``length`` tokens of row ``index`` of
    a forward's ``batch`` ``[B, T, H]``. Kept as (batch, row) rather than sliced, so that the
    requests of a batched round hand them from the verify to the next draft extend as one view of
    the batch (:func:`stack_hidden`), not as a view and a padded copy per request."""

    batch: torch.Tensor
    index: int
    length: int

    @classmethod
    def of(cls, hidden: torch.Tensor) -> RowHidden:
        """One request's ``[T, H]``."""
        return cls(hidden.unsqueeze(0), 0, hidden.shape[0])

    def tensor(self) -> torch.Tensor:
        """``[length, H]``."""
        return self.batch[self.index, : self.length]


def stack_hidden(rows: list[RowHidden]) -> torch.Tensor:
    """The rows' hidden states padded to the longest ``[B, T, H]``: a view (or one gather) of the
    batch they all came from (a batched round's verify: every round after the first), padded
    copies otherwise. What pads a shorter row is not read: only its keys and values are written,
    to draft slots the next steps overwrite before reading them."""
    batch = rows[0].batch
    t = max(r.length for r in rows)
    if all(r.batch is batch for r in rows):
        index = [r.index for r in rows]
        if index == list(range(index[0], index[0] + len(index))):
            return batch[index[0] : index[0] + len(index), :t]
        return batch[torch.tensor(index, device=batch.device), :t]
    return torch.nn.utils.rnn.pad_sequence([r.tensor() for r in rows], batch_first=True)


#: a drafter's forward over a beam: (tokens, parent_rows, positions, start, mask) -> logits
Expand = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, int, torch.Tensor], torch.Tensor]


class Drafter(Protocol):
    """What a speculative round asks of a request's drafter, whatever it drafts with.

    One per request (:class:`Sequence`); the round calls :meth:`propose` then :meth:`accept`
    and never asks which kind it holds.
    """

    #: the drafter reads the target's hidden states (EAGLE heads): the target's forwards return them
    needs_hidden: bool

    @property
    def batch_key(self) -> object:
        """Drafters with equal keys draft together in a batched round (:func:`propose_batch`)."""

    def snapshot(self) -> object:
        """The drafter's per-request state, to :meth:`restore` if a batched round fails."""

    def restore(self, state: object) -> None:
        """Back to a :meth:`snapshot`."""

    def bind(self, row: int) -> None:
        """Point the drafter's cache (if it has one) at the request's row."""

    def start(self, committed: list[int], hidden: RowHidden | None) -> None:
        """After the prefill: the prompt and first token, and the target's hidden states of the prompt."""

    def propose(self, committed: list[int], params: SamplingParams, gen: torch.Generator | None) -> Proposal:
        """Draft a tree under ``committed[-1]`` (the root)."""

    def accept(self, committed: list[int], before: int, path: list[int], hidden: RowHidden | None) -> None:
        """After the verify: ``committed`` grew from ``before`` tokens by the tree nodes on ``path``
        (root first) and the bonus; ``hidden`` holds the target's hidden state at every tree node."""


class _Stateless:
    """Drafters with no per-request state of their own: they draft one request at a time."""

    @property
    def batch_key(self) -> object:
        return type(self)

    def snapshot(self) -> object:
        return None

    def restore(self, state: object) -> None:
        pass

    @staticmethod
    def propose_many(drafters: list[Drafter], seqs: list[Sequence]) -> list[Proposal]:
        return [d.propose(s.committed, s.params, s.gen) for d, s in zip(drafters, seqs, strict=True)]


class NoDrafter(_Stateless):
    """Plain decoding: the round drafts nothing, so the target's verify forward is a decode step."""

    needs_hidden = False

    def bind(self, row: int) -> None:
        pass

    def start(self, committed: list[int], hidden: RowHidden | None) -> None:
        pass

    def propose(self, committed: list[int], params: SamplingParams, gen: torch.Generator | None) -> Proposal:
        return DraftTree.root_only(committed[-1]), None

    def accept(self, committed: list[int], before: int, path: list[int], hidden: RowHidden | None) -> None:
        pass


class NgramDrafter(_Stateless):
    """NGRAM: drafts a tree from the n-grams of every request's tokens (a corpus all requests share)."""

    needs_hidden = False

    def __init__(self, corpus: NgramCorpus, spec: SpecConfig) -> None:
        self.corpus = corpus
        self.spec = spec

    def bind(self, row: int) -> None:
        pass

    def start(self, committed: list[int], hidden: RowHidden | None) -> None:
        self.corpus.insert(committed)

    def propose(self, committed: list[int], params: SamplingParams, gen: torch.Generator | None) -> Proposal:
        return self.corpus.draft(committed, self.spec.num_draft_tokens), None

    def accept(self, committed: list[int], before: int, path: list[int], hidden: RowHidden | None) -> None:
        self.corpus.insert(committed, already_inserted=before)


class ModelDrafter:
    """STANDALONE: a small LLM drafts a chain (topk 1) or an EAGLE-2-style tree (topk > 1)."""

    needs_hidden = False

    def __init__(self, draft: CausalLM, spec: SpecConfig) -> None:
        self.model = draft
        self.spec = spec
        self.valid = 0  # committed tokens whose KV is in the draft cache
        self.device = draft.device

    def bind(self, row: int) -> None:
        self.model.bind_row(row)

    @property
    def batch_key(self) -> object:
        return (ModelDrafter, id(self.model), self.spec)

    def snapshot(self) -> object:
        return self.valid

    def restore(self, state: object) -> None:
        assert isinstance(state, int)
        self.valid = state

    @staticmethod
    def propose_many(drafters: list[ModelDrafter], seqs: list[Sequence]) -> list[Proposal]:
        """Every request's draft at once: one ragged catch-up forward, then one batched forward
        per draft step (chain) or per tree depth (tree), all rows together."""
        model, spec = drafters[0].model, drafters[0].spec
        rows = [s.row for s in seqs]
        bases = [len(s.committed) for s in seqs]
        first = _catch_up_rows(model, rows, [d.valid for d in drafters], [s.committed[d.valid :] for d, s in zip(drafters, seqs)])
        for d, base in zip(drafters, bases):
            d.valid = base
        if spec.topk == 1:

            def step(tokens: torch.Tensor, i: int) -> torch.Tensor:
                return model.forward_decode(tokens, rows, [base + i for base in bases])

            return _draft_chains(seqs, first, spec.num_steps, step)

        def expand(
            tokens: torch.Tensor, parent_rows: torch.Tensor, positions: torch.Tensor, window: _Window
        ) -> torch.Tensor:
            return model.run_rows(tokens, positions, window.placement(rows, model.dtype, model.device))[0]

        trees = grow_trees([s.committed[-1] for s in seqs], first, spec, bases, model.device, expand)
        return [(tree, None) for tree in trees]

    def start(self, committed: list[int], hidden: RowHidden | None) -> None:
        self.valid = 0

    def propose(self, committed: list[int], params: SamplingParams, gen: torch.Generator | None) -> Proposal:
        if self.spec.topk == 1:
            return self.propose_chain(committed, params, gen)
        return self.propose_tree(committed), None

    def accept(self, committed: list[int], before: int, path: list[int], hidden: RowHidden | None) -> None:
        if self.spec.topk == 1:  # a tree's drafts sit in scratch slots: propose_tree already rewound
            self.after_chain(before, len(path) - 1)

    def _catch_up(self, committed: list[int]) -> torch.Tensor:
        """Feed the committed tokens the draft has not seen; logits after the last one."""
        pending = committed[self.valid :]
        tokens = torch.tensor(pending, dtype=torch.long, device=self.device)
        logits = self.model(tokens, None, self.valid, last_only=True)
        self.valid = len(committed)
        return logits[0]

    def propose_chain(
        self, committed: list[int], params: SamplingParams, gen: torch.Generator | None
    ) -> tuple[DraftTree, list[torch.Tensor] | None]:
        steps = self.spec.num_steps
        base = len(committed)
        logits = self._catch_up(committed)
        drafted: list[torch.Tensor] = []
        draft_probs: list[torch.Tensor] | None = None if params.greedy else []
        for i in range(steps):
            # Tokens stay tensors until the chain is done: one host round-trip per round, not per step.
            if draft_probs is None:
                token = logits.argmax(-1, keepdim=True)
            else:
                q = logits_to_probs(logits, params)
                token = torch.multinomial(q, 1, generator=gen)
                draft_probs.append(q)
            drafted.append(token)
            if i < steps - 1:
                pos = base + i
                logits = self.model(token, None, pos)[0]
        drafts = torch.cat(drafted).tolist()
        return DraftTree.chain([committed[-1], *drafts]), draft_probs

    def after_chain(self, committed_before: int, accepted: int) -> None:
        """Slots ``committed_before ..`` hold the first ``steps - 1`` drafts; keep the accepted ones."""
        self.valid = committed_before + min(accepted, self.spec.num_steps - 1)

    def propose_tree(self, committed: list[int]) -> DraftTree:
        base = len(committed)
        first = self._catch_up(committed)

        def expand(
            tokens: torch.Tensor, parent_rows: torch.Tensor, positions: torch.Tensor, start: int, mask: torch.Tensor
        ) -> torch.Tensor:
            return self.model.run(tokens, positions, start, mask)[0]

        tree = grow_tree(committed[-1], first, self.spec, base, self.device, expand)
        self.valid = base
        return tree


class EagleDrafter:
    """EAGLE / EAGLE3: a head over the target's hidden states drafts a chain or an EAGLE-2 tree.

    The head's cache is SGLang's draft extend: slot ``j`` holds (target hidden at ``j``, token
    ``j + 1``), so with ``n + 1`` committed tokens it holds ``n`` slots; the target hidden
    states of the tokens committed since the last round wait in ``pending``.
    """

    needs_hidden = True

    def __init__(self, head: EagleHead, spec: SpecConfig) -> None:
        self.head = head
        self.spec = spec
        self.device = head.device
        self.valid = 0
        self.pending: RowHidden | None = None
        # Greedy drafting picks in the draft vocabulary and maps the winners (no full-vocabulary scatter).
        self.hot = head.hot_token_ids
        self.hot_cpu = None if head.hot_token_ids is None else head.hot_token_ids.cpu()

    def bind(self, row: int) -> None:
        self.head.bind_row(row)

    @property
    def batch_key(self) -> object:
        return (EagleDrafter, id(self.head), self.spec)

    def snapshot(self) -> object:
        return (self.valid, self.pending)

    def restore(self, state: object) -> None:
        assert isinstance(state, tuple)
        self.valid, self.pending = state

    @staticmethod
    def propose_many(drafters: list[EagleDrafter], seqs: list[Sequence]) -> list[Proposal]:
        """Every request's draft at once: one ragged draft extend over the pending target hidden
        states, then one batched head forward per draft step (chain) or tree depth (tree)."""
        head, spec, device = drafters[0].head, drafters[0].spec, drafters[0].device
        rows = [s.row for s in seqs]
        pendings = [d.pending for d in drafters if d.pending is not None]
        assert len(pendings) == len(drafters), "every drafter has been started"
        lengths = [p.length for p in pendings]
        b = len(seqs)

        def extend(group: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
            g_lengths = [lengths[i] for i in group]
            t = max(g_lengths)
            g_valids = [drafters[i].valid for i in group]
            tokens = torch.tensor(
                [
                    seqs[i].committed[drafters[i].valid + 1 : drafters[i].valid + 1 + m] + [0] * (t - m)
                    for i, m in zip(group, g_lengths)
                ],
                dtype=torch.long,
            )
            hidden = stack_hidden([pendings[i] for i in group])
            placement = causal_placement([rows[i] for i in group], g_valids, t, head.dtype, device)
            # a chain's positions are its slots
            return head.run_rows(tokens.to(device), hidden, placement.slots, placement, from_target=True, last=[m - 1 for m in g_lengths])

        # a new request's whole prompt does not pad the others
        first, state = _by_groups(length_groups(lengths), b, extend)  # [B, V'], [B, H]
        for d, m in zip(drafters, lengths):
            d.valid += m
            d.pending = None
        slots = [d.valid for d in drafters]
        hot = drafters[0].hot
        if spec.topk == 1:
            # the chain's steps at the slots after the committed ones, placed once for all steps
            placements = head.chain_placements(rows, slots, spec.num_steps - 1)
            carried = {"hidden": state}

            def step(tokens: torch.Tensor, i: int) -> torch.Tensor:
                where = placements[i]
                step_logits, step_hidden = head.run_rows(tokens.unsqueeze(1), carried["hidden"].unsqueeze(1), where.slots, where)
                carried["hidden"] = step_hidden[:, 0]
                return step_logits[:, 0]

            return _draft_chains(seqs, first, spec.num_steps, step, hot, head.full_vocab)
        states = {"hidden": state.unsqueeze(1)}  # [B, beam, H]

        def expand(tokens: torch.Tensor, parent_rows: torch.Tensor, positions: torch.Tensor, window: _Window) -> torch.Tensor:
            rows_b = torch.arange(b).unsqueeze(1)
            parents = states["hidden"][rows_b.to(device), parent_rows.to(device)]
            out_logits, states["hidden"] = head.run_rows(tokens, parents, positions, window.placement(rows, head.dtype, device))
            return out_logits

        trees = grow_trees(
            [s.committed[-1] for s in seqs], first, spec, slots, device, expand, drafters[0].hot_cpu
        )
        return [(tree, None) for tree in trees]

    def start(self, committed: list[int], hidden: RowHidden | None) -> None:
        assert hidden is not None, "needs_hidden: the target returns its hidden states"
        self.valid = 0
        self.pending = hidden

    def propose(self, committed: list[int], params: SamplingParams, gen: torch.Generator | None) -> Proposal:
        if self.spec.topk == 1:
            return self.propose_chain(committed, params, gen)
        return self.propose_tree(committed), None

    def accept(self, committed: list[int], before: int, path: list[int], hidden: RowHidden | None) -> None:
        """Keep the target's hidden states at the root and the accepted drafts for the next extend."""
        assert hidden is not None, "needs_hidden: the target returns its hidden states"
        if path[-1] == len(path) - 1:  # the accepted nodes are the tree's first ones (a chain's always)
            self.pending = RowHidden(hidden.batch, hidden.index, len(path))
        else:
            self.pending = RowHidden.of(hidden.tensor()[torch.tensor(path, device=hidden.batch.device)])

    def _extend(self, committed: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        """Feed the pending (hidden, next token) pairs; logits and hidden after the last one."""
        assert self.pending is not None
        pending = self.pending.tensor()
        m = pending.shape[0]
        tokens = torch.tensor(committed[self.valid + 1 : self.valid + 1 + m], dtype=torch.long, device=self.device)
        logits, hidden = self.head(tokens, pending, None, self.valid, from_target=True)
        self.valid += m
        self.pending = None
        return logits[-1], hidden[-1:]

    def propose_chain(
        self, committed: list[int], params: SamplingParams, gen: torch.Generator | None
    ) -> tuple[DraftTree, list[torch.Tensor] | None]:
        steps = self.spec.num_steps
        logits, hidden = self._extend(committed)
        drafted: list[torch.Tensor] = []
        draft_probs: list[torch.Tensor] | None = None if params.greedy else []
        for i in range(steps):
            if draft_probs is None:
                token = logits.argmax(-1, keepdim=True)
                if self.hot is not None:
                    token = self.hot[token]
            else:
                q = logits_to_probs(self.head.full_vocab(logits), params)
                token = torch.multinomial(q, 1, generator=gen)
                draft_probs.append(q)
            drafted.append(token)
            if i < steps - 1:  # scratch slots past the committed ones, overwritten by the next extend
                out, hidden = self.head(token, hidden, None, self.valid + i)
                logits = out[0]
        drafts = torch.cat(drafted).tolist()
        return DraftTree.chain([committed[-1], *drafts]), draft_probs

    def propose_tree(self, committed: list[int]) -> DraftTree:
        first, hidden = self._extend(committed)
        states = {"hidden": hidden}

        def expand(
            tokens: torch.Tensor, parent_rows: torch.Tensor, positions: torch.Tensor, start: int, mask: torch.Tensor
        ) -> torch.Tensor:
            parents = states["hidden"][parent_rows.to(self.device)]
            logits, states["hidden"] = self.head(tokens, parents, positions, start, mask)
            return logits

        return grow_tree(committed[-1], first, self.spec, self.valid, self.device, expand, self.hot_cpu)


@dataclass(frozen=True)
class _Window:
    """What a ragged batch's new tokens see (see :func:`ragged_placement`): row ``b``'s tokens sit
    at slots ``starts[b]..``, see every slot below ``prefixes[b]`` and, of the ``W`` slots from
    ``prefixes[b]``, those ``local[b]`` (``[B, T, W]``) allows."""

    prefixes: list[int]
    starts: list[int]
    local: torch.Tensor

    def placement(self, rows: list[int], dtype: torch.dtype, device: torch.device) -> TokensPerRow:
        return ragged_placement(rows, self.prefixes, self.starts, self.local, dtype, device)


#: a drafter's batched forward over the beams of every request:
#: (tokens [B, k], parent_rows [B, k], positions [B, k], window) -> logits [B, k, V]
ExpandRows = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, _Window], torch.Tensor]


def length_groups(lengths: list[int]) -> list[list[int]]:
    """Indices of a ragged batch grouped so that padding to each group's longest costs at most a
    quarter of its tokens (plus 32), in ascending order: one group when the lengths are alike
    (every round after the first), two when a new request's prompt joins short catch-ups."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups: list[list[int]] = []
    current: list[int] = []
    total = 0
    for i in order:
        n = lengths[i]
        if current and n * (len(current) + 1) > 1.25 * (total + n) + 32:
            groups.append(sorted(current))
            current, total = [], 0
        current.append(i)
        total += n
    if current:
        groups.append(sorted(current))
    return groups


def _last_tokens(out: torch.Tensor, lengths: list[int]) -> torch.Tensor:
    """Row ``b``'s entry at its last real token ``lengths[b] - 1`` of a padded ``[B, T, *]`` batch."""
    if all(m == out.shape[1] for m in lengths):  # no padding: a view
        return out[:, -1]
    last = torch.tensor([m - 1 for m in lengths], device=out.device)
    return out[torch.arange(out.shape[0], device=out.device), last]


def _by_groups(
    groups: list[list[int]], b: int, run: Callable[[list[int]], tuple[torch.Tensor, ...]]
) -> tuple[torch.Tensor, ...]:
    """``run(group)``'s per-row outputs of every group, put back in row order ``[B, *]`` (one
    group, the usual round, as it came)."""
    if len(groups) == 1:
        return run(groups[0])
    parts = [run(group) for group in groups]
    order = torch.tensor([i for group in groups for i in group])
    inverse = torch.empty_like(order)
    inverse[order] = torch.arange(b)
    return tuple(torch.cat(outs)[inverse.to(outs[0].device)] for outs in zip(*parts))


def _catch_up_rows(model: CausalLM, rows: list[int], valids: list[int], pending: list[list[int]]) -> torch.Tensor:
    """Feed each row the committed tokens its draft cache lacks (ragged: one forward per group of
    alike lengths, :func:`length_groups`); the logits after each row's last one ``[B, V]``."""
    device = model.device

    def catch_up(group: list[int]) -> tuple[torch.Tensor]:
        g_pending = [pending[i] for i in group]
        g_valids = [valids[i] for i in group]
        t = max(len(p) for p in g_pending)
        tokens = torch.tensor([p + [0] * (t - len(p)) for p in g_pending], dtype=torch.long, device=device)
        positions = torch.tensor(g_valids, device=device).unsqueeze(1) + torch.arange(t, device=device)
        placement = causal_placement([rows[i] for i in group], g_valids, t, model.dtype, device)
        logits = model.run_rows(tokens, positions, placement)[0]
        return (_last_tokens(logits, [len(p) for p in g_pending]),)

    return _by_groups(length_groups([len(p) for p in pending]), len(rows), catch_up)[0]


def _draft_chains(
    seqs: list[Sequence],
    logits: torch.Tensor,
    steps: int,
    step: Callable[[torch.Tensor, int], torch.Tensor],
    hot: torch.Tensor | None = None,
    full_vocab: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> list[Proposal]:
    """``steps`` draft tokens per request, one batched ``step(tokens, i)`` forward per depth:
    greedy requests take the argmax (through ``hot``, a reduced vocabulary's token ids), sampling
    ones draw from their own distribution with their own generator (kept for the verify)."""
    sampled = [i for i, s in enumerate(seqs) if not s.params.greedy]
    probs: dict[int, list[torch.Tensor]] = {i: [] for i in sampled}
    drafted: list[torch.Tensor] = []
    for depth in range(steps):
        tokens = greedy_tokens(logits)
        if hot is not None:
            tokens = hot[tokens]
        for i in sampled:
            row = full_vocab(logits[i]) if full_vocab is not None else logits[i]
            q = logits_to_probs(row, seqs[i].params)
            tokens[i] = torch.multinomial(q, 1, generator=seqs[i].gen)[0]
            probs[i].append(q)
        drafted.append(tokens)
        if depth < steps - 1:
            logits = step(tokens, depth)
    drafts = torch.stack(drafted, dim=1).tolist()
    return [(DraftTree.chain([s.committed[-1], *drafts[i]]), probs.get(i)) for i, s in enumerate(seqs)]


def grow_tree(
    root: int,
    first_logits: torch.Tensor,
    spec: SpecConfig,
    prefix: int,
    device: torch.device,
    expand: Expand,
    token_ids: torch.Tensor | None = None,
) -> DraftTree:
    """One request's EAGLE-2 tree (:func:`grow_trees` with one row): ``expand(tokens,
    parent_rows, positions, start, mask)`` runs the drafter on the beam at scratch slots
    ``start..`` under a ``[k, start + k]`` mask."""
    k = spec.topk

    def one(tokens: torch.Tensor, parent_rows: torch.Tensor, positions: torch.Tensor, window: _Window) -> torch.Tensor:
        start = window.starts[0]
        mask = torch.ones(k, start + k, dtype=torch.bool, device=device)
        mask[:, prefix:] = window.local[0].to(device)
        return expand(tokens[0], parent_rows[0], positions[0], start, mask).unsqueeze(0)

    return grow_trees([root], first_logits.unsqueeze(0), spec, [prefix], device, one, token_ids)[0]


def grow_trees(
    roots: list[int],
    first_logits: torch.Tensor,
    spec: SpecConfig,
    prefixes: list[int],
    device: torch.device,
    expand: ExpandRows,
    token_ids: torch.Tensor | None = None,
) -> list[DraftTree]:
    """SGLang's EAGLE-2 tree for each of ``B`` requests at once: top-``topk`` children per beam
    node with cumulative log-probabilities, the ``topk`` best pool nodes as the next beam, and the
    best ``num_draft_tokens - 1`` nodes kept.

    ``first_logits`` ``[B, V]`` are the drafter's logits for depth 1; row ``b``'s drafter cache
    holds ``prefixes[b]`` committed slots, and its depth-``s`` nodes sit at RoPE position
    ``prefixes[b] - 1 + s``. ``expand(tokens, parent_rows, positions, window)`` runs the drafter
    on every request's beam (``[B, k]``, written to scratch slots ``window.starts[b]..``);
    ``parent_rows`` are each beam node's parent row in the previous expand (all 0 for depth 1),
    for drafters that carry a per-node hidden state. ``token_ids`` maps the drafter's logit rows
    to token ids (an EAGLE3 head's reduced vocabulary; None: the rows are the token ids).
    """
    k = spec.topk
    b = len(roots)
    logp = torch.log_softmax(first_logits, dim=-1)
    top_values, top_indices = (t.cpu() for t in torch.topk(logp, k, dim=-1))
    if token_ids is not None:
        top_indices = token_ids[top_indices]
    # Tree bookkeeping stays on the host; only the beams' tokens go to the device.
    pool_scores = [top_values]
    pool_tokens = [top_indices]
    pool_parents = [torch.full((b, k), -1, dtype=torch.long)]
    beam_pool_idx = torch.arange(k).expand(b, k)
    beam_scores = top_values
    beam_tokens = top_indices
    beam_parent_rows = torch.zeros((b, k), dtype=torch.long)
    # Which earlier scratch slots (from each prefix) each beam node sees: its ancestors'.
    seen = torch.zeros((b, k, 0), dtype=torch.bool)
    own = torch.eye(k, dtype=torch.bool).expand(b, k, k)
    pool_size = k
    for step in range(1, spec.num_steps):
        offset = (step - 1) * k
        local = torch.cat([seen, own], dim=2)  # [B, k, step * k]: ancestors and itself
        window = _Window(list(prefixes), [p + offset for p in prefixes], local)
        positions = (torch.tensor(prefixes, dtype=torch.long) - 1 + step).unsqueeze(1).expand(b, k).to(device)
        logits = expand(beam_tokens.to(device), beam_parent_rows, positions, window)
        child = torch.topk(torch.log_softmax(logits, dim=-1), k, dim=-1)
        scores = (beam_scores.unsqueeze(2) + child.values.cpu()).reshape(b, k * k)
        tokens = child.indices.cpu().reshape(b, k * k)
        if token_ids is not None:
            tokens = token_ids[tokens]
        pool_scores.append(scores)
        pool_tokens.append(tokens)
        pool_parents.append(beam_pool_idx.repeat_interleave(k, dim=1))
        best = torch.topk(scores, k, dim=-1).indices
        beam_pool_idx = pool_size + best
        beam_scores = scores.gather(1, best)
        beam_tokens = tokens.gather(1, best)
        beam_parent_rows = best // k  # row of the beam node (in this expand) each new node descends from
        seen = local.gather(1, beam_parent_rows.unsqueeze(2).expand(b, k, local.shape[2]))
        pool_size += k * k
    all_scores = torch.cat(pool_scores, dim=1)
    all_tokens = torch.cat(pool_tokens, dim=1).tolist()
    all_parents = torch.cat(pool_parents, dim=1).tolist()
    orders = torch.sort(all_scores, dim=1, descending=True, stable=True).indices[:, : spec.num_draft_tokens - 1].tolist()
    trees = []
    for i, root in enumerate(roots):
        tree = DraftTree.root_only(root)
        tree_idx: dict[int, int] = {-1: 0}
        for pidx in sorted(orders[i]):
            tree_idx[pidx] = tree.add_child(tree_idx[all_parents[i][pidx]], all_tokens[i][pidx])
        trees.append(tree)
    return trees


#: prompt tokens one batched prefill forward takes at most (padding included)
PREFILL_BATCH_TOKENS = 4096


def prefill_groups(seqs: list[Sequence]) -> list[list[Sequence]]:
    """New requests grouped for batched prefill: by prompt length, a group closing when padding
    to its longest prompt would cost more than a quarter of its tokens (plus 32) or the group
    would pass :data:`PREFILL_BATCH_TOKENS`."""
    groups: list[list[Sequence]] = []
    current: list[Sequence] = []
    total = 0
    for seq in sorted(seqs, key=lambda s: len(s.prompt)):
        n = len(seq.prompt)
        padded = n * (len(current) + 1)  # sorted: this prompt is the group's longest
        if current and (padded > 1.25 * (total + n) + 32 or padded > PREFILL_BATCH_TOKENS):
            groups.append(current)
            current, total = [], 0
        current.append(seq)
        total += n
    if current:
        groups.append(current)
    return groups


def propose_batch(seqs: list[Sequence]) -> list[Proposal]:
    """Every request's draft: requests whose drafters share a batch key draft together."""
    groups: dict[object, list[int]] = {}
    for i, seq in enumerate(seqs):
        groups.setdefault(seq.drafter.batch_key, []).append(i)
    out: list[Proposal | None] = [None] * len(seqs)
    for members in groups.values():
        group = [seqs[i] for i in members]
        drafters = [s.drafter for s in group]
        for i, proposal in zip(members, type(drafters[0]).propose_many(drafters, group), strict=True):  # type: ignore[attr-defined]
            out[i] = proposal
    return [p for p in out if p is not None]


@dataclass
class Sequence:
    """One request's decoding state: its cache row, committed tokens, sampler and drafter.

    Every piece of per-request state lives here (the models only hold cache rows), so the
    scheduler can interleave many requests' rounds on one :class:`Decoder`.
    """

    prompt: list[int]
    params: SamplingParams
    row: int
    gen: torch.Generator | None
    drafter: Drafter
    committed: list[int] = field(default_factory=list)


class Decoder:
    """Decodes requests round by round on a target (and a drafter): one request at a time
    through :meth:`decode`, or interleaved through :meth:`start`, :meth:`prefill`,
    :meth:`spec_round` and the batched :meth:`plain_step`."""

    def __init__(
        self,
        target: CausalLM,
        spec: SpecConfig,
        draft: CausalLM | EagleHead | None = None,
        seed: int | None = None,
    ) -> None:
        self.target = target
        self._seeds = random.Random(seed)  # seeds requests that bring none (--random-seed)
        self.spec = spec
        self.device = target.device
        self.draft = draft
        self._new_drafter = self._drafter_factory(spec, draft)
        #: the target's forwards return hidden states when the drafters read them (EAGLE)
        self._needs_hidden = self._new_drafter().needs_hidden

    @staticmethod
    def _drafter_factory(spec: SpecConfig, draft: CausalLM | EagleHead | None) -> Callable[[], Drafter]:
        """How each request gets its own drafter: decided once, here, from what drafts."""
        if spec.algorithm == "NGRAM":
            corpus = NgramCorpus(
                max_trie_depth=spec.ngram_max_trie_depth,
                min_bfs_breadth=spec.ngram_min_bfs_breadth,
                max_bfs_breadth=spec.ngram_max_bfs_breadth,
                match_type=spec.ngram_match_type,
                capacity=spec.ngram_capacity,
            )
            return partial(NgramDrafter, corpus, spec)
        if isinstance(draft, EagleHead):
            return partial(EagleDrafter, draft, spec)
        if draft is not None:
            return partial(ModelDrafter, draft, spec)
        return NoDrafter

    @property
    def speculative(self) -> bool:
        return self.spec.algorithm is not None

    def decode(self, prompt: list[int], params: SamplingParams, row: int = 0) -> Iterator[RoundResult]:
        """Yield the tokens of each round; the caller stops iterating when the request is done."""
        seq = self.start(prompt, params, row)
        yield self.prefill(seq)
        while True:
            yield self.spec_round(seq) if self.speculative else self.plain_step([seq])[0]

    def start(self, prompt: list[int], params: SamplingParams, row: int = 0) -> Sequence:
        """A request's state on cache row ``row`` (its own drafter and sampler); nothing runs yet."""
        gen = None
        if not params.greedy:
            gen = torch.Generator(device=self.device)
            gen.manual_seed(params.seed if params.seed is not None else self._seeds.getrandbits(63))
        return Sequence(list(prompt), params, row, gen, self._new_drafter())

    def _bind(self, seq: Sequence) -> None:
        self.target.bind_row(seq.row)
        seq.drafter.bind(seq.row)

    def prefill(self, seq: Sequence) -> RoundResult:
        """The prompt's forward and the first token."""
        self._bind(seq)
        with torch.inference_mode():
            tokens = torch.tensor(seq.prompt, dtype=torch.long, device=self.device)
            logits, hidden = self.target.run(tokens, None, 0, last_only=True, return_hidden=seq.drafter.needs_hidden)
            first = self._pick(logits[0], seq.params, seq.gen)
        seq.committed = [*seq.prompt, first]
        seq.drafter.start(seq.committed, None if hidden is None else RowHidden.of(hidden))
        return RoundResult([first], None, prefill=True)

    def prefill_many(self, seqs: list[Sequence]) -> list[RoundResult]:
        """The prompts' forwards and first tokens of several new requests: prompts of similar
        length share one padded forward (:func:`prefill_groups`), one request runs :meth:`prefill`."""
        results: dict[int, RoundResult] = {}
        for group in prefill_groups(seqs):
            if len(group) == 1:
                results[id(group[0])] = self.prefill(group[0])
                continue
            group = sorted(group, key=lambda s: s.row)
            needs_hidden = any(s.drafter.needs_hidden for s in group)
            lengths = [len(s.prompt) for s in group]
            t = max(lengths)
            with torch.inference_mode():
                tokens = torch.tensor([s.prompt + [0] * (t - len(s.prompt)) for s in group], dtype=torch.long)
                positions = torch.arange(t).expand(len(group), t).to(self.device)
                placement = causal_placement([s.row for s in group], [0] * len(group), t, self.target.dtype, self.device)
                logits, hidden = self.target.run_rows(tokens.to(self.device), positions, placement, needs_hidden)
                last = logits[torch.arange(len(group), device=self.device), torch.tensor(lengths, device=self.device) - 1]
                greedy = greedy_tokens(last).tolist()
                for i, seq in enumerate(group):
                    first = greedy[i] if seq.params.greedy else _sample(logits_to_probs(last[i], seq.params), seq.gen)
                    seq.committed = [*seq.prompt, first]
                    seq.drafter.start(seq.committed, None if hidden is None else RowHidden(hidden, i, lengths[i]))
                    results[id(seq)] = RoundResult([first], None, prefill=True)
        return [results[id(seq)] for seq in seqs]

    def plain_step(self, seqs: list[Sequence]) -> list[RoundResult]:
        """One plain decode step for every sequence (prefilled): one target forward for all of them."""
        given = seqs
        with torch.inference_mode():
            if len(seqs) == 1:  # the one-request path, as decoding has always run
                seq = seqs[0]
                self._bind(seq)
                pos = len(seq.committed) - 1
                logits = self.target.run(torch.tensor([seq.committed[-1]], device=self.device), None, pos)[0]
            else:
                # In row order: a contiguous run of rows is read as a view of the cache, not gathered.
                order = sorted(range(len(seqs)), key=lambda i: seqs[i].row)
                seqs = [seqs[i] for i in order]
                logits = self.target.forward_decode(
                    [s.committed[-1] for s in seqs], [s.row for s in seqs], [len(s.committed) - 1 for s in seqs]
                )
            greedy = greedy_tokens(logits).tolist()
            picked = [
                greedy[i] if s.params.greedy else _sample(logits_to_probs(logits[i], s.params), s.gen)
                for i, s in enumerate(seqs)
            ]
        by_seq = {}
        for seq, token in zip(seqs, picked):
            seq.committed.append(token)
            by_seq[id(seq)] = RoundResult([token], None)
        return [by_seq[id(seq)] for seq in given]

    def spec_round(self, seq: Sequence) -> RoundResult:
        """One speculative round (draft, verify, accept) for one sequence."""
        self._bind(seq)
        with torch.inference_mode():
            new_tokens, accepted = self._spec_round(seq)
        return RoundResult(new_tokens, accepted)

    def spec_step(self, seqs: list[Sequence]) -> list[RoundResult]:
        """One speculative round for every sequence (prefilled) at once: one batched draft
        (:func:`propose_batch`), one target forward verifying every request's tree (padded to
        the largest, each under its own tree mask and positions), then each request's own
        acceptance. One sequence runs :meth:`spec_round`. If the batch fails before any request
        has accepted, every drafter is as it was and the caller may run the requests one by one."""
        if len(seqs) == 1:
            return [self.spec_round(seqs[0])]
        given = seqs
        # In row order: a contiguous run of rows is read as a view of the cache, not gathered.
        seqs = sorted(seqs, key=lambda s: s.row)
        saved = [s.drafter.snapshot() for s in seqs]
        try:
            with torch.inference_mode():
                proposals = propose_batch(seqs)
                trees = [tree for tree, _ in proposals]
                needs_hidden = any(s.drafter.needs_hidden for s in seqs)
                logits, hidden = self._verify_rows(seqs, trees, needs_hidden)
                verdicts = self._judge(seqs, proposals, logits)
        except BaseException:
            for seq, state in zip(seqs, saved):
                seq.drafter.restore(state)
            raise
        by_seq: dict[int, RoundResult] = {}
        with torch.inference_mode():
            for i, (seq, tree, (path, bonus)) in enumerate(zip(seqs, trees, verdicts)):
                root_pos = len(seq.committed) - 1
                if path != list(range(len(path))):
                    self.target.bind_row(seq.row)
                    self.target.move_cache(torch.tensor(path, dtype=torch.long, device=self.device) + root_pos, root_pos)
                new_tokens = [tree.tokens[j] for j in path[1:]] + [bonus]
                before = len(seq.committed)
                seq.committed.extend(new_tokens)
                seq.drafter.accept(seq.committed, before, path, None if hidden is None else RowHidden(hidden, i, len(tree)))
                by_seq[id(seq)] = RoundResult(new_tokens, len(path) - 1)
        return [by_seq[id(seq)] for seq in given]

    def _verify_rows(
        self, seqs: list[Sequence], trees: list[DraftTree], needs_hidden: bool
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The target's forward over every request's tree, padded to the largest: logits
        ``[B, T, V]`` (and the hidden states an EAGLE head reads)."""
        device = self.device
        t = max(len(tree) for tree in trees)
        if self.target.graphs is not None:  # the captured verify shape: num_draft_tokens per request
            t = max(t, self.spec.num_draft_tokens)
        roots = [len(s.committed) - 1 for s in seqs]
        rows = [s.row for s in seqs]
        tokens = torch.tensor([tree.tokens + [tree.tokens[0]] * (t - len(tree)) for tree in trees], dtype=torch.long)
        if all(tree.is_chain() for tree in trees):  # a chain's positions are its slots, its mask causal
            placement = causal_placement(rows, roots, t, self.target.dtype, device)
            positions = placement.slots
        else:
            local = torch.eye(t, dtype=torch.bool).repeat(len(trees), 1, 1)
            depths = torch.zeros((len(trees), t), dtype=torch.long)
            for i, tree in enumerate(trees):
                n = len(tree)
                local[i, :n, :n] = tree.ancestor_mask()
                depths[i, :n] = torch.tensor(tree.depths)
            placement = _Window(roots, roots, local).placement(rows, self.target.dtype, device)
            positions = (torch.tensor(roots).unsqueeze(1) + depths).to(device)
        return self.target.run_rows(tokens.to(device), positions, placement, needs_hidden)

    def _judge(
        self, seqs: list[Sequence], proposals: list[Proposal], logits: torch.Tensor
    ) -> list[tuple[list[int], int]]:
        """Each request's accepted path and bonus token, by its own sampling parameters."""
        best = greedy_tokens(logits).tolist() if any(s.params.greedy for s in seqs) else None
        out = []
        for i, (seq, (tree, draft_probs)) in enumerate(zip(seqs, proposals)):
            if seq.params.greedy:
                assert best is not None
                out.append(self._walk_greedy(tree, best[i]))
            elif draft_probs is not None:
                out.append(self._verify_chain_sampling(tree, logits[i, : len(tree)], draft_probs, seq.params, seq.gen))
            else:
                out.append(self._verify_tree_sampling(tree, logits[i, : len(tree)], seq.params, seq.gen))
        return out

    def _pick(self, logits: torch.Tensor, params: SamplingParams, gen: torch.Generator | None) -> int:
        if params.greedy:
            return int(greedy_tokens(logits))
        return _sample(logits_to_probs(logits, params), gen)

    def _spec_round(self, seq: Sequence) -> tuple[list[int], int]:
        """Draft, verify in one target forward, keep the agreed path's KV; (new tokens, accepted drafts)."""
        committed, params, gen = seq.committed, seq.params, seq.gen
        tree, draft_probs = seq.drafter.propose(committed, params, gen)
        root_pos = len(committed) - 1
        n = len(tree)
        tokens = torch.tensor(tree.tokens, dtype=torch.long, device=self.device)
        positions = mask = None
        if n > 1 and not tree.is_chain():
            positions = torch.tensor(tree.depths, dtype=torch.long, device=self.device) + root_pos
            mask = torch.ones(n, root_pos + n, dtype=torch.bool, device=self.device)
            mask[:, root_pos:] = tree.ancestor_mask(self.device)
        logits, hidden = self.target.run(tokens, positions, root_pos, mask, return_hidden=seq.drafter.needs_hidden)
        if params.greedy:
            path, bonus = self._verify_greedy(tree, logits)
        elif draft_probs is not None:
            path, bonus = self._verify_chain_sampling(tree, logits, draft_probs, params, gen)
        else:
            path, bonus = self._verify_tree_sampling(tree, logits, params, gen)
        if path != list(range(len(path))):
            src = torch.tensor(path, dtype=torch.long, device=self.device) + root_pos
            self.target.move_cache(src, root_pos)
        new_tokens = [tree.tokens[i] for i in path[1:]] + [bonus]
        before = len(committed)
        committed.extend(new_tokens)
        seq.drafter.accept(committed, before, path, None if hidden is None else RowHidden.of(hidden))
        return new_tokens, len(path) - 1

    @classmethod
    def _verify_greedy(cls, tree: DraftTree, logits: torch.Tensor) -> tuple[list[int], int]:
        return cls._walk_greedy(tree, greedy_tokens(logits).tolist())

    @staticmethod
    def _walk_greedy(tree: DraftTree, best: list[int]) -> tuple[list[int], int]:
        """The longest path whose every draft is the target's argmax at its parent, and the bonus."""
        node = 0
        path = [0]
        while True:
            child = tree.children[node].get(best[node])
            if child is None:
                return path, best[node]
            path.append(child)
            node = child

    @staticmethod
    def _verify_chain_sampling(
        tree: DraftTree,
        logits: torch.Tensor,
        draft_probs: list[torch.Tensor],
        params: SamplingParams,
        gen: torch.Generator | None,
    ) -> tuple[list[int], int]:
        target_probs = logits_to_probs(logits, params)
        path = [0]
        for i, q in enumerate(draft_probs):
            token = tree.tokens[i + 1]
            p = target_probs[i]
            if _uniform(gen) * float(q[token]) <= float(p[token]):
                path.append(i + 1)
                continue
            residual = torch.clamp(p - q, min=0.0)
            total = float(residual.sum())
            return path, _sample(residual / total if total > 0 else p, gen)
        return path, _sample(target_probs[len(draft_probs)], gen)

    @staticmethod
    def _verify_tree_sampling(
        tree: DraftTree, logits: torch.Tensor, params: SamplingParams, gen: torch.Generator | None
    ) -> tuple[list[int], int]:
        target_probs = logits_to_probs(logits, params)
        node = 0
        path = [0]
        while True:
            p = target_probs[node].clone()
            accepted = None
            for token, child in tree.children[node].items():
                mass = float(p.sum())
                if mass <= 0:
                    break
                if _uniform(gen) * mass < float(p[token]):
                    accepted = child
                    break
                p[token] = 0.0
            if accepted is None:
                return path, _sample(p / p.sum(), gen)
            path.append(accepted)
            node = accepted
