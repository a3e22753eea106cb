"""The betting tree of a poker game as a table of nodes, shared by the card games dealt once
(hold'em subgames, Rhode Island hold'em): each game's own recursion adds the nodes, then the
table serves its vectorised form (mover, legal actions, next node, payoffs) by node index.

Money: a node's `contrib` is what each player has put in beyond `base` (the half pot of a
hold'em spot, the ante of Rhode Island). A fold loses what the folder put in; a showdown wins
what the loser put in; a tie pays 0.

Example:
    >>> t = BettingTable(("fold", "call"))
    >>> root = t.node(0, 0, (0.0, 10.0), 0, "bet 10")
    >>> t.link(root, "fold", t.node(-2, FOLD0, (0.0, 10.0), 0, "bet 10 fold"))
    >>> t.link(root, "call", t.node(-2, SHOWDOWN, (10.0, 10.0), 0, "bet 10 call"))
    >>> t.finish()
    >>> a, b = t.payoff(np.array([1, 2]), base=5.0)
    >>> a.tolist(), b.tolist()  # the fold loses the base; the showdown plays for base + 10
    ([-5.0, 0.0], [0.0, 15.0])
"""

from __future__ import annotations

import numpy as np

from .base import CHANCE, TERMINAL, GameError

FOLD0, FOLD1, SHOWDOWN = 1, 2, 3  # terminal kinds


class BettingTable:
    """Nodes added by `node`, children by `link`; `finish` turns the lists into arrays:
    mover [N] (0, 1, CHANCE or TERMINAL), next [N, A] (the node after each action, -1 illegal;
    a chance node's child in column 0), kind [N] (FOLD0, FOLD1, SHOWDOWN or 0), contrib [N, 2],
    street [N], line [N] (the betting so far, streets split by "/"), legal [N, A] and amount_id
    [N] (terminals of one kind and one amount pay alike for every pair of private types)."""

    def __init__(self, actions, max_nodes: int | None = None, what: str = "the bet abstraction"):
        self.actions = tuple(actions)
        self.index = {a: i for i, a in enumerate(self.actions)}
        self.max_nodes, self.what = max_nodes, what
        self._rows: list[tuple] = []
        self._next: list[list[int]] = []

    def node(self, mover: int, kind: int, contrib, street: int, line) -> int:
        """Add a node; returns its index (children get larger ones)."""
        if self.max_nodes is not None and len(self._rows) >= self.max_nodes:
            raise GameError(f"{self.what} has more than {self.max_nodes:,} betting nodes")
        self._rows.append((mover, kind, tuple(contrib), street, line))
        self._next.append([-1] * len(self.actions))
        return len(self._rows) - 1

    def link(self, u: int, action: str, child: int) -> None:
        self._next[u][self.index[action]] = child

    def finish(self) -> None:
        mover, kind, contrib, street, line = zip(*self._rows)
        self.mover = np.array(mover, dtype=np.int64)
        self.next = np.array(self._next, dtype=np.int64)
        self.kind = np.array(kind, dtype=np.int64)
        self.contrib = np.array(contrib, dtype=np.float64)
        self.street = np.array(street, dtype=np.int64)
        self.line = ["/".join(ln) if isinstance(ln, tuple) else ln for ln in line]
        self.legal = (self.next >= 0) & (self.mover[:, None] >= 0)
        amount = np.where(self.kind == FOLD1, self.contrib[:, 1], self.contrib[:, 0])
        # one id per amount, amounts within 1e-12 of the largest counted as one: the same chips
        # reached by other sums (a pot of 11.4286: 0.5 + 1 pot against 1.5 pots) differ in the
        # last bits, and a batch of spots needs the same classes in every member
        order = np.argsort(amount, kind="stable")
        step = np.diff(amount[order]) > 1e-12 * max(float(np.abs(amount).max(initial=0.0)), 1e-300)
        self.amount_id = np.empty(len(amount), np.int64)
        self.amount_id[order] = np.concatenate([[0], np.cumsum(step)])
        del self._rows, self._next

    def payoff(self, u: np.ndarray, base: float) -> tuple[np.ndarray, np.ndarray]:
        """(a, b) [n] of terminal nodes u: player 0 is paid a + b sign(s0 - s1) (a fold pays a,
        a showdown for b chips pays b); see `VectorGame.card_showdown`."""
        if np.ndim(base):  # (a base a node asked: no table)
            return self._payoff(np.asarray(u), base)
        got = self.__dict__.setdefault("_payoffs", {}).get(float(base))
        if got is None:  # each node's once, then gathered: a river spot's classes ask 1.2 million pairs each
            got = self._payoffs[float(base)] = self._payoff(np.arange(len(self.kind)), base)
        return got[0][u], got[1][u]

    def _payoff(self, u: np.ndarray, base) -> tuple[np.ndarray, np.ndarray]:
        kind, c = self.kind[u], self.contrib[u]
        a = np.where(kind == FOLD0, -(base + c[:, 0]), np.where(kind == FOLD1, base + c[:, 1], 0.0))
        b = np.where(kind == SHOWDOWN, base + c[:, 0], 0.0)
        return a, b

    def utility(self, u: np.ndarray, base: float, s0: np.ndarray, s1: np.ndarray) -> np.ndarray:
        """[n] player 0's payoff at terminal nodes u with strengths s0, s1."""
        a, b = self.payoff(u, base)
        return a + b * np.sign(s0 - s1)

    def payoff_key(self, u: np.ndarray) -> np.ndarray:
        """[n] `VectorGame.payoff_key` of terminal nodes u: the kind and the amount."""
        return self.kind[u] * (len(self.mover) + 1) + self.amount_id[u]

    def payoff_classes(self, left: int, kept: dict | None = None) -> int:
        """Payoff classes of the public tree (the compile's `payoff_classes`, counted without
        it): per run of betting between two card nodes, its terminals' distinct payoff keys,
        once per sequence of public cards dealt before it, `left - street` cards at a card node
        of `street` (`kept[street]` where a player acts after the card: the cards a public tree
        dealing one card of each class keeps, on average). Nodes are numbered parents first (`node`).

        Example:
            >>> t = BettingTable(("check", "deal"))
            >>> root = t.node(0, 0, (0.0, 0.0), 0, "")
            >>> card = t.node(-1, 0, (0.0, 0.0), 0, "check")  # CHANCE: one of `left` cards
            >>> t.link(root, "check", card)
            >>> t.link(card, "deal", t.node(-2, SHOWDOWN, (0.0, 0.0), 1, "check/"))
            >>> t.finish()
            >>> t.payoff_classes(left=46)
            46
        """
        seg = np.zeros(len(self.mover), np.int64)  # the run of betting (its first node) of each node
        times = {0: 1}  # public card sequences before each run
        for u in range(len(self.mover)):  # compile time: the betting nodes, parents first
            for v in self.next[u][self.next[u] >= 0].tolist():
                if self.mover[u] == CHANCE:
                    acts = kept and self.mover[v] in (0, 1) and int(self.street[u]) in kept
                    cards = kept[int(self.street[u])] if acts else left - int(self.street[u])
                    seg[v], times[v] = v, times[int(seg[u])] * cards
                else:
                    seg[v] = seg[u]
        term = np.flatnonzero(self.mover == TERMINAL)
        runs = np.unique(np.stack([seg[term], self.payoff_key(term)], 1), axis=0)[:, 0]
        return round(sum(times[int(r)] for r in runs))
