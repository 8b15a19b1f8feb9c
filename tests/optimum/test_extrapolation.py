"""How far an optimum lies outside the fitted runs, and the declared rule of when it is beyond them
(:mod:`jaxscale.optimum.extrapolation`)."""

from __future__ import annotations

import numpy as np

from jaxscale.optimum.extrapolation import (
    beyond_the_runs,
    beyond_the_runs_warnings,
    decades_outside,
    decades_spanned,
)

# runs spanning 1 decade of N and 2 of D
N_RUNS, D_RUNS = np.array([1e8, 3e8, 1e9]), np.array([1e9, 1e10, 1e11])


def test_decades_outside_is_the_distance_to_the_nearer_end():
    np.testing.assert_allclose(decades_outside([1e2, 5e3, 1e6, 10.0, np.nan], [1e3, 1e4]), [1, 0, 2, 2, np.nan])
    assert decades_spanned(N_RUNS) == 1.0 and decades_spanned(D_RUNS) == 2.0


def test_an_optimum_is_beyond_the_runs_only_further_out_than_they_span():
    allocation = {"C": np.array([1e19, 1e21, 1e22, 1e23]), "N": np.array([5e8, 1e10, 2e10, np.nan]),
                  "D": np.array([1e10, 1e12, 1e13, np.nan])}
    columns = beyond_the_runs(allocation, N_RUNS, D_RUNS)
    np.testing.assert_allclose(columns["N_decades_outside_runs"], [0, 1, np.log10(20), np.nan])
    np.testing.assert_allclose(columns["D_decades_outside_runs"], [0, 1, 2, np.nan])
    # exactly one span out is within reach; N* at 1.30 decades is beyond; an undefined optimum is not
    assert columns["beyond_runs"].tolist() == [False, False, True, False]
    warnings = beyond_the_runs_warnings({**allocation, **columns}, N_RUNS, D_RUNS)
    assert warnings == [
        "at C = 1e+22 FLOP, N* lies 1.30 decades outside the runs' N, which span 1.00: further than the runs "
        "reach, so the optimum rests on the law's form alone, which no run checks there (bands over draws carry "
        "only the runs' noise)"]
