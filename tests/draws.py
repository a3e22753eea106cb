"""Test helpers for the Monte-Carlo estimators: uniforms from tables (to enumerate deals and
pure strategies), and every sample's estimate apart (to test the spread of the average)."""

import torch

from tensorcfr.sampling.public import PublicEstimator
from tensorcfr.sampling.generic import Draws


class FixedDraws(Draws):
    """Uniforms from tables: `chance_u` [K, C] per sample and class, `player_u[p]` [B, K, I_p]."""

    def __init__(self, chance_u: torch.Tensor, player_u: tuple[torch.Tensor, torch.Tensor] | None = None):
        self.chance_u, self.player_u = chance_u, player_u

    def chance(self, k, c):
        return self.chance_u.to(k.device)[k, c]

    def player(self, p, batch, samples, infosets):
        return self.player_u[p]


def per_sample(est, p: int, sigma: list[torch.Tensor], xs: list[torch.Tensor], draws: Draws):
    """As `est.values`, but every sample's estimate [B, K, S_p] and averaged plan [B, K, S_p]."""
    if isinstance(est, PublicEstimator):
        return _public_per_sample(est, p, sigma, xs, draws)
    _, _, rows, kz, contrib, avg, _ = est._terms(p, sigma, draws, xs)
    b, sp = avg.shape[0], est.spaces[p].num_sequences
    g = contrib.new_zeros(b, est.samples * sp).index_add_(1, kz * sp + rows, contrib)
    return g.reshape(b, est.samples, sp), (avg if avg.dim() == 3 else avg[:, None].expand(b, est.samples, sp))


def _public_per_sample(est, p, sigma, xs, draws):
    t0, t1 = est.deals(draws)
    g, avg = est._terms(p, sigma, draws, xs, t0, t1)  # [B, 1 + M, K], [B, M, K] or None
    sp, K, own = est.spaces[p], est.samples, (t0, t1)[p]
    b, ks = g.shape[0], torch.arange(K, device=g.device)

    def spread(rows: torch.Tensor, first) -> torch.Tensor:
        """[B, K, S]: sample k's rows [B, M, K] on its column own[k], `first` in column 0."""
        out = rows.new_zeros(b, K, sp.num_sequences)
        out[:, :, 0] = first
        view = out[:, :, 1:].view(b, K, sp.num_public_sequences, sp.types).permute(1, 3, 0, 2)  # [K, T, B, M]
        view[ks, own] = rows.permute(2, 0, 1)
        return out

    full = spread(g[:, 1:], g[:, 0])
    return full, (xs[p][:, None].expand(-1, K, -1) if avg is None else spread(avg, 1.0))
