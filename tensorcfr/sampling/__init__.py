"""Monte-Carlo counterfactual values, one estimator per compiled form: `generic.Estimator`
(chance, external and outcome sampling over the chance tree) and `public.PublicEstimator` (a
sample is a deal of private types). Both draw from `generic.RandomDraws`.
"""

from tensorcfr.sampling.generic import (EPSILON_DEFAULT, SCHEMES, UPDATE_SCOPES, Draws,  # noqa: F401
                                        Estimator, RandomDraws, check_settings)
