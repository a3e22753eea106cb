"""`tensorcfr plot-strategy GAME POLICY`: a saved strategy as a picture (matplotlib, the `plot`
extra). The picture suits the game:

- Liar's Dice and Dudo: the probability of calling the last bid, per own roll (rows) and bid
  (columns), one panel a player; a cell averages the infosets that end in that bid, each
  weighted by the probability that play reaches it (the roll's, the player's own earlier bids,
  and the opponent's bids over the opponent's rolls);
- hold'em spots: the 13 x 13 grid of hand classes (pairs on the diagonal, suited above it,
  offsuit below) at one betting line (`--at`, default the first decision), each cell split into
  the actions' frequencies, combos weighted by the probability that play reaches them (the
  deal, with card removal, and both players' moves on the line);
- any other game: one bar an infoset, split into its actions (the first `max_infosets`, or those
  whose key matches `--match`).

The numbers behind the pictures are plain functions (`dice_calls`, `hand_grid`), so a script can
use them without drawing.

Example:
    >>> import tensorcfr
    >>> from tensorcfr import games
    >>> g = games.make("liars_dice(faces=3)")
    >>> table = tensorcfr.Policy.uniform(tensorcfr.compile(g)).to_dict()
    >>> rolls, bids, calls = dice_calls(g, table)
    >>> rolls[1], bids, round(float(calls[1][0, 0]), 4)  # player 1, roll "1", after the bid 1-1: 1 of 6 actions
    (['1', '2', '3'], ['1-1', '1-2', '1-3', '2-1', '2-2', '2-3'], 0.1667)
"""

from __future__ import annotations

import math
import re
import textwrap
from collections import Counter

import numpy as np

from tensorcfr.cli.plot import pyplot, save
from tensorcfr.errors import TensorCFRError
from tensorcfr.games.cards import HANDS, RANKS, hand_name, parse_cards
from tensorcfr.games.dudo import Dudo
from tensorcfr.games.holdem import HoldemSpot
from tensorcfr.games.liars_dice import LIAR, LiarsDice

Table = dict  # {infoset key: {action: probability}}


# -- dice games --------------------------------------------------------------------------------------

def _dice_key(game, key: str) -> tuple[str, tuple[str, ...]]:
    """(own roll, bids so far) of a Liar's Dice key "33 1-2 2-3" or a Dudo key "33|1x2,2x3"."""
    if isinstance(game, Dudo):
        roll, _, bids = key.partition("|")
        return roll, tuple(bids.split(",")) if bids else ()
    roll, *bids = key.split(" ")
    return roll, tuple(bids)


def _roll_probability(roll: str, faces: int) -> float:
    """The probability of a sorted roll of len(roll) fair dice: n! / prod(c!) / faces^n."""
    n = len(roll)
    return math.factorial(n) / math.prod(math.factorial(c) for c in Counter(roll).values()) / faces ** n


def dice_calls(game, table: Table) -> tuple[list[list[str]], list[str], list[np.ndarray]]:
    """(rolls of each player, bid names, [P(call) per roll x bid] of each player) of a Liar's
    Dice or Dudo strategy; a cell no play reaches is NaN. The infosets that end in the same bid
    are averaged with weight P(roll) x own reach x sum over the opponent's rolls of P(roll') x
    the opponent's reach (dice are independent, so this is the probability of reaching them)."""
    if not isinstance(game, (LiarsDice, Dudo)):
        raise TensorCFRError(f"plot-strategy: {game.name} is not a dice game")
    call = LIAR if isinstance(game, LiarsDice) else "dudo"
    by_history: dict[tuple, dict[str, dict[str, float]]] = {}  # bids -> {roll of the mover: strategy}
    for key, probs in table.items():
        roll, bids = _dice_key(game, key)
        by_history.setdefault(bids, {})[roll] = probs
    rolls = [sorted({r for h, row in by_history.items() if len(h) % 2 == p for r in row}) for p in (0, 1)]
    prob = [{r: _roll_probability(r, game.faces) for r in rs} for rs in rolls]
    # reach[h] = ({roll: player 0's own reach}, {roll: player 1's}) of the bid sequence h
    reach: dict[tuple, tuple[dict, dict]] = {(): ({r: 1.0 for r in rolls[0]}, {r: 1.0 for r in rolls[1]})}
    for h in sorted(by_history, key=len):
        if h not in reach:
            continue  # no play of these strategies reaches it
        mover, row = len(h) % 2, by_history[h]
        for a in next(iter(row.values())):
            if a == call:
                continue
            step = {r: reach[h][mover].get(r, 0.0) * row.get(r, {}).get(a, 0.0) for r in rolls[mover]}
            reach[h + (a,)] = (step, reach[h][1]) if mover == 0 else (reach[h][0], step)
    bids = list(game.bid_names)
    column = {b: j for j, b in enumerate(bids)}
    num = [np.zeros((len(rolls[p]), len(bids))) for p in (0, 1)]
    den = [np.zeros((len(rolls[p]), len(bids))) for p in (0, 1)]
    for h, row in by_history.items():
        if not h or h not in reach:
            continue
        p = len(h) % 2
        opponent = sum(prob[1 - p][r] * v for r, v in reach[h][1 - p].items())
        for i, r in enumerate(rolls[p]):
            w = prob[p][r] * reach[h][p].get(r, 0.0) * opponent
            if r in row and w > 0:
                num[p][i, column[h[-1]]] += w * row[r].get(call, 0.0)
                den[p][i, column[h[-1]]] += w
    with np.errstate(invalid="ignore", divide="ignore"):
        return rolls, bids, [np.where(d > 0, n / np.where(d > 0, d, 1), np.nan) for n, d in zip(num, den)]


# -- hold'em -----------------------------------------------------------------------------------------

def _hand_class(name: str) -> tuple[int, int]:
    """The (row, column) of a hand such as "AsKs" in the 13 x 13 grid: A first, pairs on the
    diagonal, suited above it (row the higher rank), offsuit below."""
    hi, lo = sorted((RANKS.index(name[0]), RANKS.index(name[2])), reverse=True)
    row, col = 12 - hi, 12 - lo
    return (row, col) if name[1] == name[3] or hi == lo else (col, row)


def grid_label(row: int, col: int) -> str:
    """The hand class of a grid cell: "AA", "AKs", "AKo"."""
    hi, lo = RANKS[12 - min(row, col)], RANKS[12 - max(row, col)]
    return hi + lo if row == col else hi + lo + ("s" if row < col else "o")


def _reach(table: Table, hand: str, cards: list[str], moves: list[list[str]], player: int) -> float:
    """The probability that `player` holding `hand` makes its own moves of the line `moves`
    (per street; player 0 acts first on each) on the board `cards` (per street)."""
    reach = 1.0
    for s, street in enumerate(moves):
        for k in range(player, len(street), 2):
            before = "/".join([" ".join(m) for m in moves[:s]] + [" ".join(street[:k])])
            reach *= table.get(f"{hand}|{'/'.join(cards[:s + 1])}|{before}", {}).get(street[k], 0.0)
            if reach == 0.0:
                return 0.0
    return reach


def _line_moves(game, at: str) -> list[list[str]]:
    """The moves of the betting line `at`, per street; a one-line error if it is not one."""
    token = re.compile("|".join(re.escape(a) for a in sorted(game.actions, key=len, reverse=True)))
    streets = at.split("/")
    moves = [token.findall(s) for s in streets]
    if any(" ".join(m) != s.strip() for m, s in zip(moves, streets)):
        raise TensorCFRError(f"plot-strategy: --at {at!r} is not a betting line of {game.name} "
                             f"(actions {', '.join(game.actions)}, streets split by '/')")
    return moves


def public_names_needed(game, at: str = "", match: str | None = None):
    """A predicate on the public part of infoset keys ("|board|line") that keeps the infosets
    the hold'em grid at `at` reads (those of every line on the way to it), or None (all) where
    the picture is another one.

    Example:
        >>> from tensorcfr import games
        >>> keep = public_names_needed(games.make("holdem_river(board=Ks7d2c9h4s,pot=10,stack=100)"), "check bet 0.5")
        >>> keep("|Ks7d2c9h4s|check"), keep("|Ks7d2c9h4s|bet 1")
        (True, False)
    """
    if not isinstance(game, HoldemSpot) or match is not None:
        return None
    moves = _line_moves(game, at)
    lines = {at} | {"/".join([" ".join(m) for m in moves[:s]] + [" ".join(street[:k])])
                    for s, street in enumerate(moves) for k in range(len(street))}
    return lambda public: public.rsplit("|", 1)[-1] in lines


def hand_grid(game, table: Table, at: str = "") -> tuple[int, list[str], np.ndarray]:
    """(player to act, actions, frequencies [13, 13, actions]) at the betting line `at` of a
    hold'em spot (`""`: the first decision; streets split by "/", as in the infoset keys).
    A combo h weighs as much as play reaches it: the sum over the opponent's combos h' that
    share no card with it of r(h) r'(h') x both players' probabilities of their own moves on the
    line (the river card, where dealt, is equally likely for every such pair); a cell with no
    combo is NaN."""
    if not isinstance(game, HoldemSpot):
        raise TensorCFRError(f"plot-strategy: {game.name} is not a hold'em spot")
    moves = _line_moves(game, at)
    player = len(moves[-1]) % 2  # player 0 acts first on every street
    by_board: dict[str, dict[str, dict]] = {}  # board -> {hand: strategy} at the line
    for key, probs in table.items():
        hand, board, line = key.split("|")
        if line == at:
            by_board.setdefault(board, {})[hand] = probs
    if not by_board:
        raise TensorCFRError(f"plot-strategy: no infoset of {game.name} is at the line {at!r}")
    actions = list(next(iter(next(iter(by_board.values())).values())))
    names = [hand_name(h) for h in range(len(game.compat))]
    num = np.zeros((13, 13, len(actions)))
    den = np.zeros((13, 13))
    for board, rows in by_board.items():
        cards = board.split("/")
        dealt = parse_cards("".join(cards), "board")  # the opponent holds none of them (the river card too)
        free = ~np.isin(HANDS, dealt).any(axis=1)
        theirs = np.array([_reach(table, names[h], cards, moves, 1 - player) if w > 0 and free[h] else 0.0
                           for h, w in enumerate(game.weights[1 - player])])
        beside = game.compat @ (game.weights[1 - player] * theirs)  # [1326] the opponent's reach beside each hand
        # a spot solved with suit isomorphism keeps one board of each class: it stands for its
        # twins, whose hands are its own with suits traded, in the same cells
        twins = game.canonical_deal(parse_cards("".join(cards[1:]), "board"))[2] if len(cards) > 1 else 1
        for h in np.flatnonzero(game.weights[player]):
            if names[h] in rows:
                w = twins * game.weights[player][h] * beside[h] * _reach(table, names[h], cards, moves, player)
                i, j = _hand_class(names[h])
                num[i, j] += w * np.array([rows[names[h]].get(a, 0.0) for a in actions])
                den[i, j] += w
    with np.errstate(invalid="ignore", divide="ignore"):
        return player, actions, np.where(den[..., None] > 0, num / np.where(den > 0, den, 1)[..., None], np.nan)


# -- drawing -----------------------------------------------------------------------------------------

def _action_colours(actions: list[str]) -> dict[str, tuple]:
    """Passive actions green, folds blue, bets and raises red, darker as they grow; others by
    matplotlib's cycle."""
    import matplotlib

    aggressive = [a for a in actions if a.split(" ")[0] in ("bet", "raise", "allin")]
    reds = matplotlib.colormaps["Reds"](np.linspace(0.35, 0.95, max(len(aggressive), 1)))
    out, other = {}, 0
    for a in actions:
        word = a.split(" ")[0].lower()
        if word in ("check", "call"):
            out[a] = matplotlib.colors.to_rgba("#59a14f")
        elif word == "fold":
            out[a] = matplotlib.colors.to_rgba("#4e79a7")
        elif a in aggressive:
            out[a] = tuple(reds[aggressive.index(a)])
        else:
            out[a] = matplotlib.colors.to_rgba(f"C{other % 10}")
            other += 1
    return out


def _draw_dice(game, table: Table, out: str, title: str) -> str:
    plt = pyplot("plot-strategy")
    rolls, bids, calls = dice_calls(game, table)
    fig, axes = plt.subplots(1, 2, figsize=(max(7.0, 0.42 * len(bids) * 2 + 2), max(3.0, 0.3 * max(map(len, rolls)) + 1.6)),
                             dpi=120, squeeze=False, layout="constrained")
    for p, ax in enumerate(axes[0]):
        image = ax.imshow(np.ma.masked_invalid(calls[p]), vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_xticks(range(len(bids)), bids, rotation=90, fontsize=7)
        ax.set_yticks(range(len(rolls[p])), rolls[p], fontsize=7)
        ax.set_xlabel("last bid")
        ax.set_ylabel(f"p{p}'s roll")
        ax.set_title(f"p{p}: probability of calling", fontsize=9)
    fig.colorbar(image, ax=axes[0].tolist(), fraction=0.04, pad=0.02)
    fig.suptitle(title, fontsize=9)
    return save(fig, out, "plot-strategy")


def _draw_grid(game, table: Table, out: str, title: str, at: str) -> str:
    plt = pyplot("plot-strategy")
    player, actions, freq = hand_grid(game, table, at)
    colours = _action_colours(actions)
    fig, ax = plt.subplots(figsize=(7.2, 6.6), dpi=120)
    for i in range(13):
        for j in range(13):
            left = j
            if not np.isnan(freq[i, j, 0]):
                for a, f in zip(actions, freq[i, j]):  # the cell split left to right by frequency
                    ax.add_patch(plt.Rectangle((left, i), f, 1, color=colours[a], linewidth=0))
                    left += f
            ax.add_patch(plt.Rectangle((j, i), 1, 1, fill=False, edgecolor="white", linewidth=0.8))
            ax.text(j + 0.5, i + 0.5, grid_label(i, j), ha="center", va="center", fontsize=6.5,
                    color="black" if not np.isnan(freq[i, j, 0]) else "#bbbbbb")
    ax.set_xlim(0, 13)
    ax.set_ylim(13, 0)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_aspect("equal")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[a]) for a in actions]
    ax.legend(handles, actions, loc="upper center", bbox_to_anchor=(0.5, -0.01), ncol=min(len(actions), 6), fontsize=7,
              frameon=False)
    where = repr(at) if at else "the first decision"
    ax.set_title("\n".join(textwrap.wrap(title, 110)) + f"\np{player} at {where}", fontsize=7)
    fig.tight_layout()
    return save(fig, out, "plot-strategy")


def _draw_bars(table: Table, out: str, title: str, match: str | None, max_infosets: int) -> str:
    plt = pyplot("plot-strategy")
    try:
        pattern = re.compile(match) if match else None
    except re.error as e:
        raise TensorCFRError(f"plot-strategy: --match {match!r} is not a regular expression ({e})") from None
    keys = [k for k in table if pattern is None or pattern.search(k)]
    if not keys:
        raise TensorCFRError(f"plot-strategy: no infoset key matches {match!r}")
    shown = keys[:max_infosets]
    actions = list(dict.fromkeys(a for k in shown for a in table[k]))
    colours = _action_colours(actions)
    fig, ax = plt.subplots(figsize=(7.0, 0.9 + 0.24 * len(shown)), dpi=120)
    for row, k in enumerate(shown):
        left = 0.0
        for a, f in table[k].items():
            ax.barh(row, f, left=left, color=colours[a], height=0.8)
            if f >= 0.12:
                ax.text(left + f / 2, row, f"{f:.2f}", ha="center", va="center", fontsize=6)
            left += f
    ax.set_yticks(range(len(shown)), shown, fontsize=7)
    ax.set_ylim(len(shown) - 0.5, -0.5)
    ax.set_xlim(0, 1)
    ax.set_xlabel("probability")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[a]) for a in actions]
    ax.legend(handles, actions, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=min(len(actions), 6), fontsize=7,
              frameon=False)
    more = f" (the first {len(shown)} of {len(keys)} infosets; --match picks others)" if len(keys) > len(shown) else ""
    ax.set_title(title + more, fontsize=8, pad=18)
    fig.tight_layout()
    return save(fig, out, "plot-strategy")


def plot_strategy(game, table: Table, out: str, *, title: str = "", at: str = "", match: str | None = None,
                  max_infosets: int = 40) -> str:
    """Draw the strategy `table` ({infoset: {action: p}}) of `game` into `out` (.png, .pdf,
    .svg): a call heat map for Liar's Dice and Dudo, the 13 x 13 grid at the line `at` for a
    hold'em spot, action bars otherwise (`match`: a regular expression picking infoset keys);
    returns `out`."""
    title = title or game.name
    if isinstance(game, (LiarsDice, Dudo)) and match is None:
        return _draw_dice(game, table, out, title)
    if isinstance(game, HoldemSpot) and match is None:
        return _draw_grid(game, table, out, title, at)
    return _draw_bars(table, out, title, match, max_infosets)
