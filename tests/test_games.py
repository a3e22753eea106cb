"""Every registered game passes the public conformance checker; specs parse or fail clearly."""

import pytest

from tensorcfr import games
from tensorcfr.games.kuhn import Kuhn

SMALL_SPECS = ["kuhn", "kuhn(ante=2)", "leduc", "random(seed=0)", "random(seed=1,max_depth=6)", "rps",
               "matching_pennies", "biased_rps", "ficha_domino", "blotto(3,2)", "battle_of_sexes", "prisoners_dilemma",
               "ocp(4)", "dudo(3,1,1)", "domino(2,2)",
               "liars_dice(faces=3)", "liars_dice(numdice=2,faces=2)", "random_dealt(seed=0)",
               "random_dealt(seed=5,types=4,depth=5,max_actions=2)",
               "holdem_river(board=AsKhQsJh9s, pot=4, stack=8, ranks=AKQJ9, suits=sh)",
               "holdem_turn(board=AsKhQsJh, pot=4, stack=6, bets=(1,allin), cap=1, ranks=AKQJ9, suits=sh)",
               "holdem_flop(board=AsKhQs, pot=4, stack=6, bets=(1,), cap=0, ranks=AKQJT, suits=sh)",
               "goofspiel(num_cards=3)", "goofspiel(num_cards=4,points_order=ascending,returns_type=point_difference)",
               "battleship(board_width=2,board_height=2,ship_sizes=(1,),ship_values=(1.0,),num_shots=2)",
               "battleship(board_width=3,board_height=1,ship_sizes=(2,),ship_values=(1.5,),num_shots=2,"
               "allow_repeated_shots=True)", "rhode_island(raises=1, ranks='QKA', suits='sh')"]


def test_every_registered_game_is_covered():
    assert {games.parse_spec(s)[0] for s in SMALL_SPECS} == set(games.available())


@pytest.mark.parametrize("spec", SMALL_SPECS)
def test_conformance(spec):
    g = games.make(spec)
    counts = games.check_game(g)
    assert counts["nodes"] == counts["terminals"] + counts["chance"] + counts["decision"]
    assert games.make(g.name).name == g.name  # the name is a spec that rebuilds the game


def test_known_sizes():
    assert games.check_game(games.make("kuhn")) == {"nodes": 58, "terminals": 30, "chance": 4, "decision": 24}
    assert games.check_game(games.make("leduc"))["nodes"] == 9457


def test_kuhn_payoffs():
    g = Kuhn(ante=2)
    def play(*moves):
        s = g.initial_state()
        for m in moves:
            s = g.next_state(s, m)
        return g.utilities(s)
    assert play("K", "J", "pass", "pass") == (2.0, -2.0)
    assert play("J", "K", "bet", "bet") == (-3.0, 3.0)
    assert play("J", "K", "pass", "bet", "pass") == (-2.0, 2.0)


def test_leduc_rules():
    g = games.make("leduc")
    s = g.initial_state()
    for a in ["Js", "Qs"]:
        s = g.next_state(s, a)
    assert g.legal_actions(s) == ("call", "raise")  # no fold without a bet to face
    s = g.next_state(s, "raise")
    assert g.legal_actions(s) == ("fold", "call", "raise")
    s = g.next_state(s, "raise")
    assert g.legal_actions(s) == ("fold", "call")  # two raises per round at most
    s = g.next_state(s, "call")
    assert g.player(s) == games.CHANCE
    s = g.next_state(s, "Jh")  # public J: player 0 pairs
    for a in ["raise", "call"]:
        s = g.next_state(s, a)
    assert g.utilities(s) == (9.0, -9.0)  # 1 ante + 2 + 2 in round 1, + 4 in round 2


@pytest.mark.parametrize("spec, message", [
    ("poker", "unknown game 'poker'; available: kuhn, leduc"),
    ("kuhn(ante=0)", "ante must be positive"),
    ("kuhn(bet=2)", "bad parameters for kuhn"),
    ("kuhn(", "cannot parse game spec"),
    ("kuhn(ante=x)", "bad parameters for kuhn"),  # a bare word is a string, which no ante is
    ("kuhn(ante=(1,)", "cannot parse game spec"),
    # a range's commas unquoted read as more arguments: the message says which value to quote
    ("holdem_flop(board=Ks7d2c,range0=AA,range1=KK,QQ,AKs)", "needs quotes: range1='KK,QQ,AKs'"),
    ("holdem_river(board=Ks7d2c9h4s, range0=AA, KK, bets=(1,))", "needs quotes: range0='AA, KK'"),
])
def test_bad_specs(spec, message):
    with pytest.raises(games.GameError, match=message.replace("(", r"\(").replace(")", r"\)")):
        games.make(spec)


def test_checker_catches_a_broken_game():
    class NotZeroSum(Kuhn):
        def utilities(self, state):
            return (1.0, 1.0)

    with pytest.raises(games.GameError, match="not zero-sum"):
        games.check_game(NotZeroSum())


def test_liars_dice_with_two_dice_each():
    """OpenSpiel's rules: player 0's dice fall first, each player sees its dice sorted, the
    highest face counts for every face, and the bidder loses a bid that does not stand."""
    g = games.make("liars_dice(numdice=2,faces=3)")

    def after(*moves):
        s = g.initial_state()
        for m in moves:
            s = g.next_state(s, m)
        return s
    s = after("3", "1", "2", "3")  # player 0: 3 1, player 1: 2 3
    assert g.player(s) == 0 and g.infoset_key(s) == "13" and g.legal_actions(s)[-1] == "4-3"
    assert g.infoset_key(after("3", "1", "2", "3", "2-1")) == "23 2-1"
    # 2s: player 1's 2, and the two 3s (wild): 3 dice count
    assert g.utilities(after("3", "1", "2", "3", "3-2", "Liar")) == (1.0, -1.0)  # the bid stands: the caller loses
    assert g.utilities(after("3", "1", "2", "3", "4-2", "Liar")) == (-1.0, 1.0)  # it does not: the bidder loses
    # on the wild face itself a 3 counts once
    assert g.utilities(after("3", "1", "2", "3", "3-3", "Liar")) == (-1.0, 1.0)
    with pytest.raises(games.GameError, match="numdice"):
        games.make("liars_dice(numdice=0)")
