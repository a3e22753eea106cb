"""Rhode Island hold'em (games/rhode_island.py): hand ranks against PokerKit on every three-card
hand, sizes against a walk and against the counts uoftcprg/noregret publishes for the royal
variant, the recursive CFR on a small deck, the public form (one-card types, board cards dealt
by public chance) against the generic one, and bad parameters named."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tensorcfr
from tensorcfr import games
from tensorcfr.games.cards import card_names
from tensorcfr.games.rhode_island import hand_values

SMALL = "rhode_island(raises=1, ranks='QKA', suits='sh')"
ONE_SUIT = "rhode_island(raises=1, ranks='TJQKA', suits='s')"  # every hand a flush, straights among them
FOUR_RANKS = "rhode_island(ranks='JQKA', suits='sh')"


def test_hand_ranks_equal_pokerkit_on_every_three_card_hand():
    """PokerKit's RhodeIslandHoldemHand orders the 22,100 hands of three cards in 741 classes;
    ours must give every hand the same place (straights above flushes, A-2-3 the lowest)."""
    pokerkit = pytest.importorskip("pokerkit")
    combos = np.array(list(itertools.combinations(range(52), 3)))
    ours = hand_values(combos[:, 0], combos[:, 1], combos[:, 2])
    theirs = np.array([pokerkit.RhodeIslandHoldemHand("".join(card_names(c))).entry.index for c in combos])
    _, a = np.unique(ours, return_inverse=True)
    _, b = np.unique(theirs, return_inverse=True)
    assert a.max() == 740 and np.array_equal(a, b)


def test_payoffs_of_a_few_hands():
    g = games.make("rhode_island(royal=True)")

    def play(*moves):
        s = g.initial_state()
        for m in moves:
            s = g.next_state(s, m)
        return g.utilities(s)
    # ante 5, a bet of 10 in the first round, 20 after: the folder loses what it put in
    assert play("As", "Kh", "bet", "fold") == (5.0, -5.0)
    assert play("As", "Kh", "check", "bet", "raise", "fold") == (15.0, -15.0)
    # Th Jh Qh is a straight flush; Ks Ah Qh a flush: 5 + 10 + 20 + 20 each in the pot
    assert play("Th", "Ks", "bet", "call", "Jh", "bet", "call", "Qh", "bet", "call") == (55.0, -55.0)
    assert play("Ts", "Tc", "check", "check", "Jh", "check", "check", "Qh", "check", "check") == (0.0, 0.0)
    assert g.legal_actions(g.next_state(g.next_state(g.initial_state(), "As"), "Kh")) == ("check", "bet")


def test_royal_sizes_equal_noregret_counts():
    """uoftcprg/noregret (data/counts/royal-rhode-island-holdem.json) counts 120,665,581 nodes,
    2,702,720 decision points and 6,756,800 actions of both players; its nodes leave out the 20
    chance nodes that deal the second private card, which ours count."""
    g = games.make("rhode_island(royal=True)")
    assert g.size_hint() == (120_665_601, True)
    s = tensorcfr.compile(g, form="public").sizes()
    assert s["histories"] == 120_665_601
    assert sum(s["infosets"]) == 2_702_720 and sum(s["sequences"]) == 6_756_800
    assert s["public_nodes"] == g.public_size_hint()[0] and s["types"] == [20, 20]
    # the memory estimate's payoff classes (`BettingTable.payoff_classes`), without the walk
    _, _, dense, factors = g.public_size_hint()
    assert (dense, factors) == (s["payoff_classes"] * 400, s["payoff_classes"] * 40) == (187_046 * 400, 187_046 * 40)


@pytest.mark.parametrize("spec", [SMALL, ONE_SUIT, FOUR_RANKS])
def test_walks_and_hints_agree(spec):
    g = games.make(spec)
    generic, public = (tensorcfr.compile(spec, form=f).sizes() for f in ("generic", "public"))
    for k in ("histories", "terminals", "chance_nodes", "decision_nodes", "infosets", "sequences"):
        assert generic[k] == public[k], k
    assert generic["histories"] == g.size_hint()[0]
    if spec != FOUR_RANKS:  # the per-node walk of games/checks.py stops at 200,000 nodes
        assert games.check_game(g)["nodes"] == generic["histories"]
    hint = g.public_size_hint()
    assert public["public_nodes"] == hint[0] and hint[3] == public["payoff_classes"] * sum(public["types"])


def test_small_deck_matches_the_recursive_cfr():
    from test_solvers_vs_oracle import check_against_oracle

    # a pair on this deck often ties every action: regrets 0 exactly, +-1e-17 after rounding; the
    # tolerance (the same in the oracle) reads both as 0
    check_against_oracle(ONE_SUIT, {"plus": True, "regret_tolerance": 1e-12}, 6, "cpu")


@pytest.mark.parametrize("pairs", [0, 1 << 30], ids=["prefix sums", "dense kernels"])
def test_the_public_form_keeps_no_matrix_per_terminal(pairs, monkeypatch):
    """One-card types: the showdown by the card kernel, the board by public chance paths."""
    import tensorcfr.operators.cards as cards_module
    from test_holdem import assert_card_values_equal_dense

    monkeypatch.setattr(cards_module, "DENSE_KERNEL_PAIRS", pairs)
    cg = tensorcfr.compile(FOUR_RANKS, form="public")
    assert cg.showdown is not None and cg.showdown.cards.shape[1] == 1
    assert_card_values_equal_dense(cg)


@pytest.mark.parametrize("spec,message", [
    ("rhode_island(raises=-1)", "raises (bets and raises a round) must be a whole number from 0 to 20"),
    ("rhode_island(raises=1000)", "from 0 to 20, got 1000"),
    ("rhode_island(ante=0)", "ante must be a finite number > 0"),
    ("rhode_island(big_bet=1e999)", "big_bet must be a finite number > 0"),
    ("rhode_island(ranks='AX')", "ranks 'AX' must be some of 23456789TJQKA"),
    ("rhode_island(ranks='AAK')", "ranks 'AAK' must be some of 23456789TJQKA, each once"),
    ("rhode_island(ranks='A', suits='s')", "a deck of 1 cards"),
    ("rhode_island(royal=True, ranks='AKQ')", "royal=True or ranks, not both"),
    ("rhode_island(royal=1)", "royal must be True or False"),
    ("rhode_island(small_bet=1e308, big_bet=1e308)", "not finite"),
])
def test_bad_parameters_are_named(spec, message):
    with pytest.raises(games.GameError, match=message.replace("(", r"\(").replace(")", r"\)")):
        games.make(spec)
