"""Game definitions and their registry.

A game spec is a string such as `"kuhn"`, `"kuhn(ante=2)"` or `"leduc"`; `make(spec)` builds
the game and `available()` lists the registered names. Games implement the small protocol of
`games.base.Game` and know nothing of tensors.

Example:
    >>> from tensorcfr import games
    >>> games.available()[:2]
    ['kuhn', 'leduc']
    >>> games.make("kuhn(ante=2)").ante
    2
"""

from __future__ import annotations

import sys as _sys

if __name__ == "games":
    # imported by its old top-level name from a checkout, before tensorcfr: become tensorcfr.games,
    # so that one set of modules exists (the rest of this file then runs in a module nobody keeps)
    import importlib as _importlib
    _sys.modules[__name__] = _importlib.import_module("tensorcfr.games")

import ast
import inspect
import re
import warnings
from typing import Callable

from .base import CHANCE, TERMINAL, Game, GameError, check_game
from .kuhn import Kuhn
from .leduc import Leduc
from .domino import Domino
from .dudo import Dudo
from .liars_dice import LiarsDice
from .matrix import (MatrixGame, battle_of_sexes, biased_rps, bimatrix, blotto, ficha_domino, matching_pennies,
                     matrix, prisoners_dilemma, rps)
from .ocp import OCP
from .random_game import RandomGame
from .random_dealt import RandomDealt
from .holdem import holdem_flop, holdem_river, holdem_turn
from .goofspiel import Goofspiel
from .battleship import Battleship
from .rhode_island import RhodeIsland

__all__ = ["CHANCE", "TERMINAL", "Game", "GameError", "MatrixGame", "available", "bimatrix", "check_game",
           "make", "matrix", "parse_spec", "register"]

_REGISTRY: dict[str, Callable[..., Game]] = {}


def register(name: str, factory: Callable[..., Game]) -> None:
    """Register `factory(**params) -> Game` under `name`, so `make(name(...))` finds it (a name
    registered again keeps its place in `available()`: `import tensorcfr` registers a Dudo
    factory that supplies the continuation values)."""
    _REGISTRY[name] = factory


def available() -> list[str]:
    """The registered game names, in registration order."""
    return list(_REGISTRY)


def parse_spec(spec: str) -> tuple[str, list, dict]:
    """Split `"name(1, x=2)"` into `("name", [1], {"x": 2})`; values are Python literals, and a
    bare word that is none is read as a string (`board=Ks7d2c9h4s`, `bets=(0.5,1,allin)`).

    Example:
        >>> parse_spec("kuhn(ante=2)")
        ('kuhn', [], {'ante': 2})
        >>> parse_spec("holdem_river(board=9h4sKs7d2c, bets=(1,allin))")
        ('holdem_river', [], {'board': '9h4sKs7d2c', 'bets': (1, 'allin')})
    """
    with warnings.catch_warnings():
        # a spec is text from the command line, not code: Python's warnings about it as code (an
        # invalid escape such as '\*', a SyntaxWarning from 3.12) would print above our answer
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return _parse_spec(spec)


def _parse_spec(spec: str) -> tuple[str, list, dict]:
    for text in (spec.strip(), _quote_bare(spec.strip())):
        try:
            node = ast.parse(text, mode="eval").body
            if isinstance(node, ast.Name):
                return node.id, [], {}
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                args = [ast.literal_eval(a) for a in node.args]
                kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
                if None in kwargs:
                    raise ValueError
                return node.func.id, args, kwargs
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
            pass
    hint = _UNQUOTED_LIST.search(spec)  # (a range's commas read as more arguments)
    raise GameError(f"cannot parse game spec {spec!r}: expected NAME or NAME(arg, key=value)"
                    + (f"; a value with commas needs quotes: {hint[1]}={hint[2].strip()!r}" if hint else ""))


# key=a,b[,c...] with no '=' or quote in b, c: a list of words (a range) that was not quoted
_UNQUOTED_LIST = re.compile(r"(\w+)\s*=\s*([^'\"(),=\[\]]+(?:,[^'\"(),=\[\]]+)+)(?=\s*[,)]|\s*$)")


_BARE_END = set("(),=[]{} \t\n'\"")


def _quote_bare(text: str) -> str:
    """`text` with each bare word inside the outer parentheses that is not a number, a keyword's
    name, True, False or None put in quotes; quoted strings are left as they are."""
    start = text.find("(")
    if start < 0:
        return text
    out, i = [text[:start + 1]], start + 1
    while i < len(text):
        ch = text[i]
        if ch in "'\"":  # a quoted string, copied through
            j = i + 1
            while j < len(text) and text[j] != ch:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif ch in _BARE_END:
            out.append(ch)
            i += 1
        else:
            j = i
            while j < len(text) and text[j] not in _BARE_END:
                j += 1
            word, rest = text[i:j], text[j:].lstrip()
            try:
                literal = isinstance(ast.literal_eval(word), (int, float, complex, bool, type(None)))
            except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
                literal = False
            keyword = rest.startswith("=") and not rest.startswith("==") and word.isidentifier()
            out.append(word if literal or keyword else repr(word))
            i = j
    return "".join(out)


# OpenSpiel's names of the games with an OpenSpiel twin: (our name, OpenSpiel's parameter names
# that ours spell differently, OpenSpiel's parameters that our game has at one value only)
_OPENSPIEL_NAMES = {
    "kuhn_poker": ("kuhn", {}, {"players": 2}),
    "leduc_poker": ("leduc", {}, {"players": 2, "action_mapping": False, "starting_player": 0,
                                  "suit_isomorphism": False}),
    "liars_dice": ("liars_dice", {"dice_sides": "faces"}, {"players": 2, "bidding_rule": "reset-face"}),
}


def make(spec: str | Game) -> Game:
    """Build a game from its spec string (a `Game` passes through unchanged). OpenSpiel's names
    and parameters of the games with an OpenSpiel twin work too.

    Example:
        >>> make("leduc").name
        'leduc'
        >>> make("kuhn_poker").name, make("liars_dice(numdice=2, dice_sides=3)").name
        ('kuhn', 'liars_dice(faces=3,numdice=2)')
    """
    if isinstance(spec, Game):
        return spec
    if not isinstance(spec, str):
        raise GameError(f"a game is a spec string or a games.Game, got {spec!r}")
    if spec.startswith("efg:"):  # a Gambit file: efg:PATH
        from . import efg

        return efg.load(spec[len("efg:"):])
    if spec.startswith("openspiel:"):  # an OpenSpiel game, in OpenSpiel's own syntax
        from .openspiel import make_openspiel

        return make_openspiel(spec[len("openspiel:"):])
    name, args, kwargs = parse_spec(spec)
    if name not in _REGISTRY and name.lower() in _REGISTRY:  # the thesis writes OCP(12), Dudo(4,1,2)
        name = name.lower()
    if name in _OPENSPIEL_NAMES:
        name, renamed, fixed = _OPENSPIEL_NAMES[name]
        for key, value in fixed.items():
            if key in kwargs and kwargs.pop(key) != value:
                raise GameError(f"bad parameters for {name}: {spec!r}: tensorcfr's {name} has {key}={value!r} only")
        kwargs = {renamed.get(key, key): value for key, value in kwargs.items()}
    if name not in _REGISTRY:
        raise GameError(f"unknown game {name!r}; available: {', '.join(available())}")
    factory = _REGISTRY[name]
    try:
        inspect.signature(factory).bind(*args, **kwargs)
    except TypeError as e:
        params = ", ".join(str(p) for p in inspect.signature(factory).parameters.values())
        raise GameError(f"bad parameters for {name}: {e}; it takes ({params})") from None
    try:
        return factory(*args, **kwargs)
    except (TypeError, ValueError, ArithmeticError) as e:
        if isinstance(e, GameError):
            raise
        raise GameError(f"bad parameters for {name}: {spec!r} ({type(e).__name__}: {e})") from None


register("kuhn", Kuhn)
register("leduc", Leduc)
register("random", RandomGame)
register("random_dealt", RandomDealt)
register("ocp", OCP)
register("dudo", Dudo)  # without continuation values: `import tensorcfr` registers a factory that solves them
register("domino", Domino)
register("liars_dice", LiarsDice)
register("rps", rps)
register("matching_pennies", matching_pennies)
register("biased_rps", biased_rps)
register("ficha_domino", ficha_domino)
register("blotto", blotto)
register("battle_of_sexes", battle_of_sexes)
register("prisoners_dilemma", prisoners_dilemma)
register("holdem_river", holdem_river)
register("holdem_turn", holdem_turn)
register("holdem_flop", holdem_flop)
register("goofspiel", Goofspiel)
register("battleship", Battleship)
register("rhode_island", RhodeIsland)
