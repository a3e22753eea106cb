"""Decision spaces: one player's sequence-form strategy space (a treeplex), one implementation
per compiled form (`tensorcfr.forms.DecisionSpace`): `treeplex.Treeplex` (generic) and
`public.PublicTreeplex` ([public sequence × private type]), with their level-loop passes
(normalise, sequence form, bottom-up values and best responses, instantaneous regrets, the
dilated-entropy softmax and weights); `fused.py` holds the fused kernels both use.
"""
