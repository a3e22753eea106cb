"""The command line (`tensorcfr ...`): `commands.py` parses and runs the commands, `play.py` plays
a saved policy or two against each other.
"""

from tensorcfr.cli.commands import main  # noqa: F401  (the console script's entry point)
