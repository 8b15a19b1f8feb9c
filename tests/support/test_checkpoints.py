"""Checkpoints: save/restore round trip of an optax state, latest step, retention, empty dir."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxscale.support.checkpoints import Checkpoints


def _state(shift: float):
    params = {"w": jnp.full((3, 4), shift, jnp.float32), "b": jnp.arange(4.0, dtype=jnp.float32)}
    return {"params": params, "opt": optax.adamw(1e-3).init(params), "step": jnp.int32(shift)}


def test_empty_directory_restores_none(tmp_path):
    with Checkpoints(tmp_path / "ck") as ckpt:
        assert ckpt.latest_step() is None
        assert ckpt.restore(_state(0.0)) is None
        assert ckpt.metadata() is None


def test_round_trip_restores_latest_with_metadata(tmp_path):
    with Checkpoints(tmp_path, max_to_keep=2) as ckpt:
        for step in (1, 2, 3):
            ckpt.save(step, _state(float(step)), {"loss": 10.0 - step})
    with Checkpoints(tmp_path) as ckpt:
        restored = ckpt.restore(_state(0.0))
        assert restored.step == 3 and restored.metadata == {"loss": 7.0}
        expected = _state(3.0)
        for got, want in zip(jax.tree_util.tree_leaves(restored.state), jax.tree_util.tree_leaves(expected)):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
            assert got.dtype == want.dtype
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.isdigit()) == ["2", "3"]
        assert ckpt.restore(_state(0.0), step=2).metadata == {"loss": 8.0}


def test_metadata_is_read_without_the_state(tmp_path):
    """A caller can read what a checkpoint is before restoring it, whatever its arrays' shapes."""
    with Checkpoints(tmp_path) as ckpt:
        ckpt.save(1, {"w": jax.numpy.zeros((5, 3))}, {"dim": 3})
        ckpt.save(2, {"w": jax.numpy.zeros((5, 3))}, {"dim": 3, "step": 2})
    with Checkpoints(tmp_path) as ckpt:
        assert ckpt.metadata() == {"dim": 3, "step": 2} and ckpt.metadata(step=1) == {"dim": 3}


def test_max_to_keep_validated(tmp_path):
    with pytest.raises(ValueError, match="max_to_keep"):
        Checkpoints(tmp_path, max_to_keep=0)
