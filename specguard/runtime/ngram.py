"""An n-gram trie over prompts and outputs, drafting trees the way SGLang's NGRAM worker does.

SGLang (0.5.23, ``kernels/jit/csrc/ngram_corpus/trie.cpp``) keeps a trie of token n-grams up
to ``max_trie_depth``, fed with every request's prompt and output. To draft, it finds the trie
node for every suffix of the context ("anchors"), then expands children breadth-first:
``BFS`` takes the most recently used children, with a breadth that starts at
``min_bfs_breadth`` for the longest match and widens towards ``max_bfs_breadth`` for short
matches; ``PROB`` takes children by frequency times path probability. The result is a tree
of at most ``num_draft_tokens - 1`` nodes under the last token.

Here the trie is plain Python; when it holds more than ``capacity`` nodes it is cleared
(SGLang evicts least-recently-used nodes instead).
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field

from specguard.runtime.tree import DraftTree


@dataclass
class _Node:
    children: dict[int, _Node] = field(default_factory=dict)
    count: int = 0
    stamp: int = 0


class NgramCorpus:
    def __init__(
        self,
        max_trie_depth: int = 18,
        min_bfs_breadth: int = 1,
        max_bfs_breadth: int = 10,
        match_type: str = "BFS",
        capacity: int = 10_000_000,
    ) -> None:
        self.max_trie_depth = max_trie_depth
        self.min_bfs_breadth = min_bfs_breadth
        self.max_bfs_breadth = max_bfs_breadth
        self.match_type = match_type.upper()
        self.capacity = capacity
        self._root = _Node()
        self._nodes = 0
        self._clock = itertools.count(1)

    def insert(self, tokens: list[int], already_inserted: int = 0) -> None:
        """Add the n-grams of ``tokens`` that end at or after index ``already_inserted``."""
        depth = self.max_trie_depth
        stamp = next(self._clock)
        first_start = max(0, already_inserted - depth + 1)
        for begin in range(first_start, len(tokens)):
            node = self._root
            for j in range(begin, min(begin + depth, len(tokens))):
                tok = tokens[j]
                child = node.children.get(tok)
                if child is None:
                    child = _Node()
                    node.children[tok] = child
                    self._nodes += 1
                if j >= already_inserted:
                    child.count += 1
                child.stamp = stamp
                node = child
        if self._nodes > self.capacity:
            self._root = _Node()
            self._nodes = 0

    def _anchors(self, context: list[int]) -> list[tuple[int, _Node]]:
        """(match depth, node) for each suffix of ``context`` present in the trie, longest first."""
        anchors = []
        for n in range(1, min(len(context), self.max_trie_depth - 1) + 1):
            node = self._root
            for tok in context[len(context) - n :]:
                node = node.children.get(tok)  # type: ignore[assignment]
                if node is None:
                    break
            if node is None or not node.children:
                continue
            anchors.append((n, node))
        anchors.reverse()
        return anchors

    def draft(self, context: list[int], num_draft_tokens: int) -> DraftTree:
        tree = DraftTree.root_only(context[-1])
        budget = num_draft_tokens - 1
        if budget <= 0:
            return tree
        anchors = self._anchors(context)
        if self.match_type == "PROB":
            self._build_frequency(tree, anchors, budget)
        else:
            self._build_recency(tree, anchors, budget)
        return tree

    def _build_recency(self, tree: DraftTree, anchors: list[tuple[int, _Node]], budget: int) -> None:
        scale = (self.max_bfs_breadth - self.min_bfs_breadth) / max(1, self.max_trie_depth - 1)
        longest = anchors[0][0] if anchors else 0
        for depth, anchor in anchors:
            breadth = (longest - depth) * scale + self.min_bfs_breadth
            frontier = [(anchor, 0)]
            while frontier and len(tree) - 1 < budget:
                take = max(1, round(breadth))
                next_frontier = []
                for node, tree_idx in frontier:
                    children = sorted(node.children.items(), key=lambda kv: -kv[1].stamp)[:take]
                    for tok, child in children:
                        if len(tree) - 1 >= budget:
                            break
                        next_frontier.append((child, tree.add_child(tree_idx, tok)))
                frontier = next_frontier
                breadth = max(1.0, breadth - scale)
            if len(tree) - 1 >= budget:
                return

    def _build_frequency(self, tree: DraftTree, anchors: list[tuple[int, _Node]], budget: int) -> None:
        tie = itertools.count()
        heap: list[tuple[float, int, _Node, int, int]] = []

        def push_children(node: _Node, tree_idx: int, path_prob: float) -> None:
            total = sum(c.count for c in node.children.values()) or 1
            best = sorted(node.children.items(), key=lambda kv: -kv[1].count)[: self.max_bfs_breadth]
            for tok, child in best:
                prob = path_prob * child.count / total
                heapq.heappush(heap, (-prob, next(tie), child, tree_idx, tok))

        for _, anchor in anchors[:1]:
            push_children(anchor, 0, 1.0)
        while heap and len(tree) - 1 < budget:
            neg_prob, _, node, parent_idx, tok = heapq.heappop(heap)
            idx = tree.add_child(parent_idx, tok)
            push_children(node, idx, -neg_prob)
