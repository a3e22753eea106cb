"""Payoff operators (`tensorcfr.forms.Operator`): counterfactual values through the payoff,
one per compiled form (`payoff.PayoffOperator`, generic: a sparse matrix; `public.PublicPayoffOperator`:
a [T0, T1] matrix per payoff class), and `distributed.ShardedOperator`, which sums either over
the ranks of a process group.
"""
