"""The library's exception type."""

from tensorcfr.games import GameError


class TensorCFRError(GameError):
    """Raised for an invalid game, bad input or an unusable file; the message names the culprit.

    It is a `games.GameError` (and so a `ValueError`): one `except` catches every error the
    library raises on bad input.
    """


def short_name(name: str, most: int = 120) -> str:
    """A game's name cut to `most` characters for a message or a line of text: a hold'em spot's,
    ranges and all, runs to thousands of characters.

    Example:
        >>> short_name("kuhn"), len(short_name("x" * 500))
        ('kuhn', 120)
    """
    return name if len(name) <= most else name[:most - 3] + "..."
