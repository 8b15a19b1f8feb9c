"""TensorBoard event directories: one run per directory that holds event files.

A run is a directory under the root with ``*tfevents*`` files (the root itself when the files
lie there); its id is the directory's path relative to the root. Its event files are read in
name order (the writer puts the creation time first, so a resumed run's new file follows the
old one). Scalars are read in both encodings writers use: the legacy ``simple_value`` (PyTorch's
``SummaryWriter``, TF 1) and the rank-0 tensors of the scalars plugin (TF 2, ``tensorboard.summary``,
``jax``/Flax writers); the run's configuration is the HParams plugin's session start info when
it was logged (``hparams_pb``, ``tf.summary`` hparams, ``SummaryWriter.add_hparams``).

The records are framed by this module (TFRecord: 8-byte length, 4-byte length CRC, data, 4-byte
data CRC) and parsed with TensorBoard's protobuf classes: TensorBoard's own Python loader verifies
each record's checksums in pure Python (20,000 records: 1.0 s to load and parse, against 0.08 s
framed here; with the scalars taken out, 1,000,000 records read in half the anchor's time on a
loaded machine: ``benchmarks/bench_readers.py``). The checksums are not verified; a record cut short (a run still writing) ends the file, and a record
that does not parse is an error naming the file and its offset.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import numpy as np

from jaxscale.runs.logged import Logged, config_value, scalars_frame

#: TensorFlow DataType enum values of the numeric rank-0 tensors read as scalars -> numpy dtype.
_DTYPES = {1: np.float32, 2: np.float64, 3: np.int32, 9: np.int64, 19: np.float16}
_HPARAMS_PLUGIN, _SCALARS_PLUGIN = "hparams", "scalars"


def event_files(root: Path) -> dict[str, list[Path]]:
    """Run id -> its event files (name order), for every directory under ``root`` that holds any."""
    runs: dict[str, list[Path]] = {}
    for path in sorted(root.rglob("*tfevents*")):
        if path.is_file():
            rel = path.parent.relative_to(root).as_posix()
            runs.setdefault(root.name if rel == "." else rel, []).append(path)
    return runs


def read_tensorboard(root: str | Path) -> Logged:
    """Every run's scalars and hyperparameters under the TensorBoard log directory ``root``.

    Raises:
        ValueError: no event file under ``root``, or a record that is not an event (naming the
            file and the byte offset).
    """
    from google.protobuf.message import DecodeError
    from tensorboard.compat.proto import event_pb2
    from tensorboard.plugins.hparams import plugin_data_pb2

    root = Path(root)
    runs = event_files(root)
    if not runs:
        raise ValueError(f"{root}: no TensorBoard event files (*tfevents*) under this directory")
    run_col: list[str] = []
    tags: list[str] = []
    steps: list[float] = []
    values: list[float] = []
    configs: dict[str, dict[str, Any]] = {}
    for run, paths in runs.items():
        for path in paths:
            for event in _events(path, event_pb2.Event, DecodeError):
                if not event.HasField("summary"):
                    continue
                for value in event.summary.value:
                    number = _scalar(value)
                    if number is not None:
                        run_col.append(run)
                        tags.append(value.tag)
                        steps.append(event.step)
                        values.append(number)
                    elif value.metadata.plugin_data.plugin_name == _HPARAMS_PLUGIN:
                        configs.setdefault(run, {}).update(_hparams(value, plugin_data_pb2))
    places = {run: str(paths[0].parent) for run, paths in runs.items()}
    return Logged("tensorboard", str(root), scalars_frame(run_col, tags, steps, values), configs, places)


def _events(path: Path, event_type: type, decode_error: type[Exception]):
    """The events of one file, in order (TFRecord framing, checksums not verified)."""
    data = path.read_bytes()
    offset = 0
    while offset + 12 <= len(data):
        (length,) = struct.unpack_from("<Q", data, offset)
        start = offset + 12
        if start + length + 4 > len(data):  # cut short: the writer is still writing
            return
        try:
            yield event_type.FromString(data[start:start + length])
        except decode_error:
            raise ValueError(f"{path}: byte {offset}: not a TensorBoard event record (a damaged file?)") from None
        offset = start + length + 4


def _scalar(value: Any) -> float | None:
    """The number of a summary value that is a scalar (legacy simple_value, or a numeric rank-0
    tensor not of another plugin), else None."""
    kind = value.WhichOneof("value")
    if kind == "simple_value":
        return float(value.simple_value)
    if kind != "tensor":
        return None
    plugin = value.metadata.plugin_data.plugin_name
    tensor = value.tensor
    if (plugin and plugin != _SCALARS_PLUGIN) or tensor.tensor_shape.dim or tensor.dtype not in _DTYPES:
        return None
    if tensor.tensor_content:
        return float(np.frombuffer(tensor.tensor_content, _DTYPES[tensor.dtype])[0])
    for field in (tensor.float_val, tensor.double_val, tensor.int_val, tensor.int64_val):
        if len(field):
            return float(field[0])
    if len(tensor.half_val):
        return float(np.array(tensor.half_val[0], np.uint16).view(np.float16))
    return None


def _hparams(value: Any, plugin_data_pb2: Any) -> dict[str, Any]:
    """The hyperparameters of a HParams plugin session-start summary (others give none)."""
    data = plugin_data_pb2.HParamsPluginData.FromString(value.metadata.plugin_data.content)
    if not data.HasField("session_start_info"):
        return {}
    found = {}
    for name, hp in data.session_start_info.hparams.items():
        kind = hp.WhichOneof("kind")
        found[name] = config_value(getattr(hp, kind)) if kind else None
    return found
