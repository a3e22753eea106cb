"""Running a solver: `spec.RunSpec` (the settings of a run, checked once; the CLI and `Solver`
both start from one), `solver.Solver` (a compiled game, its operator, the state and the iteration
count), `training.train` (the loop that evaluates, logs, stops and checkpoints),
`checkpoints.py` (run directories and checksummed checkpoints), `protocol.IterativeSolver`
(what every solver offers the loop) and `continuation.py` (Dudo's continuation values,
solved by a solver and cached).
"""
