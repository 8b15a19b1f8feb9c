"""TensorBoard event directories: one run per directory that holds event files.

A run is a directory under the root with ``*tfevents*`` files (the root itself when the files
lie there); its id is the directory's path relative to the root. Its event files are read in
name order (the writer puts the creation time first, so a resumed run's new file follows the
old one). Scalars are read in both encodings writers use: the legacy ``simple_value`` (PyTorch's
``SummaryWriter``, tensorboardX, TF 1) and the rank-0 tensors of the scalars plugin (TF 2,
``tensorboard.summary``, ``jax``/Flax writers); the run's configuration is the HParams plugin's
session start info when it was logged (``hparams_pb``, ``tf.summary`` hparams,
``SummaryWriter.add_hparams``).

``add_hparams`` of PyTorch's and tensorboardX's ``SummaryWriter`` writes its summaries into a
sub-directory of the run's (named by the time, unless ``run_name`` is given), with the metric
values it was given as scalars at one step. Such a sub-directory (HParams, and scalars at one
step at most, below a directory that is a run) is part of its parent run, not a run: its
hyperparameters are the parent's configuration, and its metric values (the run's summary, not
checkpoints of its curve) are not read.

The records are framed by this module (TFRecord: 8-byte length, 4-byte length CRC, data, 4-byte
data CRC; the checksums are not verified). A record cut short (a run still writing, a copy cut
off) ends its file, and an empty file holds no events: both are named in
:attr:`~jaxscale.trackers.logged.Logged.dropped`.
The scalar events, nearly all of a log, are read from their wire format for all files at once
(:mod:`jaxscale.trackers.protobuf`): an event of exactly the fields a scalar event has (wall time, step,
a summary of values with a tag, a ``simple_value`` or a float tensor of rank 0, plugin metadata)
is read with numpy; every other event (the file version, hparams, histograms, images, an event
the walk cannot read) is parsed by TensorBoard's compiled protobuf classes, and one that does
not parse is an error naming the file and its offset. TensorBoard's own Python loader verifies
each record's checksums in pure Python, and parsing event by event costs microseconds of Python
each: ``benchmarks/bench_readers.py`` times both on a million events.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jaxscale.trackers import protobuf
from jaxscale.trackers.logged import Logged, Reader, config_value, scalars_frame

#: TensorFlow DataType enum values of the numeric rank-0 tensors read as scalars -> numpy dtype.
_DTYPES = {1: np.float32, 2: np.float64, 3: np.int32, 9: np.int64, 19: np.float16}
_HPARAMS_PLUGIN, _SCALARS_PLUGIN = "hparams", "scalars"
_FRAME = struct.Struct("<Q")
_BATCH_BYTES = 1 << 24  # event files read together (bytes: their arrays stay in the caches)

# The fields of a scalar event read from the wire format (tensorboard/compat/proto/*.proto),
# number -> wire type; an event with any other field is parsed by protobuf.
_EVENT = {1: protobuf.FIXED64, 2: protobuf.VARINT, 5: protobuf.LENGTH}  # wall_time, step, summary
_SUMMARY = {1: protobuf.LENGTH}  # value (repeated)
_VALUE = {1: protobuf.LENGTH, 2: protobuf.FIXED32, 8: protobuf.LENGTH, 9: protobuf.LENGTH}  # tag, simple_value, tensor, metadata
_METADATA = {1: protobuf.LENGTH, 4: protobuf.VARINT}  # plugin_data, data_class
_PLUGIN_DATA = {1: protobuf.LENGTH, 2: protobuf.LENGTH}  # plugin_name, content
# dtype, tensor_shape, tensor_content, float_val and double_val (packed)
_TENSOR = {1: protobuf.VARINT, 2: protobuf.LENGTH, 4: protobuf.LENGTH, 5: protobuf.LENGTH, 6: protobuf.LENGTH}
_FLOAT32, _FLOAT64 = 1, 2


def event_files(root: Path) -> dict[str, list[Path]]:
    """Run id -> its event files (name order), for every directory under ``root`` that holds any."""
    runs: dict[str, list[Path]] = {}
    for path in sorted(root.rglob("*tfevents*")):
        if path.is_file():
            rel = path.parent.relative_to(root).as_posix()
            runs.setdefault(root.name if rel == "." else rel, []).append(path)
    return runs


@dataclass(frozen=True)
class _Records:
    """The event records of some files, in one buffer: record i is ``buf[start[i]:end[i]]``, in
    file ``paths[file[i]]`` at byte ``offset[i]`` (its frame)."""

    buf: np.ndarray
    start: np.ndarray
    end: np.ndarray
    file: np.ndarray
    offset: np.ndarray
    paths: list[Path]


@dataclass(frozen=True)
class _Rows:
    """Scalars read from records: the record and the value's place in its summary (their order),
    the tag (a code into ``tag_names``), the step and the value."""

    record: np.ndarray
    order: np.ndarray
    tag: np.ndarray
    tag_names: list[str]
    step: np.ndarray
    value: np.ndarray


def read_tensorboard(root: str | Path) -> Logged:
    """Every run's scalars and hyperparameters under the TensorBoard log directory ``root``
    (``add_hparams`` sub-directories merged into their runs: module docstring).

    Raises:
        ValueError: no event file under ``root``, or a record that is not an event (naming the
            file and the byte offset).
    """
    root = Path(root)
    runs = event_files(root)
    if not runs:
        raise ValueError(f"{root}: no TensorBoard event files (*tfevents*) under this directory")
    names = list(runs)
    run_of = {path: i for i, paths in enumerate(runs.values()) for path in paths}
    configs: dict[str, dict[str, Any]] = {}
    tag_names: dict[str, int] = {}
    dropped: list[str] = []
    columns = [_read_batch(batch, [run_of[path] for path in batch], names, tag_names, configs, dropped)
               for batch in _batches(list(run_of))]
    run, tag, step, value = (np.concatenate(column) for column in zip(*columns))
    directories = [paths[0].parent.relative_to(root) for paths in runs.values()]
    parents = _hparams_parents(directories, configs, names, run, step)
    kept = [i for i in range(len(names)) if i not in parents]
    rows = np.isin(run, kept)
    kept_names = [names[i] for i in kept]
    scalars = scalars_frame(pd.Categorical.from_codes(np.searchsorted(kept, run[rows]), categories=kept_names),
                            pd.Categorical.from_codes(tag[rows], categories=list(tag_names)), step[rows], value[rows])
    places = {name: str(runs[name][0].parent) for name in kept_names}
    return Logged("tensorboard", str(root), scalars, _merged_configs(configs, names, parents), places, tuple(dropped))


def _merged_configs(configs: dict[str, dict[str, Any]], names: list[str],
                    parents: dict[int, int]) -> dict[str, dict[str, Any]]:
    """Every run's configuration (empty where it logged none), each ``add_hparams`` sub-directory's
    (``parents``: its index -> its run's, into ``names``) merged into its run's in name order."""
    merged = {name: dict(configs.get(name, {})) for i, name in enumerate(names) if i not in parents}
    for child, into in parents.items():
        merged[names[into]].update(configs[names[child]])
    return merged


def _hparams_parents(directories: list[Path], configs: dict[str, dict[str, Any]], names: list[str],
                     run: np.ndarray, step: np.ndarray) -> dict[int, int]:
    """The ``add_hparams`` sub-directories among the runs -> their parent run (indices into
    ``names``, whose directories under the root are ``directories``): a run with HParams and
    scalars (``run`` codes, ``step``) at one step at most, in a directory whose parent is a run."""
    index = {directory: i for i, directory in enumerate(directories)}
    candidates = {i: index[directory.parent] for i, directory in enumerate(directories)
                  if names[i] in configs and index.get(directory.parent, i) != i}
    if not candidates:
        return {}
    rows = np.isin(run, list(candidates))
    pairs = np.unique(np.stack([run[rows].astype(np.float64), step[rows]]), axis=1)  # each (run, step) once
    steps_per_run = np.bincount(pairs[0].astype(np.int64), minlength=len(names))
    return {i: into for i, into in candidates.items() if steps_per_run[i] <= 1}


def _read_batch(paths: list[Path], file_runs: list[int], names: list[str], tag_names: dict[str, int],
                configs: dict[str, dict[str, Any]], dropped: list[str]) -> tuple[np.ndarray, ...]:
    """The scalars of the event files ``paths`` (of the runs ``file_runs``, indices into ``names``)
    in logged order: run code, tag code (into ``tag_names``, which grows), step and value; the
    HParams configurations go into ``configs``, what could not be read into ``dropped``."""
    records = _read_records(paths, dropped)
    fast, hard = _wire_scalars(records.buf, records.start, records.end)
    slow = _parsed_scalars(records, np.flatnonzero(hard), [names[run] for run in file_runs], configs)
    parts = (fast, slow)
    record = np.concatenate([part.record for part in parts])
    order = np.lexsort((np.concatenate([part.order for part in parts]), record))
    run = np.asarray(file_runs, np.int64)[records.file[record]]
    tag = np.concatenate([_recode(part.tag, part.tag_names, tag_names) for part in parts])
    step, value = (np.concatenate([getattr(part, name) for part in parts]) for name in ("step", "value"))
    return run[order], tag[order], step[order], value[order]


def _recode(codes: np.ndarray, names: list[str], into: dict[str, int]) -> np.ndarray:
    """``codes`` into ``names`` as codes into ``into`` (names not there yet are added)."""
    lookup = np.array([into.setdefault(name, len(into)) for name in names], np.int64)
    return lookup[codes] if len(codes) else np.zeros(0, np.int64)


def _batches(paths: list[Path]) -> Iterator[list[Path]]:
    """The files in order, in groups of about :data:`_BATCH_BYTES` (read together)."""
    batch: list[Path] = []
    size = 0
    for path in paths:
        batch.append(path)
        size += path.stat().st_size
        if size >= _BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _read_records(paths: list[Path], dropped: list[str]) -> _Records:
    """The records of the event files ``paths``, framed, in one buffer; an empty file, or the
    bytes after a record cut short, are named in ``dropped``."""
    chunks, offsets, lengths, files, bases = [], [], [], [], []
    base = 0
    for i, path in enumerate(paths):
        data = path.read_bytes()
        offset, length, end = _frames(data)
        if not data:
            dropped.append(f"{path}: an empty event file (0 bytes), no events read")
        elif end < len(data):
            dropped.append(f"{path}: cut short at byte {end} of {len(data)} (a record the writer had not finished, "
                           f"or a copy cut off): {len(offset)} records read, the last {len(data) - end} bytes not")
        chunks.append(data)
        offsets.append(offset)
        lengths.append(length)
        files.append(np.full(len(offset), i, np.int64))
        bases.append(np.full(len(offset), base, np.int64))
        base += len(data)
    offset = np.concatenate(offsets)
    start = np.concatenate(bases) + offset + 12
    return _Records(np.frombuffer(b"".join(chunks), np.uint8), start, start + np.concatenate(lengths),
                    np.concatenate(files), offset, paths)


def _frames(data: bytes) -> tuple[np.ndarray, np.ndarray, int]:
    """Each record's offset (of its frame) and data length in a TFRecord file: 8-byte length,
    4-byte length CRC, data, 4-byte data CRC; and where the whole records end (a record cut
    short, the writer still writing, ends the file).

    Consecutive records of one length (a scalar logged step after step) are found together: the
    lengths one frame apart are read as one strided array, as many at a time as were equal before.
    """
    firsts, lengths, counts = [], [], []
    offset, size = 0, len(data)
    while offset + 12 <= size:
        (length,) = _FRAME.unpack_from(data, offset)
        stride = 16 + length
        if offset + stride > size:
            break
        count, window = 1, 64
        while True:
            after = offset + count * stride
            fits = min((size - after) // stride, window)
            if not fits or _FRAME.unpack_from(data, after)[0] != length:
                break
            equal = np.ndarray((fits,), "<u8", data, after, (stride,)) == length
            run = fits if equal.all() else int(np.argmin(equal))
            count += run
            if run < fits:
                break
            window *= 2
        firsts.append(offset)
        lengths.append(length)
        counts.append(count)
        offset += count * stride
    counts_ = np.asarray(counts, np.int64)
    strides = np.repeat(np.asarray(lengths, np.int64) + 16, counts_)
    index = np.arange(counts_.sum()) - np.repeat(np.cumsum(counts_) - counts_, counts_)
    return np.repeat(np.asarray(firsts, np.int64), counts_) + index * strides, strides - 16, offset


def _nested(buf: np.ndarray, found: protobuf.Fields, index: np.ndarray, schema: dict[int, int],
            repeated: tuple[int, ...] = ()) -> tuple[protobuf.Fields, dict[int, np.ndarray], np.ndarray]:
    """The sub-messages ``found[index]`` (one per parent; -1: none): their fields, where each
    field of ``schema`` is per parent (-1: absent), and which parents' sub-message holds more
    (:func:`jaxscale.trackers.protobuf.layout`)."""
    have = np.flatnonzero(index >= 0)
    child = protobuf.fields(buf, found.start[index[have]], found.end[index[have]])
    where, other = protobuf.layout(child, schema, len(have), repeated)
    per_parent = {number: np.full(len(index), -1, np.int64) for number in schema}
    for number, at in where.items():
        per_parent[number][have] = at
    hard = np.zeros(len(index), bool)
    hard[have] = other
    return child, per_parent, hard


def _span(found: protobuf.Fields, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The bytes of the fields ``found[index]``, empty where absent (-1)."""
    start, end = np.zeros(len(index), np.int64), np.zeros(len(index), np.int64)
    have = index >= 0
    start[have], end[have] = found.start[index[have]], found.end[index[have]]
    return start, end


def _texts(buf: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, list[str | None]]:
    """The strings ``buf[start:end]``: a code per string and the distinct texts (None: not UTF-8)."""
    codes, distinct = protobuf.intern(buf, start, end)
    texts: list[str | None] = []
    for raw in distinct:
        try:
            texts.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            texts.append(None)
    return codes, texts


def _wire_scalars(buf: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[_Rows, np.ndarray]:
    """The scalars of the events ``buf[start:end]`` that are read from their wire format, and
    which events are left to the protobuf parser (module docstring)."""
    n = len(start)
    found = protobuf.fields(buf, start, end)
    event, hard = protobuf.layout(found, _EVENT, n)
    step = np.zeros(n, np.int64)
    has_step = np.flatnonzero(event[2] >= 0)
    step[has_step] = protobuf.varints(buf, found.start[event[2][has_step]])[0].view(np.int64)
    summary, _, summary_hard = _nested(buf, found, event[5], _SUMMARY, repeated=(1,))
    hard |= summary_hard
    is_value = (summary.number == 1) & (summary.wire == protobuf.LENGTH)
    owner = np.flatnonzero(event[5] >= 0)[summary.message[is_value]]
    value_start, value_end = summary.start[is_value], summary.end[is_value]
    order = summary.position[is_value]  # the value's place in its summary
    values = protobuf.fields(buf, value_start, value_end)
    value, value_hard = protobuf.layout(values, _VALUE, len(owner))
    value_hard |= (value[2] >= 0) & (value[8] >= 0)  # both members of the oneof: the parser decides
    metadata, plugin_data, metadata_hard = _nested(buf, values, value[9], _METADATA)
    plugin, plugin_name, plugin_hard = _nested(buf, metadata, plugin_data[1], _PLUGIN_DATA)
    tensor_fields, tensor, tensor_hard = _nested(buf, values, value[8], _TENSOR)
    value_hard |= metadata_hard | plugin_hard | tensor_hard
    name_codes, name_texts = _texts(buf, *_span(plugin, plugin_name[1]))
    tag_codes, tag_texts = _texts(buf, *_span(values, value[1]))
    value_hard |= np.isin(name_codes, [i for i, t in enumerate(name_texts) if t in (None, _HPARAMS_PLUGIN)])
    value_hard |= np.isin(tag_codes, [i for i, t in enumerate(tag_texts) if t is None])
    scalar_plugin = np.isin(name_codes, [i for i, t in enumerate(name_texts) if t in ("", _SCALARS_PLUGIN)])
    is_tensor = (value[8] >= 0) & scalar_plugin
    number, tensor_ok = _tensor_numbers(buf, tensor_fields, {k: v[is_tensor] for k, v in tensor.items()})
    value_hard[is_tensor] |= ~tensor_ok
    hard[owner[value_hard]] = True
    scalar = np.zeros(len(owner), np.float64)
    simple = value[2] >= 0
    scalar[simple] = protobuf.fixed(buf, values.start[value[2][simple]], "<f4")
    scalar[is_tensor] = number
    keep = (simple | is_tensor) & ~hard[owner]
    tags = [t if t is not None else "" for t in tag_texts]
    rows = _Rows(owner[keep], order[keep], tag_codes[keep], tags, step[owner[keep]].astype(np.float64), scalar[keep])
    return rows, hard


def _tensor_numbers(buf: np.ndarray, found: protobuf.Fields, tensor: dict[int, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The numbers of rank-0 float tensors (their fields ``found[tensor[k]]``) and which were read
    (a tensor of another dtype or shape, or holding its number another way, is left to the parser)."""
    dtype = np.zeros(len(tensor[1]), np.int64)
    has_dtype = tensor[1] >= 0
    dtype[has_dtype] = protobuf.varints(buf, found.start[tensor[1][has_dtype]])[0].astype(np.int64)
    shape_start, shape_end = _span(found, tensor[2])
    ok = (shape_end == shape_start) & np.isin(dtype, (_FLOAT32, _FLOAT64))
    ok &= ((tensor[4] >= 0).astype(int) + (tensor[5] >= 0) + (tensor[6] >= 0)) == 1
    number = np.zeros(len(dtype), np.float64)
    for field, size in ((4, np.where(dtype == _FLOAT32, 4, 8)), (5, 4), (6, 8)):
        start, end = _span(found, tensor[field])
        here = (tensor[field] >= 0) & ok
        ok &= ~here | (((end - start) % size == 0) & (end - start >= size))
        for width, kind in ((4, "<f4"), (8, "<f8")):
            read = here & ok & (np.broadcast_to(size, here.shape) == width)
            number[read] = protobuf.fixed(buf, start[read], kind)
    return number, ok


def _parsed_scalars(records: _Records, which: np.ndarray, runs: list[str],
                    configs: dict[str, dict[str, Any]]) -> _Rows:
    """The scalars of the records ``which``, parsed by protobuf; HParams configurations go into
    ``configs`` (``runs``: each file's run)."""
    from google.protobuf.message import DecodeError
    from tensorboard.compat.proto import event_pb2
    from tensorboard.plugins.hparams import plugin_data_pb2

    record, order, tags, steps, values = [], [], [], [], []
    for i in which.tolist():
        try:
            event = event_pb2.Event.FromString(records.buf[records.start[i]:records.end[i]].tobytes())
        except DecodeError:
            raise ValueError(f"{records.paths[records.file[i]]}: byte {records.offset[i]}: not a TensorBoard event "
                             "record (a damaged file?)") from None
        if not event.HasField("summary"):
            continue
        for place, value in enumerate(event.summary.value):
            number = _scalar(value)
            if number is not None:
                record.append(i)
                order.append(place)
                tags.append(value.tag)
                steps.append(event.step)
                values.append(number)
            elif value.metadata.plugin_data.plugin_name == _HPARAMS_PLUGIN:
                configs.setdefault(runs[records.file[i]], {}).update(_hparams(value, plugin_data_pb2))
    names = list(dict.fromkeys(tags))
    code = {name: k for k, name in enumerate(names)}
    return _Rows(np.asarray(record, np.int64), np.asarray(order, np.int64),
                 np.asarray([code[t] for t in tags], np.int64), names, np.asarray(steps, np.float64),
                 np.asarray(values, np.float64))


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


def _holds_event_files(path: Path) -> bool:
    return next(path.rglob("*tfevents*"), None) is not None


def _event_file_given(path: Path) -> bool:
    """False; an event file given alone is refused, naming what to give instead."""
    if "tfevents" in path.name:
        raise ValueError(f"{path}: a TensorBoard event file; give the log directory that holds the runs")
    return False


READER = Reader("tensorboard", read_tensorboard, "TensorBoard event files", claims_file=_event_file_given,
                claims_directory=_holds_event_files, modules=("tensorboard",))
