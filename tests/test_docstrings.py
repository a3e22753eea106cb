"""Every docstring example in the library runs and prints what it says."""

import doctest
import importlib
import pkgutil

import pytest

from tensorcfr import games
import tensorcfr

MODULES = sorted(({m.name for pkg in (tensorcfr, games) for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")}
                  | {"tensorcfr", "tensorcfr.games"}) - {"tensorcfr.__main__"})  # __main__ runs the CLI on import


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
