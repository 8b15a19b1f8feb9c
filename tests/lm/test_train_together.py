"""Runs of one model shape trained side by side in one compiled step equal the runs trained one at a
time; a run that diverges or ends leaves the others going; each resumes from its own checkpoint."""

import dataclasses
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxscale.lm import train as lm
from tests.lm.test_train import _losses, tiny_run


def _group() -> tuple[list[lm.RunSpec], object]:
    """Three runs of one shape: two learning rates and schedules, three lengths, two data orders."""
    spec, data = tiny_run(steps=12)
    return [
        dataclasses.replace(spec, run_id="a", schedule=lm.Schedule(1e-2, 12, 2, "constant")),
        dataclasses.replace(spec, run_id="b", schedule=lm.Schedule(3e-3, 8, 2, "cosine")),
        dataclasses.replace(spec, run_id="c", schedule=lm.Schedule(2e-2, 10, 2, "cosine"), seed=1),
    ], data


@pytest.mark.slow  # five compilations (groups of 3, 2 and 1; one-run steps): ~50 s on 2 loaded cores
def test_side_by_side_equals_one_at_a_time(tmp_path):
    specs, data = _group()
    together = lm.train_together(specs, data, [tmp_path / "together" / s.run_id for s in specs], progress=False)
    for spec, curve in zip(specs, together):
        alone = lm.train(spec, data, tmp_path / "alone" / spec.run_id, progress=False)
        assert [int(r["step"]) for r in curve] == sorted(spec.eval_steps)
        np.testing.assert_allclose(_losses(curve), _losses(alone), rtol=1e-5)
        assert [r["learning_rate"] for r in curve] == [r["learning_rate"] for r in alone]
        assert (tmp_path / "together" / spec.run_id / lm.DONE_FILE).is_file()


def test_a_diverged_run_stops_alone_and_a_stopped_group_resumes(tmp_path, monkeypatch):
    specs, data = _group()
    directories = [tmp_path / s.run_id for s in specs]
    real_updates = lm.train_updates_together
    calls = {"n": 0}

    def poisoned(states, batches, lrs, count, **kw):  # fault injection: run b's parameters turn NaN after step 4
        calls["n"] += 1  # a call ends at each evaluation step: steps 1-2, 3-4, ...
        states, losses = real_updates(states, batches, lrs, count, **kw)
        if calls["n"] == 2:
            nan_b = jax.tree.map(lambda p: p.at[1].set(jnp.nan), states["params"])
            states = {**states, "params": nan_b}
        return states, losses

    monkeypatch.setattr(lm, "train_updates_together", poisoned)
    first = lm.train_together(specs, data, directories, progress=False, stop_after=6)
    assert isinstance(first[1], lm.TrainingDiverged) and "run b" in str(first[1])
    assert [int(r["step"]) for r in first[0]] == [2, 4, 6] == [int(r["step"]) for r in first[2]]
    monkeypatch.setattr(lm, "train_updates_together", real_updates)
    resumed = lm.train_together([specs[0], specs[2]], data, [directories[0], directories[2]], progress=False)
    for spec, curve in zip([specs[0], specs[2]], resumed):
        alone = lm.train(spec, data, tmp_path / "alone" / spec.run_id, progress=False)
        np.testing.assert_allclose(_losses(curve), _losses(alone), rtol=1e-5)


def test_runs_of_different_shapes_are_refused(tmp_path):
    specs, data = _group()
    wider = dataclasses.replace(specs[1], model=dataclasses.replace(specs[1].model, d_model=32))
    with pytest.raises(ValueError, match="cannot train beside"):
        lm.train_together([specs[0], wider], data, [tmp_path / "a", tmp_path / "b"], progress=False)


@pytest.mark.slow  # two sweeps of the smoke preset's first size: 8 runs each
def test_a_sweeps_runs_side_by_side_equal_its_runs_one_at_a_time(tmp_path):
    from jaxscale.lm import presets
    from jaxscale.lm.sweep import run_sweep

    corpus = Path(__file__).resolve().parents[2].parent / presets.SHARED_CORPUS
    if not corpus.is_file():
        pytest.skip(f"corpus {corpus} not present (fresh clone without ../shared/data)")
    cfg = dataclasses.replace(presets.SMOKE, sizes=presets.SMOKE.sizes[:1], corpus=str(corpus))  # 2 rates, 6 budgets
    tables = {}
    for together in (True, False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # one size: no exponent
            result = run_sweep(cfg, tmp_path / str(together), progress=False, together=together)
        tables[together] = result.curves.frame.sort_values(["run_id", "step"]).reset_index(drop=True)
    side, alone = tables[True], tables[False]
    assert side.run_id.nunique() == 8 and list(side.run_id) == list(alone.run_id) and list(side.step) == list(alone.step)
    for column in ("train_loss", "val_loss"):
        np.testing.assert_allclose(side[column].astype(float), alone[column].astype(float), rtol=1e-4)
