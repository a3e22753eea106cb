"""A bad game is refused in every compiled form, with a message naming what is wrong.

The games here are Kuhn poker with a fault in its vectorised form, so both level-by-level
walks (the generic one and the public-tree one) read the same faulty game; the per-node
faults of tests/test_compiler.py are refused in every form too.
"""

import numpy as np
import pytest

import tensorcfr
from tensorcfr.games.kuhn import Kuhn
from tensorcfr.games.ocp import CardPokerVector
from tensorcfr.compiler.public import compile_public

FORMS = ["generic", "public"]


def vkuhn(vector_cls, name="kuhn"):
    """Kuhn whose vectorised form is `vector_cls` (a CardPokerVector with a fault)."""

    class VKuhn(Kuhn):
        def vectorized(self):
            return vector_cls(self.name, 3, "sequential", ante=self.ante, card_names=("J", "Q", "K"))

    g = VKuhn()
    g.name = name
    return g


class BadChance(CardPokerVector):
    def chance(self, s):
        return super().chance(s) * 0.9


class InfiniteUtility(CardPokerVector):
    def utility(self, s):
        u = super().utility(s)
        return np.where((s[:, 0] == 2) & (s[:, 2] == 6), np.inf, u)  # K against anything, bet-bet


class BadPlayer(CardPokerVector):
    def player(self, s):
        p = super().player(s)
        return np.where((s[:, 1] >= 0) & (s[:, 2] == 1), 5, p)  # after a pass


class UnevenActions(CardPokerVector):
    """Player 0 holding K may bet at the start only when player 1 holds J: the legal actions
    depend on a card player 0 does not see."""

    def legal(self, s):
        legal = super().legal(s)
        legal[(s[:, 0] == 2) & (s[:, 1] == 1) & (s[:, 2] == 0), 1] = False
        return legal


class MixedPlayers(CardPokerVector):
    def infoset(self, s):
        keys = super().infoset(s)
        return np.where(s[:, 2] == 1, keys - 1, keys)  # player 1 after a pass: player 0's key at the start


class Forgetful(CardPokerVector):
    def infoset(self, s):
        keys = super().infoset(s)
        return np.where(s[:, 2] == 4, 4, keys)  # player 0 after pass-bet forgets its card: key "J:pb"


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("fault, message", [
    (BadChance, r"kuhn: (state|history) \[.*\]: chance probabilities \[.*\] do not sum to 1"),
    (InfiniteUtility, r"kuhn: (state|history) \[.*\]: utility inf is not finite"),
    (BadPlayer, r"kuhn: (state|history) \[.*\]: player 5 is not 0, 1, chance or terminal"),
    (UnevenActions, r"kuhn: (state|history) \[.*\]: .*legal actions "
                    r"(\['pass'\].*\['pass', 'bet'\]|\['pass', 'bet'\].*\['pass'\])"),
    (MixedPlayers, r"kuhn: (.*: )?infoset '[JQK]:' holds histories of both players"),
    (Forgetful, r"kuhn: (.*: )?perfect recall fails at infoset 'J:pb'"),
])
def test_a_faulty_vectorised_game_is_refused_in_every_form(fault, message, form):
    g = vkuhn(fault)
    assert tensorcfr.compiler.vector_form(g) is not None  # both walks read the faulty form
    with pytest.raises(tensorcfr.TensorCFRError, match=message):
        tensorcfr.compile(g, form=form)


@pytest.mark.parametrize("form", FORMS + ["auto"])
def test_a_general_sum_game_is_refused_in_every_form(form):
    g = Kuhn()
    g.zero_sum = False
    with pytest.raises(tensorcfr.TensorCFRError, match="kuhn is general-sum"):
        tensorcfr.compile(g, form=form)
    with pytest.raises(tensorcfr.TensorCFRError, match="kuhn is general-sum"):
        compile_public(g)  # the public walk called directly holds it too


def test_a_key_that_sees_the_other_players_card_has_no_public_form():
    """A valid game (the generic form solves it) that wrongly claims to be dealt once."""

    class Peeking(CardPokerVector):
        def infoset(self, s):
            return super().infoset(s) * 3 + np.where(super().player(s) == 0, s[:, 1], s[:, 0])

        def infoset_names(self, keys):
            return [f"{n}/{k % 3}" for n, k in zip(super().infoset_names(keys // 3), keys.tolist())]

    g = vkuhn(Peeking)
    assert tensorcfr.compile(g, form="generic").sizes()["infosets"] == [12, 12]
    with pytest.raises(tensorcfr.TensorCFRError, match="player 0's infoset key here depends on the other player's "
                                                       "private type"):
        tensorcfr.compile(g, form="public")


def test_a_batch_member_that_sees_the_other_players_card_is_refused():
    """The checks run on every member of a batch, not the first alone (the members after it on
    fewer sampled types, `MEMBER_CHECKED_TYPES`: Kuhn's three are all checked)."""

    class Peeking(CardPokerVector):
        def infoset(self, s):
            return super().infoset(s) * 3 + np.where(super().player(s) == 0, s[:, 1], s[:, 0])

        def infoset_names(self, keys):
            return [f"{n}/{k % 3}" for n, k in zip(super().infoset_names(keys // 3), keys.tolist())]

    with pytest.raises(tensorcfr.TensorCFRError, match="infoset key here depends on the other player's private type"):
        compile_public([vkuhn(CardPokerVector), vkuhn(Peeking)], ranked=False)


def test_a_ranked_deal_is_held_to_the_deal_it_claims():
    """`ranked_deal` promises every ordered pair of distinct cards equally likely; a deal that
    is valid but not uniform is solved by the generic form and refused by the ranked one."""

    class Skewed(CardPokerVector):
        def chance(self, s):
            p = super().chance(s)
            first = s[:, 0] < 0
            p[first] = [0.5, 0.25, 0.25]
            return p

    g = vkuhn(Skewed)
    tensorcfr.compile(g, form="generic")
    compile_public(g, ranked=False)  # the dense form reads the deal as it is
    with pytest.raises(tensorcfr.TensorCFRError, match=r"ranked_deal\(\) does not describe its deal"):
        compile_public(g, ranked=True)


def test_a_subclass_overriding_a_per_node_method_has_no_public_form():
    """Its vectorised form is its parent's, which describes another game: the public walk,
    like the generic one, does not use it."""

    class Louder(Kuhn):
        def utilities(self, state):
            return tuple(2 * u for u in super().utilities(state))

    with pytest.raises(tensorcfr.TensorCFRError, match="has no public-tree form"):
        tensorcfr.compile(Louder(), form="public")
    auto = tensorcfr.compile(Louder(), form="auto")
    assert auto.form == "generic"
    assert tensorcfr.evaluate(auto, tensorcfr.Policy.uniform(auto)).game_value.item() == pytest.approx(
        2 * tensorcfr.evaluate(tensorcfr.compile("kuhn"), tensorcfr.Policy.uniform(tensorcfr.compile("kuhn")))
        .game_value.item(), abs=1e-12)


def test_a_deal_that_leaves_more_than_the_types_has_no_public_form():
    """The public-tree form needs every deal to leave one public state: a Kuhn whose deal
    starts player 0's king with a check already made is refused, naming why, while the generic
    form takes it (a game, just not one of that shape)."""

    class CheckedKing(CardPokerVector):
        def next(self, s, a):
            out = super().next(s, a)
            dealt = (s[:, 1] < 0) & (s[:, 0] >= 0) & (out[:, 0] == 2)  # the second card, player 0 holds the king
            out[dealt, 2] = _after_check()
            return out

    g = vkuhn(CheckedKing)
    tensorcfr.compile(g, form="generic")
    with pytest.raises(tensorcfr.TensorCFRError, match="the state after the deal depends on more than the dealt types"):
        compile_public(g, ranked=False)


def _after_check() -> int:
    """The history index after player 0 checks (games/ocp.py's tables)."""
    from tensorcfr.games.ocp import _NEXT
    return int(_NEXT[0, 0])
