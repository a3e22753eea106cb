"""Files and other tools' formats: `policies.py` (policy files, JSON and `.npz`) and
`interop.py` (Gambit `.efg` export, OpenSpiel policies).
"""
