"""Plain and speculative decoding, per request (:class:`Sequence`) on its own cache row.

Speculative rounds run one request at a time; plain decode steps of several requests run as
one batched target forward (:meth:`Decoder.plain_step`).

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
from specguard.runtime.model import CausalLM
from specguard.runtime.ngram import NgramCorpus
from specguard.runtime.tree import DraftTree

GREEDY_EPS = 1e-6


@dataclass(frozen=True)
class SamplingParams:
    max_new_tokens: int = 128
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    min_p: float = 0.0
    seed: int | None = None

    @property
    def greedy(self) -> bool:
        return self.temperature < GREEDY_EPS or self.top_k == 1


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


def _sample(probs: torch.Tensor, gen: torch.Generator | None) -> int:
    return int(torch.multinomial(probs, 1, generator=gen).item())


def _uniform(gen: torch.Generator | None) -> float:
    device = gen.device if gen is not None else None
    return float(torch.rand((), generator=gen, device=device).item())


#: drafted tokens, and the drafter's distributions over them when it sampled a chain (the
#: chain-sampling verification needs them; None: greedy drafts or a deterministic tree)
Proposal = tuple[DraftTree, list[torch.Tensor] | None]
#: a drafter's forward over a beam: (tokens, parent_rows, positions, start, mask) -> logits
Expand = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, int, torch.Tensor], torch.Tensor]


class Drafter(Protocol):
    """What a speculative round asks of a request's drafter, whatever it drafts with.

    One per request (:class:`Sequence`); the round calls :meth:`propose` then :meth:`accept`
    and never asks which kind it holds.
    """

    #: the drafter reads the target's hidden states (EAGLE heads): the target's forwards return them
    needs_hidden: bool

    def bind(self, row: int) -> None:
        """Point the drafter's cache (if it has one) at the request's row."""

    def start(self, committed: list[int], hidden: torch.Tensor | None) -> None:
        """After the prefill: the prompt and first token, and the target's hidden states of the prompt."""

    def propose(self, committed: list[int], params: SamplingParams, gen: torch.Generator | None) -> Proposal:
        """Draft a tree under ``committed[-1]`` (the root)."""

    def accept(self, committed: list[int], before: int, path: list[int], hidden: torch.Tensor | None) -> None:
        """After the verify: ``committed`` grew from ``before`` tokens by the tree nodes on ``path``
        (root first) and the bonus; ``hidden`` holds the target's hidden state at every tree node."""


class NoDrafter:
    """Plain decoding: the round drafts nothing, so the target's verify forward is a decode step."""

    needs_hidden = False

    def bind(self, row: int) -> None:
        pass

    def start(self, committed: list[int], hidden: torch.Tensor | None) -> None:
        pass

    def propose(self, committed: list[int], params: SamplingParams, gen: torch.Generator | None) -> Proposal:
        return DraftTree.root_only(committed[-1]), None

    def accept(self, committed: list[int], before: int, path: list[int], hidden: torch.Tensor | None) -> None:
        pass


class NgramDrafter:
    """NGRAM: drafts a tree from the n-grams of every request's tokens (a corpus all requests share)."""

    needs_hidden = False

    def __init__(self, corpus: NgramCorpus, spec: SpecConfig) -> None:
        self.corpus = corpus
        self.spec = spec

    def bind(self, row: int) -> None:
        pass

    def start(self, committed: list[int], hidden: torch.Tensor | None) -> None:
        self.corpus.insert(committed)

    def propose(self, committed: list[int], params: SamplingParams, gen: torch.Generator | None) -> Proposal:
        return self.corpus.draft(committed, self.spec.num_draft_tokens), None

    def accept(self, committed: list[int], before: int, path: list[int], hidden: torch.Tensor | None) -> None:
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

    def start(self, committed: list[int], hidden: torch.Tensor | None) -> None:
        self.valid = 0

    def propose(self, committed: list[int], params: SamplingParams, gen: torch.Generator | None) -> Proposal:
        if self.spec.topk == 1:
            return self.propose_chain(committed, params, gen)
        return self.propose_tree(committed), None

    def accept(self, committed: list[int], before: int, path: list[int], hidden: torch.Tensor | None) -> None:
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
        self.pending: torch.Tensor | None = None
        # Greedy drafting picks in the draft vocabulary and maps the winners (no full-vocabulary scatter).
        self.hot = head.hot_token_ids
        self.hot_cpu = None if head.hot_token_ids is None else head.hot_token_ids.cpu()

    def bind(self, row: int) -> None:
        self.head.bind_row(row)

    def start(self, committed: list[int], hidden: torch.Tensor | None) -> None:
        assert hidden is not None, "needs_hidden: the target returns its hidden states"
        self.valid = 0
        self.pending = hidden

    def propose(self, committed: list[int], params: SamplingParams, gen: torch.Generator | None) -> Proposal:
        if self.spec.topk == 1:
            return self.propose_chain(committed, params, gen)
        return self.propose_tree(committed), None

    def accept(self, committed: list[int], before: int, path: list[int], hidden: torch.Tensor | None) -> None:
        """Keep the target's hidden states at the root and the accepted drafts for the next extend."""
        assert hidden is not None, "needs_hidden: the target returns its hidden states"
        on_prefix = path[-1] == len(path) - 1  # the accepted nodes are the tree's first ones: a view
        self.pending = hidden[: len(path)] if on_prefix else hidden[torch.tensor(path, device=hidden.device)]

    def _extend(self, committed: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        """Feed the pending (hidden, next token) pairs; logits and hidden after the last one."""
        pending = self.pending
        assert pending is not None
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


def grow_tree(
    root: int,
    first_logits: torch.Tensor,
    spec: SpecConfig,
    prefix: int,
    device: torch.device,
    expand: Expand,
    token_ids: torch.Tensor | None = None,
) -> DraftTree:
    """SGLang's EAGLE-2 tree: top-``topk`` children per beam node with cumulative log-probabilities,
    the ``topk`` best pool nodes as the next beam, and the best ``num_draft_tokens - 1`` nodes kept.

    ``first_logits`` are the drafter's logits for depth 1; the drafter's cache holds ``prefix``
    committed slots, and depth-``s`` nodes sit at RoPE position ``prefix - 1 + s``.
    ``expand(tokens, parent_rows, positions, start, mask)`` runs the drafter on the beam (written
    to scratch slots ``start..``); ``parent_rows`` are each beam node's parent row in the previous
    expand (all 0 for depth 1), for drafters that carry a per-node hidden state. ``token_ids``
    maps the drafter's logit rows to token ids (an EAGLE3 head's reduced vocabulary; None: the
    rows are the token ids).
    """
    k = spec.topk
    logp = torch.log_softmax(first_logits, dim=-1)
    top_values, top_indices = (t.cpu() for t in torch.topk(logp, k))
    if token_ids is not None:
        top_indices = token_ids[top_indices]
    # Tree bookkeeping stays on the host; only the beam's tokens go to the device.
    pool_scores = [top_values]
    pool_tokens = [top_indices]
    beam_pool_idx = torch.arange(k)
    beam_scores = top_values
    beam_tokens = top_indices
    beam_parent_rows = torch.zeros(k, dtype=torch.long)
    ancestors_of_pool: dict[int, list[int]] = {}
    pool_size = k
    parents_all: list[int] = [-1] * k
    for step in range(1, spec.num_steps):
        start = prefix + (step - 1) * k
        # Each beam node sees the committed prefix, its ancestors' scratch slots and itself.
        scratch = [[False] * (step * k) for _ in range(k)]
        for j, pidx in enumerate(beam_pool_idx.tolist()):
            chain = [start - prefix + j, *ancestors_of_pool.get(parents_all[pidx], [])]
            ancestors_of_pool[pidx] = chain
            for slot in chain:
                scratch[j][slot] = True
        mask = torch.ones(k, start + k, dtype=torch.bool, device=device)
        mask[:, prefix:] = torch.tensor(scratch, dtype=torch.bool, device=device)
        positions = torch.full((k,), prefix - 1 + step, dtype=torch.long, device=device)
        logits = expand(beam_tokens.to(device), beam_parent_rows, positions, start, mask)
        child = torch.topk(torch.log_softmax(logits, dim=-1), k, dim=-1)
        scores = (beam_scores.unsqueeze(1) + child.values.cpu()).reshape(-1)
        tokens = child.indices.cpu().reshape(-1)
        if token_ids is not None:
            tokens = token_ids[tokens]
        parents = beam_pool_idx.repeat_interleave(k)
        pool_scores.append(scores)
        pool_tokens.append(tokens)
        parents_all += parents.tolist()
        best = torch.topk(scores, k).indices
        beam_pool_idx = pool_size + best
        beam_scores = scores[best]
        beam_tokens = tokens[best]
        beam_parent_rows = best // k  # row of the beam node (in this expand) each new node descends from
        pool_size += k * k
    scores = torch.cat(pool_scores)
    order = torch.sort(scores, descending=True, stable=True).indices[: spec.num_draft_tokens - 1]
    chosen = sorted(order.tolist())
    tokens_all = torch.cat(pool_tokens).tolist()
    tree = DraftTree.root_only(root)
    tree_idx: dict[int, int] = {-1: 0}
    for pidx in chosen:
        tree_idx[pidx] = tree.add_child(tree_idx[parents_all[pidx]], tokens_all[pidx])
    return tree


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
            logits, hidden = self.target.run(tokens, None, 0, last_only=True, return_hidden=self._needs_hidden)
            first = self._pick(logits[0], seq.params, seq.gen)
        seq.committed = [*seq.prompt, first]
        seq.drafter.start(seq.committed, hidden)
        return RoundResult([first], None, prefill=True)

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
            greedy = logits.argmax(dim=-1).tolist()
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

    def _pick(self, logits: torch.Tensor, params: SamplingParams, gen: torch.Generator | None) -> int:
        if params.greedy:
            return int(logits.argmax().item())
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
        logits, hidden = self.target.run(tokens, positions, root_pos, mask, return_hidden=self._needs_hidden)
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
        seq.drafter.accept(committed, before, path, hidden)
        return new_tokens, len(path) - 1

    @staticmethod
    def _verify_greedy(tree: DraftTree, logits: torch.Tensor) -> tuple[list[int], int]:
        best = logits.argmax(dim=-1).tolist()
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
