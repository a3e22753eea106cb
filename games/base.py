"""The game protocol every game in `games/` implements, and its conformance checker.

A game is a small object with pure functions over immutable, hashable states. It knows
nothing of tensors: `tensorcfr.compile` walks it and builds the tensors.

Example:
    >>> from tensorcfr import games
    >>> g = games.make("kuhn")
    >>> s = g.initial_state()
    >>> g.player(s) == games.CHANCE
    True
    >>> [name for name, p in g.chance_outcomes(s)]
    ['J', 'Q', 'K']
"""

from __future__ import annotations

from typing import Hashable, Sequence

from .checks import actions_problem, chance_problem, utility_problem

CHANCE = -1
TERMINAL = -2

State = Hashable


class GameError(ValueError):
    """A game was asked for with a bad name or parameters, or breaks the protocol."""


# a size past every limit: a closed form that would pass it returns it as a lower bound (exact
# False) instead of working out a number of thousands of digits (liars_dice(faces=10**30))
PAST_ANY_LIMIT = 10**300


class Game:
    """Base class of a two-player zero-sum extensive-form game with chance.

    Subclasses implement the methods below; `name` is the spec string that rebuilds the game
    (`games.make(g.name)` gives an equal game). Actions are readable strings; the order of
    `legal_actions` is the order the solver stores them in.
    """

    name: str = "game"
    num_players: int = 2
    zero_sum: bool = True  # False only for the general-sum matrix games of games.matrix

    def initial_state(self) -> State:
        raise NotImplementedError

    def player(self, state: State) -> int:
        """0 or 1 for a decision node, `CHANCE` or `TERMINAL`."""
        raise NotImplementedError

    def chance_outcomes(self, state: State) -> Sequence[tuple[str, float]]:
        """(outcome name, probability) pairs at a chance node; probabilities sum to 1."""
        raise NotImplementedError

    def legal_actions(self, state: State) -> Sequence[str]:
        """Action names at a decision node, identical for all states of one infoset."""
        raise NotImplementedError

    def next_state(self, state: State, action: str) -> State:
        raise NotImplementedError

    def utilities(self, state: State) -> tuple[float, float]:
        """Payoffs (player 0, player 1) at a terminal node."""
        raise NotImplementedError

    def infoset_key(self, state: State) -> str:
        """Information-set key of the player to move: equal keys, indistinguishable states."""
        raise NotImplementedError

    def describe(self, state: State, player: int) -> str:
        """What `player` sees at `state`, for a person playing in a terminal."""
        return self.infoset_key(state)

    def canonical_key(self, key: str) -> str:
        """The infoset key whose strategy the public-tree form keeps for `key`: `key` itself,
        but where the game deals one card of each class of symmetric ones (hold'em's
        `suit_isomorphism`), the key of its twin below the class's dealt card."""
        return key

    def size_hint(self) -> tuple[int, bool] | None:
        """(histories, exact): the number of histories (every node: chance, decision, terminal)
        from a closed form, without building the tree; `exact` False for a lower bound. None
        where the game has no formula (the compiler then counts as it walks)."""
        return None

    # Whether the game is dealt once and then public (docs/concepts.md, the public-tree form), so that its vectorised
    # form names the private-type columns (`VectorGame.public_hands`): read before that form is
    # built, which for a huge game may be costly
    public_form: bool = False

    def public_size_hint(self) -> tuple | None:
        """(public nodes, (T0, T1)) of the public-tree form from a closed form, without building
        it, and optionally the entries of its payoff matrices (T0 T1 unless given: 0 for a
        ranked deal, `VectorGame.ranked_deal`) and, for a card game
        (`VectorGame.card_showdown`), of its showdown factors (T0 + T1 a payoff class); None
        where the game has no formula (small games, or none of that form)."""
        return None

    def cache_token(self) -> object:
        """What, besides the game's code and name, decides its compiled tree (`repr` is hashed
        into the compile cache's key): a game whose payoffs come from outside its code (Dudo's
        continuation values) returns them."""
        return ""

    def openspiel_twin(self) -> str | None:
        """The OpenSpiel game (in OpenSpiel's spec syntax) with this game's tree, deal for deal and
        action for action, so that a policy exports to OpenSpiel (`tensorcfr.io.interop.
        to_openspiel_policy`); None where OpenSpiel has none."""
        return None

    def vectorized(self):
        """The level-by-level form of this game (a `games.vector.VectorGame`), or None if the
        game has none; `tensorcfr.compile` then walks it one node at a time."""
        return None

    def __repr__(self) -> str:
        return f"<game {self.name}>"


def check_game(game: Game, max_nodes: int = 200_000) -> dict:
    """Conformance checker: walk the whole tree and check the protocol's promises.

    Checks that chance probabilities are in [0, 1] and sum to 1, that legal actions are
    non-empty and distinct strings, that utilities are finite and zero-sum (unless the game
    says `zero_sum = False`), that every state
    is hashable and that states sharing an infoset key agree on player and legal actions.
    Returns counts `{"nodes", "terminals", "chance", "decision"}`; raises `GameError` naming
    the first offending history.

    Example:
        >>> from tensorcfr import games
        >>> games.check_game(games.make("kuhn"))["nodes"]
        58
    """
    counts = {"nodes": 0, "terminals": 0, "chance": 0, "decision": 0}
    seen: dict[str, tuple[int, tuple[str, ...], tuple[str, ...]]] = {}
    stack: list[tuple[State, tuple[str, ...]]] = [(game.initial_state(), ())]
    while stack:
        state, history = stack.pop()
        counts["nodes"] += 1
        if counts["nodes"] > max_nodes:
            raise GameError(f"{game.name}: more than {max_nodes} nodes; too large to check")
        hash(state)
        where = f"{game.name}: history {list(history)}"
        p = game.player(state)
        if p == TERMINAL:
            counts["terminals"] += 1
            problem = utility_problem(game.utilities(state), game.zero_sum)
            if problem:
                raise GameError(f"{where}: {problem}")
            continue
        if p == CHANCE:
            counts["chance"] += 1
            outcomes = list(game.chance_outcomes(state))
            names = [a for a, _ in outcomes]
            probs = [pr for _, pr in outcomes]
            if not outcomes or len(set(names)) != len(names):
                raise GameError(f"{where}: chance outcomes {names} are empty or repeat")
            problem = chance_problem(probs)
            if problem:
                raise GameError(f"{where}: {problem}")
            stack.extend((game.next_state(state, a), history + (a,)) for a in names)
            continue
        if p not in (0, 1):
            raise GameError(f"{where}: player {p} is not 0, 1, CHANCE or TERMINAL")
        counts["decision"] += 1
        actions = tuple(game.legal_actions(state))
        problem = actions_problem(actions)
        if problem:
            raise GameError(f"{where}: {problem}")
        key = game.infoset_key(state)
        if key in seen and seen[key][:2] != (p, actions):
            other = seen[key]
            raise GameError(
                f"{game.name}: infoset {key!r} holds history {list(other[2])} "
                f"(player {other[0]}, actions {list(other[1])}) and history {list(history)} "
                f"(player {p}, actions {list(actions)})"
            )
        seen.setdefault(key, (p, actions, history))
        stack.extend((game.next_state(state, a), history + (a,)) for a in actions)
    return counts
