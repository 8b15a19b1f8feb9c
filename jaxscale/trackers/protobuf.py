"""The protocol-buffer wire format, read for many messages at once with numpy.

A message is a sequence of fields, each a key (a varint: field number << 3 | wire type) and a
value: a varint (wire type 0), 8 bytes (1), a varint length and that many bytes (2: strings,
bytes, sub-messages, packed repeated numbers), or 4 bytes (5)
(https://protobuf.dev/programming-guides/encoding/). :func:`fields` lists every field of every
message given: its k-th pass reads the k-th field of each message still being read, so reading a
million small messages costs a few array operations per field position instead of Python per
message. A message it cannot read (a varint longer than ten bytes, a value running past the
message's end, a group or an unknown wire type) is flagged, not guessed at: the caller hands it
to the compiled protobuf parser, which decides whether it parses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5
_MAX_VARINT = 10
_MAX_FIELD = (1 << 29) - 1
_KNOWN_WIRE = np.isin(np.arange(8), (VARINT, FIXED64, LENGTH, FIXED32))


@dataclass(frozen=True)
class Fields:
    """The fields of a set of messages.

    Args:
        message: which message each field belongs to (index into the messages given).
        position: the field's place in its message (0 for the first).
        number: the field number.
        wire: the wire type.
        start: where the value's bytes start (a length-delimited value: its payload, after the length).
        end: where they end (exclusive).
        bad: per message, True where it could not be read (its fields are left out).
    """

    message: np.ndarray
    position: np.ndarray
    number: np.ndarray
    wire: np.ndarray
    start: np.ndarray
    end: np.ndarray
    bad: np.ndarray


def varints(buf: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The varints starting at byte positions ``at`` of ``buf``.

    Returns:
        Their values (uint64), where each ends (exclusive), and True where one runs past ten
        bytes (or past the buffer).
    """
    last = len(buf) - 1
    byte = buf[np.minimum(at, last)]
    value = (byte & 0x7F).astype(np.uint64)
    end = at + 1
    going = np.flatnonzero(byte >= 0x80)  # most varints are one byte: the rest are read byte by byte
    for k in range(1, _MAX_VARINT):
        if not going.size:
            break
        byte = buf[np.minimum(at[going] + k, last)]
        value[going] |= (byte & 0x7F).astype(np.uint64) << np.uint64(7 * k)
        end[going] += 1
        going = going[byte >= 0x80]
    overlong = np.zeros(at.shape, bool)
    overlong[going] = True
    return value, end, overlong | (end > len(buf))


def fields(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> Fields:
    """Every field of the messages ``buf[starts[i]:ends[i]]`` (see :class:`Fields`), in the order
    of their positions (a message's fields are not next to each other)."""
    starts, ends = np.asarray(starts, np.int64), np.asarray(ends, np.int64)
    cursor = starts.copy()
    bad = np.zeros(starts.shape, bool)
    live = np.flatnonzero(cursor < ends)
    found: list[tuple[np.ndarray, ...]] = []
    position = 0
    while live.size:
        key, value_start, broken = varints(buf, cursor[live])
        number, wire = (key >> np.uint64(3)).astype(np.int64), (key & np.uint64(7)).astype(np.int64)
        value_end = value_start.copy()
        value_end[wire == FIXED64] += 8
        value_end[wire == FIXED32] += 4
        for kind in (VARINT, LENGTH):
            which = np.flatnonzero(wire == kind)
            number_or_length, after, overlong = varints(buf, value_start[which])
            broken[which] |= overlong
            if kind == VARINT:
                value_end[which] = after
            else:
                value_start[which] = after
                value_end[which] = after + np.minimum(number_or_length, np.uint64(len(buf))).astype(np.int64)
        broken |= ~_KNOWN_WIRE[wire] | (number < 1) | (number > _MAX_FIELD)
        broken |= value_end > ends[live]
        bad[live[broken]] = True
        ok = ~broken
        found.append((live[ok], np.full(ok.sum(), position), number[ok], wire[ok], value_start[ok], value_end[ok]))
        cursor[live] = value_end
        live = live[ok & (value_end < ends[live])]
        position += 1
    columns = [np.concatenate(parts) for parts in zip(*found)] if found else [np.zeros(0, np.int64)] * 6
    if bad.any():
        keep = ~bad[columns[0]]
        columns = [column[keep] for column in columns]
    return Fields(*columns, bad=bad)


def layout(found: Fields, schema: dict[int, int], n: int,
           repeated: tuple[int, ...] = ()) -> tuple[dict[int, np.ndarray], np.ndarray]:
    """Where each field of ``schema`` (number -> wire type) is in each of ``n`` messages, and
    which messages hold something else.

    Args:
        found: the fields of the messages (:func:`fields`).
        schema: the fields expected, number -> wire type.
        n: how many messages.
        repeated: the numbers of ``schema`` that may occur more than once.

    Returns:
        Field number -> per message the index (into ``found``) of that field (its last occurrence),
        -1 where absent; and per message True where it is bad, holds a field not in ``schema``
        (or of another wire type), or a field of ``schema`` not in ``repeated`` more than once.
    """
    other = found.bad.copy()
    known = np.zeros(len(found.number), bool)
    where = {}
    for number, wire in schema.items():
        index = np.flatnonzero((found.number == number) & (found.wire == wire))
        known[index] = True
        if number not in repeated:
            other |= np.bincount(found.message[index], minlength=n) > 1
        where[number] = np.full(n, -1, np.int64)
        where[number][found.message[index]] = index
    other[found.message[~known]] = True
    return where, other


def fixed(buf: np.ndarray, at: np.ndarray, dtype: str) -> np.ndarray:
    """The little-endian numbers of ``dtype`` (``"<f4"``, ``"<f8"``) at byte positions ``at``."""
    size = np.dtype(dtype).itemsize
    return buf[at[:, None] + np.arange(size)].copy().view(dtype).ravel()


def intern(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, list[bytes]]:
    """The distinct byte strings ``buf[starts[i]:ends[i]]``: a code per string and the strings.

    The strings of each length are read as 8-byte words and told apart word by word (each word's
    code combined with the codes so far), integers throughout."""
    codes = np.zeros(starts.shape, np.int64)
    distinct: list[bytes] = []
    lengths = ends - starts
    for length in np.unique(lengths).tolist():
        which = np.flatnonzero(lengths == length)
        width = -(-length // 8) * 8
        rows = np.zeros((len(which), max(width, 8)), np.uint8)
        rows[:, :length] = buf[starts[which, None] + np.arange(length)]
        words = rows.view(np.uint64)
        first, code = np.unique(words[:, 0], return_index=True, return_inverse=True)[1:]
        for k in range(1, words.shape[1]):
            word_code = np.unique(words[:, k], return_inverse=True)[1]
            first, code = np.unique(code * (word_code.max() + 1) + word_code, return_index=True,
                                    return_inverse=True)[1:]
        codes[which] = len(distinct) + code.ravel()
        distinct.extend(rows[i, :length].tobytes() for i in first)
    return codes, distinct
