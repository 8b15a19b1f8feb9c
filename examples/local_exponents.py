"""Compute-optimal allocation and local exponents by autodiff, for a law you write yourself.

Run: python examples/local_exponents.py
"""

import jax
import jax.numpy as jnp

from jaxscale.laws import chinchilla, pearce_song
from jaxscale.optimum import solver as optimal


def my_law(n, d, p):
    """Any loss law f(N, D, params) works; here Chinchilla's form with an extra data floor."""
    return p["E"] + p["A"] / n ** p["alpha"] + p["B"] / (d + p["d0"]) ** p["beta"]


def main() -> None:
    with jax.enable_x64(True):
        epoch = chinchilla.EPOCH
        c = jnp.logspace(20, 26, 4)
        print("budget C       N*(C) generic   N*(C) Eq. 14   a = dlogN*/dlogC")
        for ci, n_gen, n_eq14, a in zip(c, optimal.optimal_n(chinchilla.loss, epoch, c),
                                        chinchilla.compute_optimal_n(c, epoch),
                                        optimal.local_exponent(chinchilla.loss, epoch, c)):
            print(f"{float(ci):9.1e}   {float(n_gen):13.4e}  {float(n_eq14):13.4e}   {float(a):.6f}")

        p = {"A": 482.01, "B": 2085.43, "E": 1.8172, "alpha": 0.3478, "beta": 0.3658, "d0": 1e9}
        a = optimal.local_exponent(my_law, p, c)
        print("\ncustom law: local exponent a(C) =", [round(float(v), 4) for v in a])

        sensitivity = jax.grad(lambda q: optimal.optimal_log_n(chinchilla.loss, q, jnp.log(1e24)))(epoch)
        print("\nd log N*(1e24 FLOP) / d theta (implicit differentiation):")
        for name, value in zip(epoch._fields, sensitivity):
            print(f"  {name:>5}: {float(value):+.4f}")

        q = pearce_song.with_embedding(epoch, gamma=pearce_song.GAMMA_PAPER)
        n = jnp.logspace(3, 9, 4)
        g = optimal.local_exponent_at_n(pearce_song.LAW, q, n)
        print("\nPearce & Song's g (Eq. 17) by autodiff at N_nonembedding =", [f"{float(v):.0e}" for v in n])
        print("  ", [round(float(v), 4) for v in g])


if __name__ == "__main__":
    main()
