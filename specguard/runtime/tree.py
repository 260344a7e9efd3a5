"""A draft tree: node 0 is the last committed token (the root); every other node is a draft."""

from __future__ import annotations

import torch


class DraftTree:
    __slots__ = ("children", "depths", "parents", "tokens")

    def __init__(self) -> None:
        self.tokens: list[int] = []
        self.parents: list[int] = []
        self.depths: list[int] = []
        self.children: list[dict[int, int]] = []

    @classmethod
    def root_only(cls, token: int) -> DraftTree:
        tree = cls()
        tree.tokens.append(token)
        tree.parents.append(-1)
        tree.depths.append(0)
        tree.children.append({})
        return tree

    @classmethod
    def chain(cls, tokens: list[int]) -> DraftTree:
        """Each token the only child of the one before (built directly: a batched round makes one per request)."""
        tree = cls()
        n = len(tokens)
        tree.tokens = list(tokens)
        tree.parents = list(range(-1, n - 1))
        tree.depths = list(range(n))
        tree.children = [{tok: i + 1} for i, tok in enumerate(tokens[1:])] + [{}]
        return tree

    def __len__(self) -> int:
        return len(self.tokens)

    def add_child(self, parent: int, token: int) -> int:
        """Index of ``parent``'s child holding ``token``, created if absent."""
        existing = self.children[parent].get(token)
        if existing is not None:
            return existing
        idx = len(self.tokens)
        self.tokens.append(token)
        self.parents.append(parent)
        self.depths.append(self.depths[parent] + 1)
        self.children.append({})
        self.children[parent][token] = idx
        return idx

    def is_chain(self) -> bool:
        # A node's parent comes before it, so depth i <= i, with equality all the way down only
        # when every node hangs under the one before: the last node's depth tells.
        return self.depths[-1] == len(self.depths) - 1

    def ancestor_mask(self, device: torch.device | str = "cpu") -> torch.Tensor:
        """``[n, n]`` boolean: row i is True at i and at each of its ancestors."""
        n = len(self.tokens)
        rows = [[False] * n for _ in range(n)]
        for i in range(n):
            j = i
            while j >= 0:
                rows[i][j] = True
                j = self.parents[j]
        return torch.tensor(rows, dtype=torch.bool, device=device)
