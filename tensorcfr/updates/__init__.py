"""The update rules and the one iteration skeleton they share: `rules.py` (the CFR family and
sequence-form FTRL as configurations with their typed state; the presets), `iteration.py`
(`iterate`: one iteration over an explicit state), `capture.py` (the iteration recorded as a
CUDA graph or compiled), `specs.py` (the one parser of algorithm specs) and `validate.py` (the
checks of every numeric setting).
"""
