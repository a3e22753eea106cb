"""The level-by-level form of a game: pure functions over batches of integer-encoded states.

A game that can describe itself this way returns a `VectorGame` from `Game.vectorized()`;
`tensorcfr.compile` then expands one whole level of the tree per call instead of one node
per call, which is what games of 10^8 histories need. Arrays are numpy arrays: games still
know nothing of tensors.

The vectorised form must describe exactly the tree of the per-node protocol (`games.base`):
the same players, legal actions in the same order, chance outcomes in the same order and
with the same probabilities, the same utilities and the same infoset key strings. A test
compiles every registered game both ways and asserts every tensor equal.

Conventions:
- A batch of states is an int64 array [n, width]; a game chooses its encoding.
- Decision actions are indices into `actions` (the game's action alphabet). The legal actions
  of a state are those its `legal` row marks, listed in alphabet order, which must be the order
  of `Game.legal_actions`.
- Chance outcomes are indices 0..num_outcomes-1; `chance` gives each one's probability, and
  outcomes of probability 0 are not part of the tree. Their order must be the order of
  `Game.chance_outcomes`.
- `infoset` returns one int64 key per decision state, equal exactly when the per-node keys are
  equal (distinct across players); `infoset_names` turns keys back into the per-node strings.

Example:
    >>> from tensorcfr import games
    >>> vg = games.make("ocp(3)").vectorized()
    >>> root = vg.initial()
    >>> int(vg.player(root)[0]) == games.CHANCE, vg.chance(root).shape
    (True, (1, 9))
"""

from __future__ import annotations

import numpy as np


class VectorGame:
    """Base class of the vectorised form of a game (see the module docstring).

    Every method takes a batch `s` [n, width] int64 of states of one kind (the compiler calls
    `legal`/`infoset` on decision states only, `chance` on chance states only, `utility` on
    terminal states only) and returns one row per state.
    """

    name: str = "game"
    width: int = 1  # columns of a state row
    actions: tuple[str, ...] = ()  # decision-action alphabet [A]
    num_outcomes: int = 0  # chance-outcome alphabet size [C]
    # Games dealt once (docs/concepts.md, the public-tree form): the columns of a state row that hold player 0's and
    # player 1's private type once the deal is over, everything else being public. None: the
    # game has no public-tree form (Domino's private draws, random games).
    public_hands: tuple[int, int] | None = None

    def initial(self) -> np.ndarray:
        """[1, width] int64: the root."""
        raise NotImplementedError

    def player(self, s: np.ndarray) -> np.ndarray:
        """[n] int64: 0, 1, `CHANCE` or `TERMINAL`."""
        raise NotImplementedError

    def legal(self, s: np.ndarray) -> np.ndarray:
        """[n, A] bool: the legal decision actions."""
        raise NotImplementedError

    def chance(self, s: np.ndarray) -> np.ndarray:
        """[n, C] float64: the probability of each outcome (0: not an outcome here)."""
        raise NotImplementedError

    def next(self, s: np.ndarray, a: np.ndarray) -> np.ndarray:
        """[n, width]: the states after action or outcome `a` [n] int64 (legal ones only)."""
        raise NotImplementedError

    def utility(self, s: np.ndarray) -> np.ndarray:
        """[n] float64: player 0's payoff (player 1 receives its negation)."""
        raise NotImplementedError

    def infoset(self, s: np.ndarray) -> np.ndarray:
        """[n] int64: the key of the mover's infoset."""
        raise NotImplementedError

    def infoset_names(self, keys: np.ndarray) -> list[str]:
        """The per-node protocol's key string of each int64 key in `keys` [m]."""
        raise NotImplementedError

    def payoff_key(self, s: np.ndarray) -> np.ndarray | None:
        """[n] int64 for terminal states of a game with `public_hands`: equal keys promise equal
        utilities for every pair of types (the public-tree form then shares one payoff matrix
        among them). None: the whole public state is the key (fine for games with few
        terminal public states, such as Leduc)."""
        return None

    # Games dealt once whose deal is an ordered pair of distinct ranks 0..n-1, uniformly, and
    # whose every terminal pays player 0, for ranks r0 != r1, a + b sign(r0 - r1) (a fold pays a,
    # a showdown for b chips pays b): OCP and Kuhn. The public-tree form then never builds an
    # n x n table (deal, payoff matrix): a terminal's values are O(n) prefix sums over the
    # ranks, so OCP(10^6) compiles and solves in seconds.
    def ranked_deal(self) -> tuple[int, np.ndarray, int, int] | None:
        """(n ranks, the public state after the deal [1, width] (its private-type columns
        ignored), the deal's chance nodes, its levels), or None: the deal is walked outcome by
        outcome."""
        return None

    def ranked_payoff(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(a [n], b [n]) float64 of terminal public states `s` (see `ranked_deal`)."""
        raise NotImplementedError

    # Games whose private types are sets of cards (hold'em's two-card hands) and whose every
    # terminal pays player 0, for types that share no card, a + b sign(strength(t0) - strength(t1))
    # (a fold pays a, a showdown for b chips pays b). The public-tree form then computes a
    # terminal's values with per-card prefix sums over the hands sorted by strength instead of a
    # dense T0 x T1 product; the compiler checks the claim against the dense matrices.
    # The per-node protocol of a game whose state tuple is its vectorised row (hold'em spots,
    # Rhode Island hold'em), read through the vectorised functions.
    def state_utilities(self, state) -> tuple[float, float]:
        """`Game.utilities` of one terminal state (zero-sum)."""
        u = float(self.utility(np.array([state], dtype=np.int64))[0])
        return (u, -u)

    def state_infoset_key(self, state) -> str:
        """`Game.infoset_key` of one decision state."""
        return self.infoset_names(self.infoset(np.array([state], dtype=np.int64)))[0]

    def card_showdown(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(cards [H, k] int64: the cards 0..51 of each type value, k = 1 or 2, w0 [H], w1 [H]: each
        player's weight of each type value, to which the deal is proportional over the pairs
        sharing no card), or None."""
        return None

    def dealt_by_type(self) -> bool:
        """Whether the deal is two chance levels, player 0's type and then player 1's, each
        outcome the value of the type it deals, after which every deal leaves one public
        state (hold'em spots): the public-tree form then reads the deal's [T0, T1] table off
        the two levels' probabilities without making the state after every deal (a million a
        hold'em spot: 70 ms of the deal's walk, most of a batch of boards' compile). The
        compiler checks the claim below sampled types of player 0."""
        return False

    def card_payoff(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(a [n], b [n] float64, strength [n, H] int64) of terminal public states `s` (see
        `card_showdown`; the strength of a type value that cannot reach `s` is ignored). The
        compiler reads it through `card_boards`: a game implements one of the two (hold'em
        spots, whose terminals far outnumber their boards, `card_boards` alone)."""
        raise NotImplementedError

    def card_boards(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`card_payoff` with the strengths as rows of one table: (a [n], b [n], board [n] int64,
        strength [G, H] int64), state i's strengths being row board[i], the rows distinct. A game
        whose boards are few and its terminals many (a flop spot: 1,176 boards, 300,000 classes
        whose rows would take 3 GB) overrides it; by default the distinct rows of `card_payoff`'s."""
        a, b, strength = (np.asarray(v) for v in self.card_payoff(s))
        table, board = np.unique(strength, axis=0, return_inverse=True)
        return a, b, board.reshape(-1).astype(np.int64), table

    # A card game whose public chance deals cards (hold'em's turn deals the river) with a
    # probability that depends on the private types only through whether they hold the card:
    # the chance path's probability then factors into a number times a mask per player, so the
    # public-tree form never holds a T0 x T1 matrix per chance outcome (the compiler checks the
    # claim against `chance` on sampled pairs of types).
    def card_chance(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """(card [n, C'] int64, q [n, C'] float64) of public chance states `s`, C' <= num_outcomes:
        outcome o deals card[:, o] (0..51, -1 for none) with probability q[:, o] to every pair of
        types that holds neither it, 0 to the others; outcomes past C' have probability 0. None:
        not so (the compiler then keeps a [T0, T1] matrix per chance path)."""
        return None

    def card_symmetries(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Symmetries of the cards `card_chance` deals at public chance states `s` [n, width],
        for the public-tree form to deal one card of each class (hold'em's suit isomorphism):
        (canon [n, C'] int64, swap [n, C'] int64, perms [K, V] int64), C' as `card_chance`'s.
        Outcome o's subtree is the subtree of outcome canon[:, o] (o itself where canonical)
        with every private value v (a hand) read as perms[swap[:, o], v]: its values are those
        of the canonical subtree, permuted. Each perm must be its own inverse, map the types of
        each player onto themselves with the same deal probabilities, and hold wherever both
        players still act below the card (the compiler refuses a terminal reached before them).
        None: no symmetries (every card its own subtree)."""
        return None


PROTOCOL = ("initial_state", "player", "chance_outcomes", "legal_actions", "next_state", "utilities", "infoset_key")


def vector_form(g) -> "VectorGame | None":
    """`g.vectorized()`, or None where a subclass overrides a per-node method below the class
    that defines `vectorized` (its vectorised form would describe the parent's tree). Both of
    tensorcfr's level-by-level walks (the generic and the public-tree one) take a game's
    vectorised form from here, so they agree on which games have one.

    Example:
        >>> from tensorcfr import games
        >>> vector_form(games.make("ocp(5)")).name
        'ocp(5)'
    """
    mro = type(g).__mro__
    owner = lambda name: next(c for c in mro if name in c.__dict__)  # noqa: E731
    vec = owner("vectorized")
    if any(issubclass(owner(m), vec) and owner(m) is not vec for m in PROTOCOL):
        return None
    return g.vectorized()


class KeyTable:
    """Ids for int64 keys, given in the order keys are first added, kept as a sorted copy of
    the keys for lookups (sorted insertion: O(table) per call, not a re-sort). Used by the
    level walk to number infosets and by games that number histories while they are walked.

    Example:
        >>> t = KeyTable()
        >>> t.number(np.array([5, 9]))[0].tolist(), t.number(np.array([3, 9]))[0].tolist()
        ([0, 1], [2, 1])
    """

    def __init__(self, first_id: int = 0):
        self.keys, self.ids = np.zeros(0, np.int64), np.zeros(0, np.int64)  # [n] sorted, and their ids
        self.next_id = first_id

    def number(self, uniq: np.ndarray, rank: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Ids [u] of the sorted distinct keys `uniq` [u]; keys new to the table get the next ids,
        in the order of `rank` [u] (default: key order). Also returns the positions in `uniq`
        of the new keys, in id order."""
        pos = np.searchsorted(self.keys, uniq)  # [u] where each key is, or would be inserted
        found = np.zeros(len(uniq), bool)
        if len(self.keys):
            found = self.keys[np.minimum(pos, len(self.keys) - 1)] == uniq
        ids = np.empty(len(uniq), np.int64)
        ids[found] = self.ids[pos[found]]
        new = np.flatnonzero(~found)  # in key order
        made = new if rank is None else new[np.argsort(rank[new], kind="stable")]
        ids[made] = self.next_id + np.arange(len(made))
        self.next_id += len(made)
        if len(new):
            self.keys = np.insert(self.keys, pos[new], uniq[new])
            self.ids = np.insert(self.ids, pos[new], ids[new])
        return ids, made


def popcount(x: np.ndarray) -> np.ndarray:
    """Number of set bits of each element of an int64 array (bit sets of bids, for example)."""
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        return np.bitwise_count(x.astype(np.uint64)).astype(np.int64)
    x = x.astype(np.uint64)
    count = np.zeros(x.shape, dtype=np.int64)
    while x.any():
        count += (x & np.uint64(1)).astype(np.int64)
        x = x >> np.uint64(1)
    return count
