"""Cards, two-card hands and hand ranges of hold'em, and hand strength from `phevaluator`.

A card is an int 0..51, `rank * 4 + suit` with ranks `23456789TJQKA` and suits `cdhs` (the
encoding of phevaluator, the evaluator used for showdowns). A hand is an int 0..1325 indexing
the pairs of distinct cards in `HANDS`, named higher card first ("AsKd").

A range is a weight per hand, written the way poker tools write it: items separated by commas,
each with an optional `:weight` (default 1):

- `AA`, `AKs`, `AKo`, `AK` (suited and offsuit), `AsKd` (one combination);
- `TT+` (TT up to AA), `A2s+` (A2s up to AKs: the second rank rises below the first);
- `KK-TT`, `A5o-A2o` (both ends included, the first rank fixed for non-pairs).

A hand named twice keeps its last weight. An empty text, "all" or "random" is every hand
with weight 1.

Example:
    >>> w = parse_range("AA,AKs:0.5")
    >>> int((w == 1).sum()), int((w == 0.5).sum())
    (6, 4)
    >>> card_names(parse_cards("Ks7d2c"))
    ['Ks', '7d', '2c']
"""

from __future__ import annotations

import functools
import math
import re

import numpy as np

from .base import GameError

RANKS = "23456789TJQKA"
SUITS = "cdhs"
NUM_CARDS = 52
# [1326, 2]: every pair of distinct cards (lower card first); a hand's index is its row
HANDS = np.array([(a, b) for b in range(NUM_CARDS) for a in range(b)], dtype=np.int64)
NUM_HANDS = len(HANDS)


def card_name(card: int) -> str:
    """`"As"` for 51.

    Example:
        >>> card_name(51), card_name(0)
        ('As', '2c')
    """
    return RANKS[card // 4] + SUITS[card % 4]


def card_names(cards) -> list[str]:
    """The names of several cards."""
    return [card_name(int(c)) for c in cards]


def deck_of(ranks: str, suits: str, what: str) -> np.ndarray:
    """[52] bool: the cards of `ranks` in `suits` (a small deck for tests); a letter that is no
    rank or suit, or one given twice, is an error naming `what`.

    Example:
        >>> int(deck_of("AK", "sh", "spot").sum())
        4
    """
    for name, v, allowed in (("ranks", ranks, RANKS), ("suits", suits, SUITS)):
        if not isinstance(v, str) or not v or any(x not in allowed for x in v) or len(set(v)) != len(v):
            raise GameError(f"{what}: {name} {v!r} must be some of {allowed}, each once")
    deck = np.zeros(NUM_CARDS, bool)
    deck[[RANKS.index(r) * 4 + SUITS.index(s) for r in ranks for s in suits]] = True
    return deck


def hand_name(hand: int) -> str:
    """The hand's two cards, higher first: `"AsKd"`.

    Example:
        >>> hand_name(hand_index(parse_cards("KdAs")))
        'AsKd'
    """
    lo, hi = HANDS[hand]
    return card_name(int(hi)) + card_name(int(lo))


@functools.lru_cache(maxsize=1)
def hand_names() -> tuple[str, ...]:
    """`hand_name` of every hand [1326], for naming many infosets at once.

    Example:
        >>> hand_names()[hand_index(parse_cards("KdAs"))]
        'AsKd'
    """
    return tuple(hand_name(h) for h in range(NUM_HANDS))


def hand_index(cards) -> int:
    """The hand of two distinct cards (either order)."""
    a, b = sorted(int(c) for c in cards)
    return b * (b - 1) // 2 + a


def traded_cards(a: int, b: int) -> np.ndarray:
    """[52] int64: each card with suits `a` and `b` (0..3, `SUITS`) traded.

    Example:
        >>> card_name(int(traded_cards(0, 3)[parse_cards("Ac")[0]]))
        'As'
    """
    cards = np.arange(NUM_CARDS)
    suit = cards % 4
    return np.where(suit == a, cards - a + b, np.where(suit == b, cards - b + a, cards))


@functools.lru_cache(maxsize=None)
def suit_swap(a: int, b: int) -> np.ndarray:
    """[1326] int64: each hand with suits `a` and `b` (0..3, `SUITS`) traded, the permutation of
    hands a transposition of two suits makes (its own inverse). Read-only.

    Example:
        >>> h = hand_index(parse_cards("AcKd"))
        >>> hand_name(int(suit_swap(0, 3)[h]))  # clubs and spades traded
        'AsKd'
    """
    lo, hi = np.sort(traded_cards(a, b)[HANDS], axis=1).T
    out = hi * (hi - 1) // 2 + lo
    out.setflags(write=False)
    return out


def parse_cards(text: str, what: str = "board") -> tuple[int, ...]:
    """Cards written back to back (`"Ks7d2c"`; spaces and commas allowed between them), each a
    rank of `23456789TJQKA` and a suit of `cdhs`; none twice.

    Example:
        >>> parse_cards("As Kd")
        (51, 45)
    """
    if not isinstance(text, str):
        raise GameError(f"{what}: cards are a text such as 'Ks7d2c', got {text!r}")
    s = re.sub(r"[\s,]", "", text)
    if len(s) % 2:
        raise GameError(f"{what} {text!r}: cards are two characters each (rank and suit), got {len(s)} characters")
    cards = []
    for i in range(0, len(s), 2):
        r, u = s[i], s[i + 1]
        rank = RANKS.find(r.upper())
        if rank < 0:
            raise GameError(f"{what} {text!r}: unknown rank {r!r} in {s[i:i + 2]!r} (ranks are {RANKS})")
        if u not in SUITS:
            raise GameError(f"{what} {text!r}: unknown suit {u!r} in {s[i:i + 2]!r} (suits are {SUITS})")
        card = rank * 4 + SUITS.index(u)
        if card in cards:
            raise GameError(f"{what} {text!r}: card {card_name(card)} appears twice")
        cards.append(card)
    return tuple(cards)


def _rank(ch: str, item: str, what: str) -> int:
    r = RANKS.find(ch)
    if r < 0:
        raise GameError(f"{what}: unknown rank {ch!r} in {item!r} (ranks are {RANKS})")
    return r


# cached (169 rank pairs x 3 kinds), as `_item_hands` is: a batch reads hundreds of ranges of
# 169 weighted classes each, 1.28 ms a range uncached, 0.40 ms with this cache and 0.18 ms with
# both (2026-11-27)
@functools.lru_cache(maxsize=None)
def _class_hands(r1: int, r2: int, kind: str) -> tuple[int, ...]:
    """The hands of rank pair (r1, r2) (r1 >= r2): pairs (6), suited (4), offsuit (12) or both."""
    out = []
    for s1 in range(4):
        for s2 in range(4):
            a, b = r1 * 4 + s1, r2 * 4 + s2
            if a == b or (r1 == r2 and s1 >= s2):
                continue
            if (kind == "s" and s1 != s2) or (kind == "o" and s1 == s2):
                continue
            out.append(hand_index((a, b)))
    return tuple(out)


_CLASS = re.compile(r"^([2-9TJQKA])([2-9TJQKA])([so]?)$")
_COMBO = re.compile(r"^([2-9TJQKA][cdhs])([2-9TJQKA][cdhs])$")


@functools.lru_cache(maxsize=4096)  # (a batch's ranges name the same few hundred items again and again)
def _item_hands(item: str, what: str) -> tuple[int, ...]:
    """The hands one range item names (without its weight)."""
    combo = _COMBO.match(item)
    if combo:
        return (hand_index(parse_cards(item, what)),)
    plus = item.endswith("+")
    body = item[:-1] if plus else item
    lo_hi = body.split("-")
    if len(lo_hi) > 2:
        raise GameError(f"{what}: cannot read range item {item!r}")
    if len(lo_hi) == 2 and plus:
        raise GameError(f"{what}: range item {item!r} has both '-' and '+'")
    classes = []
    for part in lo_hi:
        m = _CLASS.match(part)
        if not m:
            bad = next((c for c in part[:2] if c not in RANKS), None)
            if bad is not None and len(part) >= 2 and part[0].isalnum():
                raise GameError(f"{what}: unknown rank {bad!r} in {item!r} (ranks are {RANKS})")
            raise GameError(f"{what}: cannot read range item {item!r} (expected e.g. AA, AKs, AKo, AK, AsKd, TT+, "
                            f"A2s+, KK-TT, A5o-A2o)")
        r1, r2 = _rank(m.group(1), item, what), _rank(m.group(2), item, what)
        kind = m.group(3)
        if r1 == r2 and kind:
            raise GameError(f"{what}: {item!r}: a pair is neither suited nor offsuit")
        if r1 < r2:
            r1, r2 = r2, r1
        classes.append((r1, r2, kind))
    if len(classes) == 2:
        (a1, a2, k1), (b1, b2, k2) = classes
        if k1 != k2 or (a1 == a2) != (b1 == b2) or (a1 != a2 and a1 != b1):
            raise GameError(f"{what}: range item {item!r}: both ends must be pairs, or share the first rank and "
                            "the suitedness")
        if a1 == a2:
            span = [(r, r) for r in range(min(a1, b1), max(a1, b1) + 1)]
        else:
            span = [(a1, r) for r in range(min(a2, b2), max(a2, b2) + 1)]
        kind = k1
    else:
        (r1, r2, kind), = classes
        if not plus:
            span = [(r1, r2)]
        elif r1 == r2:
            span = [(r, r) for r in range(r1, len(RANKS))]
        else:
            span = [(r1, r) for r in range(r2, r1)]
    return tuple(h for a, b in span for h in _class_hands(a, b, kind))


def parse_range(text: str | None, what: str = "range") -> np.ndarray:
    """[1326] float64 weights of a range text (see the module docstring).

    Example:
        >>> w = parse_range("TT+,A5o-A2o:0.25")
        >>> int((w == 1).sum()), int((w == 0.25).sum())
        (30, 48)
    """
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise GameError(f"{what}: a range is a text such as 'AA,AKs,T9s+:0.5', got {text!r}")
    s = text.strip()
    if s.lower() in ("", "all", "random"):
        return np.ones(NUM_HANDS)
    weights = np.zeros(NUM_HANDS)
    for raw in s.split(","):
        item = raw.strip()
        if not item:
            raise GameError(f"{what} {text!r}: an empty item (two commas in a row?)")
        body, _, w = item.partition(":")
        weight = 1.0
        if _:
            try:
                weight = float(w)
            except ValueError:
                raise GameError(f"{what}: weight {w!r} of {item!r} is not a number") from None
            if not (math.isfinite(weight) and weight >= 0):
                raise GameError(f"{what}: weight {w!r} of {item!r} must be a finite number >= 0")
        weights[list(_item_hands(body.strip(), what))] = weight
    return weights


def strengths(board, evaluate=None) -> np.ndarray:
    """[1326] int64: each hand's strength with `board` (5 cards; higher wins, equal ties), -1
    for hands that share a card with the board, from phevaluator's 7-card evaluator (rank 1 is
    a royal flush, 7462 the worst high card: strength = 7463 - rank).

    Example:
        >>> s = strengths(parse_cards("AsKsQsJs2d"))
        >>> int(s[hand_index(parse_cards("Ts3c"))])  # a royal flush
        7462
    """
    if evaluate is None:
        try:
            from phevaluator import evaluate_cards as evaluate
        except ImportError:  # pragma: no cover - a dependency; said plainly where it is missing
            raise GameError("hold'em showdowns need phevaluator: pip install phevaluator") from None
        try:  # its native 7-card function: our card numbers are its ids, and its public wrapper
            # converting each card took 3.1 of a flop spot's 3.3 s for 1,176 boards (0.2 s native)
            from phevaluator._pheval import evaluate_7cards as evaluate
        except ImportError:  # pragma: no cover - another layout of the package: the public function
            pass
    board = [int(c) for c in board]
    out = np.full(NUM_HANDS, -1, dtype=np.int64)
    on_board = np.zeros(NUM_CARDS, bool)
    on_board[board] = True
    keep = np.flatnonzero(~on_board[HANDS].any(axis=1))
    # game construction, not a solver's iteration; Python ints, not numpy's: 0.35 ms a board,
    # against 1.3 ms reading and converting numpy's entries (a flop spot's 1,176 boards: 1.5 s)
    out[keep] = [7463 - evaluate(*board, a, b) for a, b in HANDS[keep].tolist()]
    return out
