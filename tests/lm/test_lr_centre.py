"""The sweep's option to centre each size's learning-rate grid on a published eta*(N, D)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from jaxscale.laws import steplaw
from jaxscale.lm import presets
from jaxscale.lm.sweep import budget_steps, grid_rates, model_config
from jaxscale.networks.transformer import param_counts


def test_each_sizes_grid_keeps_its_ratios_and_puts_the_reference_rate_on_step_laws_optimum():
    cfg = dataclasses.replace(presets.CPU, lr_centre="steplaw", schemes=tuple(s for s in presets.CPU.schemes if s != 1))
    rates = grid_rates(cfg, cfg.vocab_size)
    reference = list(cfg.learning_rates).index(cfg.single_lr)
    for size in cfg.sizes:
        n = param_counts(model_config(cfg, size, cfg.vocab_size)).total
        d = budget_steps(cfg, size, cfg.vocab_size) * cfg.tokens_per_step
        want = steplaw.PUBLISHED_LR.A * n ** -steplaw.PUBLISHED_LR.alpha * d ** steplaw.PUBLISHED_LR.beta
        assert rates[size.name][reference] == pytest.approx(want, rel=1e-12)
        np.testing.assert_allclose(np.array(rates[size.name]) / rates[size.name][reference],
                                   np.array(cfg.learning_rates) / cfg.single_lr, rtol=1e-12)
    assert grid_rates(presets.CPU, presets.CPU.vocab_size)[cfg.sizes[0].name] == list(presets.CPU.learning_rates)


def test_a_centred_grid_is_refused_with_one_rate_for_every_size_or_an_unknown_law():
    with pytest.raises(ValueError, match="drop scheme 1"):
        dataclasses.replace(presets.CPU, lr_centre="steplaw", schemes=(1, 2))
    with pytest.raises(ValueError, match="lr_centre must be one of"):
        dataclasses.replace(presets.CPU, lr_centre="nope", schemes=(2,))
