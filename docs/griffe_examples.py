"""A griffe extension for the API reference: the docstrings' "Example:" sections are read as
Google-style "Examples:" (doctest code), not as prose whose `[1, 2]` would look like links."""

from __future__ import annotations

import re

import griffe

_HEADING = re.compile(r"^(\s*)Example(\s*(?:\([^)]*\))?):\s*$", re.M)


class ExamplesSections(griffe.Extension):
    def on_instance(self, *, obj, **kwargs) -> None:
        doc = obj.docstring
        if doc is not None and "Example" in doc.value:
            doc.value = _HEADING.sub(lambda m: f"{m.group(1)}Examples:", doc.value)
