"""The TensorBoard reader against events of every encoding, written by TensorBoard's own protobuf
classes and writer: the scalars read are the numbers put in, in the order logged, whether an
event is read from its wire format or handed to the protobuf parser."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from jaxscale.trackers import protobuf
from jaxscale.trackers.tensorboard import read_tensorboard

pytest.importorskip("tensorboard")


def _value(tag, **kind):
    from tensorboard.compat.proto import summary_pb2

    return summary_pb2.Summary.Value(tag=tag, **kind)


def _tensor(dtype, shape=(), plugin="scalars", **fields):
    from tensorboard.compat.proto import summary_pb2, tensor_pb2, tensor_shape_pb2

    shape_pb = tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=s) for s in shape])
    metadata = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name=plugin))
    return {"tensor": tensor_pb2.TensorProto(dtype=dtype, tensor_shape=shape_pb, **fields), "metadata": metadata}


def _f32(x):
    return float(np.float32(x))


def _events():
    """(event, [(tag, value)] it holds as scalars) of every kind a log holds."""
    from tensorboard.compat.proto import event_pb2, summary_pb2

    long_tags = [("validation/loss_a", 1.0), ("validation/loss_b", 2.0), ("xalidation/loss_a", 3.0)]
    cases = [
        ([_value("loss", simple_value=3.25)], [("loss", 3.25)]),  # step 0: not on the wire
        ([_value("loss", simple_value=float("nan"))], [("loss", float("nan"))]),
        ([_value("a", simple_value=1.5), _value("b", simple_value=2.5), _value("a", simple_value=0.1)],
         [("a", 1.5), ("b", 2.5), ("a", _f32(0.1))]),
        ([_value("val/λ", **_tensor(1, float_val=[0.3]))], [("val/λ", _f32(0.3))]),
        ([_value(t, simple_value=v) for t, v in long_tags], long_tags),  # tags of one length, apart by one byte
        ([_value("d", **_tensor(2, plugin="", double_val=[0.1]))], [("d", 0.1)]),
        ([_value("c", **_tensor(2, tensor_content=np.float64(0.7).tobytes()))], [("c", 0.7)]),
        ([_value("c32", **_tensor(1, tensor_content=np.float32(0.7).tobytes()))], [("c32", _f32(0.7))]),
        ([_value("i", **_tensor(9, int64_val=[7]))], [("i", 7.0)]),
        ([_value("h", **_tensor(19, half_val=[int(np.float16(1.5).view(np.uint16))]))], [("h", 1.5)]),
        ([_value("hist", **_tensor(2, shape=(3,), plugin="histograms", double_val=[1, 2, 3])),
          _value("x", simple_value=4.0)], [("x", 4.0)]),
        ([_value("old", histo=summary_pb2.HistogramProto(min=0, max=1)), _value("y", simple_value=5.0)],
         [("y", 5.0)]),
        ([_value("text", **_tensor(2, plugin="text", double_val=[9.0]))], []),
        ([], []),
    ]
    steps = [0, 1, 2, 3, 4, 2**40, -5, 7, 8, 9, 10, 11, 12, 13]
    events = [event_pb2.Event(file_version="brain.Event:2")]
    events += [event_pb2.Event(wall_time=1.0 + s, step=s, summary=summary_pb2.Summary(value=values))
               for (values, _), s in zip(cases, steps)]
    events.append(event_pb2.Event(step=14, log_message=event_pb2.LogMessage(message="note")))
    expected = [(tag, float(step), value) for (_, scalars), step in zip(cases, steps) for tag, value in scalars]
    return events, expected


def _write(directory, events):
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writer = EventFileWriter(str(directory))
    for event in events:
        writer.add_event(event)
    writer.close()
    return next(directory.glob("*tfevents*"))


def _rows(logged):
    return list(zip(logged.scalars["tag"].astype(str), logged.scalars["step"], logged.scalars["value"]))


def _same(rows, expected):
    assert len(rows) == len(expected)
    for (tag, step, value), (tag_in, step_in, value_in) in zip(rows, expected):
        assert (tag, step) == (tag_in, step_in) and (value == value_in or np.isnan(value) and np.isnan(value_in))


def test_every_encoding_reads_the_numbers_logged_in_order(tmp_path):
    events, expected = _events()
    _write(tmp_path / "run", events * 3)  # many scalar events: most read from the wire format
    logged = read_tensorboard(tmp_path)
    _same(_rows(logged), expected * 3)
    assert set(logged.scalars["run_id"].astype(str)) == {"run"}


def test_a_record_cut_short_ends_the_file(tmp_path):
    events, expected = _events()
    path = _write(tmp_path / "run", events)
    data = path.read_bytes()
    path.write_bytes(data + data[:30])  # the start of a record still being written
    logged = read_tensorboard(tmp_path)
    _same(_rows(logged), expected)
    records = len(events) + 1  # and the writer's own file_version event
    assert logged.dropped == (f"{path}: cut short at byte {len(data)} of {len(data) + 30} (a record the writer had not "
                              f"finished, or a copy cut off): {records} records read, the last 30 bytes not",)


def test_a_tag_that_is_not_utf8_names_the_file_and_offset(tmp_path):
    from tensorboard.compat.proto import event_pb2, summary_pb2

    good = event_pb2.Event(step=1, summary=summary_pb2.Summary(value=[_value("loss", simple_value=1.0)]))
    first = good.SerializeToString()
    bad = first.replace(b"loss", b"\xff\xfe\xfd\xfc")
    records = b"".join(struct.pack("<Q", len(r)) + b"\0" * 4 + r + b"\0" * 4 for r in (first, bad))
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "events.out.tfevents.1").write_bytes(records)
    with pytest.raises(ValueError, match=rf"tfevents.1: byte {16 + len(first)}: not a TensorBoard event record"):
        read_tensorboard(tmp_path)


def test_fields_of_many_messages_read_as_protobuf_writes_them():
    from tensorboard.compat.proto import event_pb2

    messages = [event_pb2.Event(wall_time=0.5, step=s, file_version="v").SerializeToString()
                for s in (0, 1, 300, 2**40, -1)]
    buf = np.frombuffer(b"".join(messages), np.uint8)
    ends = np.cumsum([len(m) for m in messages])
    found = protobuf.fields(buf, ends - [len(m) for m in messages], ends)
    where, other = protobuf.layout(found, {1: protobuf.FIXED64, 2: protobuf.VARINT, 3: protobuf.LENGTH}, len(messages))
    assert not other.any() and (where[2] >= 0).tolist() == [False, True, True, True, True]
    steps = protobuf.varints(buf, found.start[where[2][1:]])[0].view(np.int64)
    assert steps.tolist() == [1, 300, 2**40, -1]
    assert protobuf.fixed(buf, found.start[where[1]], "<f8").tolist() == [0.5] * 5
    broken = protobuf.fields(buf, [0], [len(messages[0]) - 1])  # the last field runs past the end
    assert broken.bad.tolist() == [True]
