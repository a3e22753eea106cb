"""Gambit's extensive-form text format (`.efg`) as a game: `games.make("efg:PATH")`.

Reads what `tensorcfr.io.interop.to_efg` writes and Gambit's own files: the header
`EFG 2 R "title" { "Player 1" "Player 2" } "comment"`, then one line per node in depth-first
order:

    c "name" SET "set name" { "outcome" PROB ... } OUTCOME [ "outcome name" { U1 U2 } ]
    p "name" PLAYER SET "set name" { "action" ... } OUTCOME [ "outcome name" { U1 U2 } ]
    t "name" OUTCOME [ "outcome name" { U1 U2 } ]

Probabilities and payoffs are decimals or fractions (`1/3`). An outcome's payoffs are given
where it first appears and reused by its number; an information set's actions (or a chance
set's probabilities) may be omitted after its first node; outcomes on inner nodes add to the
payoffs below them. Information sets keep their names as infoset keys where the names tell
them apart, else `P{player}#{number}`. A malformed file is a `GameError` naming the line.

Example:
    >>> g = from_text('EFG 2 R "pennies" { "A" "B" } ""\\n'
    ...               'p "" 1 1 "row" { "H" "T" } 0\\n'
    ...               'p "" 2 1 "col" { "H" "T" } 0\\n'
    ...               't "" 1 "win" { 1 -1 }\\nt "" 2 "lose" { -1 1 }\\n'
    ...               'p "" 2 1 "col" { "H" "T" } 0\\nt "" 2\\nt "" 1\\n')
    >>> g.legal_actions(g.initial_state()), g.utilities(5)  # row T, column H: outcome 2
    (('H', 'T'), (-1.0, 1.0))
"""

from __future__ import annotations

import hashlib
import re
import sys
from fractions import Fraction

from .base import CHANCE, TERMINAL, Game, GameError

_TOKEN = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|(\{)|(\})|([^\s{}"]+))')


def _tokens(text: str, source: str):
    """(kind, value, line) for every token: kind "s" a quoted string, "{" / "}", "w" a word."""
    pos, line = 0, 1
    while True:
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            rest = text[pos:]
            if rest.strip():
                line += rest[:len(rest) - len(rest.lstrip())].count("\n")
                raise GameError(f"{source}: line {line}: cannot read {rest.strip()[:20]!r}")
            return
        start = m.start(m.lastindex)  # the token itself, after the blanks before it
        line += text.count("\n", pos, start)
        s, lb, rb, word = m.groups()
        if s is not None:
            yield "s", s.replace('\\"', '"').replace("\\\\", "\\"), line
        else:
            yield ("{" if lb else "}" if rb else "w"), (lb or rb or word), line
        line += text.count("\n", start, m.end())  # newlines inside a string
        pos = m.end()


class _Reader:
    def __init__(self, text: str, source: str):
        self.toks = list(_tokens(text, source))
        self.i, self.source = 0, source

    def fail(self, what: str) -> GameError:
        line = self.toks[min(self.i, len(self.toks) - 1)][2] if self.toks else 1
        return GameError(f"{self.source}: line {line}: {what}")

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None, None)

    def take(self, kind: str, what: str):
        k, v, _ = self.peek()
        if k != kind:
            raise self.fail(f"expected {what}, found {v!r}" if k else f"expected {what}, found the end of the file")
        self.i += 1
        return v

    def number(self, what: str) -> Fraction:
        """An exact number (decimal, with exponent, or a ratio) that a float64 can hold:
        `1e400` would overflow it and `1e-400` vanish in it, so both are refused by name; an
        exponent is read before `Fraction` expands it (`1e999999999` would take minutes)."""
        v = self.take("w", what)
        exp = _EXPONENT.search(v)
        if exp and abs(int(exp.group(1))) > 10_000:
            raise self.fail(f"{what} {v} is out of float64's range")
        try:
            x = Fraction(v)
        except (ValueError, ZeroDivisionError):
            raise self.fail(f"expected {what}, found {v!r}") from None
        if abs(x) > _FLOAT_MAX or (x and not float(x)):
            raise self.fail(f"{what} {v} is out of float64's range")
        return x

    def integer(self, what: str) -> int:
        n = self.number(what)
        if n.denominator != 1 or n < 0:
            raise self.fail(f"expected {what} (a non-negative integer), found {n}")
        return int(n)

    def braced(self, item) -> list:
        self.take("{", "'{'")
        out = []
        while self.peek()[0] != "}":
            if self.peek()[0] is None:
                raise self.fail("a '{' is never closed")
            out.append(item())
        self.i += 1
        return out


_EXPONENT = re.compile(r"[eE]([+-]?\d+)$")
_FLOAT_MAX = Fraction(sys.float_info.max)


def from_text(text: str, source: str = "efg") -> "EFGGame":
    """Parse EFG text (see the module docstring)."""
    r = _Reader(text, source)
    if r.take("w", "EFG") != "EFG" or r.take("w", "the version 2") != "2" or r.take("w", "R") != "R":
        raise r.fail("not an EFG 2 R file")
    title = r.take("s", "the game's title")
    players = r.braced(lambda: r.take("s", "a player's name"))
    if len(players) != 2:
        raise r.fail(f"tensorcfr solves two-player games; this file has {len(players)} players")
    if r.peek()[0] == "s":
        r.i += 1  # the comment
    g = EFGGame(title or source)
    outcomes: dict[int, tuple[Fraction, Fraction]] = {0: (Fraction(0), Fraction(0))}
    infosets: dict[tuple[int, int], tuple[str, tuple]] = {}  # (player or -1, number) -> (name, actions / probs)

    def outcome() -> int:
        n = r.integer("an outcome number")
        if r.peek()[0] == "s":
            r.i += 1  # the outcome's name
        if r.peek()[0] == "{":
            pays = r.braced(lambda: r.number("a payoff"))
            if len(pays) != 2:
                raise r.fail(f"outcome {n} has {len(pays)} payoffs, not 2")
            outcomes[n] = (pays[0], pays[1])
        elif n not in outcomes:
            raise r.fail(f"outcome {n} is used before its payoffs are given")
        return n

    def node(parent: int, label: str) -> int:
        kind = r.take("w", "a node (c, p or t)")
        r.take("s", "the node's name")
        if kind == "t":
            return g.add(parent, label, TERMINAL, None, (), outcomes[outcome()])
        if kind not in ("c", "p"):
            raise r.fail(f"unknown node kind {kind!r} (expected c, p or t)")
        player = -1 if kind == "c" else r.integer("a player number")
        if kind == "p" and player not in (1, 2):
            raise r.fail(f"player {player} is not 1 or 2")
        number = r.integer("an information set number")
        name = r.take("s", "the information set's name") if r.peek()[0] == "s" else ""
        key = (player, number)
        if r.peek()[0] == "{":
            if kind == "c":
                body = r.braced(lambda: (r.take("s", "an outcome's name"), r.number("a probability")))
            else:
                body = r.braced(lambda: r.take("s", "an action's name"))
            if key in infosets and infosets[key][1] != tuple(body):
                raise r.fail(f"information set {number} of {'chance' if kind == 'c' else f'player {player}'} "
                             "lists other actions than before")
            infosets.setdefault(key, (name, tuple(body)))
        elif key not in infosets:
            raise r.fail(f"information set {number} is used before its actions are given")
        name, body = infosets[key]
        pays = outcomes[outcome()]
        if kind == "c":
            labels = _distinct([a for a, _ in body])
            me = g.add(parent, label, CHANCE, None, tuple((a, float(p)) for a, (_, p) in zip(labels, body)), pays)
        else:
            me = g.add(parent, label, player - 1, (player - 1, number, name), tuple(_distinct(list(body))), pays)
        for a in g.labels(me):
            node(me, a)
        return me

    try:
        node(-1, "")
    except RecursionError:
        raise r.fail("the tree is too deep to read") from None
    if r.peek()[0] is not None:
        raise r.fail("more nodes after the tree is complete")
    g.finish()
    return g


def _distinct(names: list[str]) -> list[str]:
    """Names made unique and non-empty (`#k` appended), as the game protocol needs."""
    out, seen = [], set()
    for k, a in enumerate(names):
        name = a if a and a not in seen else f"{a}#{k}"
        seen.add(name)
        out.append(name)
    return out


def load(path: str) -> "EFGGame":
    """`games.make("efg:PATH")`: the game of an `.efg` file."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise GameError(f"no .efg file at {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise GameError(f"{path}: cannot read it ({e})") from None
    g = from_text(text, path)
    g.name = f"efg:{path}"
    g.digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    return g


class EFGGame(Game):
    """A game read from EFG text. State: the node's index."""

    def __init__(self, title: str):
        self.title, self.name, self.digest = title, f"efg:{title}", ""
        self.parent: list[int] = []
        self.kind: list[int] = []  # 0, 1, CHANCE or TERMINAL
        self.info: list[tuple | None] = []  # (player, number, name) at decision nodes
        self.moves: list[tuple] = []  # action names, or (outcome, probability) pairs
        self.children: list[dict[str, int]] = []
        self.payoff: list[tuple[Fraction, Fraction]] = []  # summed from the root

    def add(self, parent: int, label: str, kind: int, info, moves: tuple, pays) -> int:
        above = self.payoff[parent] if parent >= 0 else (Fraction(0), Fraction(0))
        self.parent.append(parent)
        self.kind.append(kind)
        self.info.append(info)
        self.moves.append(moves)
        self.children.append({})
        total = (above[0] + pays[0], above[1] + pays[1])
        if max(abs(total[0]), abs(total[1])) > _FLOAT_MAX:  # outcomes add up along the path
            raise GameError(f"{self.title}: the payoffs summed along the path to node {label!r} "
                            "are out of float64's range")
        self.payoff.append(total)
        me = len(self.parent) - 1
        if parent >= 0:
            self.children[parent][label] = me
        return me

    def labels(self, node: int) -> list[str]:
        m = self.moves[node]
        return [a for a, _ in m] if self.kind[node] == CHANCE else list(m)

    def finish(self) -> None:
        """Infoset keys: the sets' names where they tell the sets apart, else P{player}#{number}."""
        sets = {i for i in self.info if i is not None}
        names = [name for _, _, name in sets]
        unique = all(names) and len(set(names)) == len(sets)
        self.keys = {i: (i[2] if unique else f"P{i[0] + 1}#{i[1]}") for i in sets}

    def cache_token(self):
        """The file's contents: an edited file is another game for the compile cache."""
        return self.digest

    def initial_state(self):
        return 0

    def player(self, state):
        return self.kind[state]

    def chance_outcomes(self, state):
        return self.moves[state]

    def legal_actions(self, state):
        return self.moves[state]

    def next_state(self, state, action):
        return self.children[state][action]

    def utilities(self, state):
        u0, u1 = self.payoff[state]
        return float(u0), float(u1)

    def infoset_key(self, state):
        return self.keys[self.info[state]]
