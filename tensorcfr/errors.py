"""The library's exception type."""

from tensorcfr.games import GameError


class TensorCFRError(GameError):
    """Raised for an invalid game, bad input or an unusable file; the message names the culprit.

    It is a `games.GameError` (and so a `ValueError`): one `except` catches every error the
    library raises on bad input.
    """
