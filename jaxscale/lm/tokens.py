"""Token ids stored once on disk as a memory-mapped ``.npy``; deterministic batches from them.

The corpus is encoded once (documents joined by the end-of-text token) and written with
``numpy.lib.format.open_memmap``; later runs map the file instead of re-tokenising. The last
``val_fraction`` of the ids is held out for validation. Training batch ``step`` under ``seed``
is a pure function of (seed, step): windows of ``n_ctx + 1`` ids at offsets drawn by
``numpy.random.default_rng((seed, step))``, so a resumed run sees exactly the batches it would
have seen uninterrupted.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from jaxscale.lm.tokenizer import (
    END_OF_TEXT,
    line_batches,
    load_or_train_tokenizer,
    load_tokenizer,
)


def encode_corpus(
    corpus: str | Path, tokenizer: Tokenizer, out: str | Path, max_chars: int | None = None
) -> Path:
    """Encode ``corpus`` with ``tokenizer`` into the ``.npy`` file ``out`` (uint16 if the
    vocabulary fits, else uint32); written to a temporary name and renamed when complete."""
    out = Path(out)
    eot = tokenizer.token_to_id(END_OF_TEXT)
    chunks = []
    for lines in line_batches(corpus, max_chars):
        for enc in tokenizer.encode_batch(lines):
            chunks.append(np.asarray(enc.ids, np.uint32))
    if eot is not None:
        chunks.append(np.asarray([eot], np.uint32))
    ids = np.concatenate(chunks) if chunks else np.zeros(0, np.uint32)
    if ids.size == 0:
        raise ValueError(f"corpus {corpus} produced no tokens")
    dtype = np.uint16 if tokenizer.get_vocab_size() <= 2**16 else np.uint32
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp.npy")
    array = np.lib.format.open_memmap(tmp, mode="w+", dtype=dtype, shape=ids.shape)
    array[:] = ids
    array.flush()
    del array
    tmp.replace(out)
    return out


def load_or_encode(
    out: str | Path, corpus: str | Path, tokenizer: Tokenizer, max_chars: int | None = None
) -> np.ndarray:
    """The memory-mapped ids at ``out``, encoding ``corpus`` there first if absent."""
    out = Path(out)
    if not out.is_file():
        encode_corpus(corpus, tokenizer, out, max_chars)
    return np.load(out, mmap_mode="r")


@dataclasses.dataclass(frozen=True)
class TokenBatches:
    """Deterministic next-token batches over an id array with a held-out validation tail."""

    ids: np.ndarray
    n_ctx: int
    batch_size: int
    val_fraction: float = 0.01

    def __post_init__(self) -> None:
        if not 0.0 < self.val_fraction < 1.0:
            raise ValueError(f"val_fraction must be in (0, 1); got {self.val_fraction}")
        if self.n_ctx < 1 or self.batch_size < 1:
            raise ValueError(f"n_ctx and batch_size must be >= 1; got {self.n_ctx}, {self.batch_size}")
        if min(self.split, len(self.ids) - self.split) <= self.n_ctx + 1:
            raise ValueError(
                f"{len(self.ids)} tokens are too few for windows of {self.n_ctx + 1} tokens "
                f"in both the training and the validation split (val_fraction={self.val_fraction})"
            )

    @property
    def split(self) -> int:
        """Index of the first validation token."""
        return int(len(self.ids) * (1.0 - self.val_fraction))

    def _windows(self, starts: np.ndarray) -> np.ndarray:
        offsets = starts[:, None] + np.arange(self.n_ctx + 1)[None, :]
        return np.asarray(self.ids[offsets], np.int32)

    def train_starts(self, step: int, seed: int = 0) -> np.ndarray:
        """Offsets of batch ``step``'s windows: uniform over the training split, a function of (seed, step)."""
        rng = np.random.default_rng((seed, step))
        return rng.integers(0, self.split - self.n_ctx - 1, size=self.batch_size)

    def val_starts(self, n_batches: int) -> np.ndarray:
        """Offsets of ``n_batches`` batches of validation windows, evenly spaced over the held-out tail."""
        last = len(self.ids) - self.n_ctx - 1
        return np.linspace(self.split, last, n_batches * self.batch_size).astype(np.int64)

    def train_batch(self, step: int, seed: int = 0) -> np.ndarray:
        """int32 ``(batch_size, n_ctx + 1)`` windows from the training split."""
        return self._windows(self.train_starts(step, seed))

    def val_batches(self, n_batches: int) -> np.ndarray:
        """``(n_batches, batch_size, n_ctx + 1)`` fixed validation windows."""
        return self._windows(self.val_starts(n_batches)).reshape(n_batches, self.batch_size, self.n_ctx + 1)


def prepare_tokens(
    corpus: str | Path,
    directory: str | Path,
    vocab_size: int,
    max_chars: int | None = None,
    tokenizer_file: str | Path | None = None,
) -> tuple[Tokenizer, np.ndarray]:
    """Tokenizer and memory-mapped ids for ``corpus``, cached under ``directory``.

    With ``tokenizer_file`` (e.g. GPT-2's ``tokenizer.json``) that tokenizer is used; otherwise a
    byte-level BPE of ``vocab_size`` is trained on the same ``max_chars`` prefix that is encoded.
    """
    directory = Path(directory)
    if tokenizer_file is not None:
        tokenizer = load_tokenizer(tokenizer_file)
        tag = f"{Path(tokenizer_file).stem}_c{max_chars}"
    else:
        tag = f"bpe{vocab_size}_c{max_chars}"
        tokenizer = load_or_train_tokenizer(directory / f"{tag}.tokenizer.json", corpus, vocab_size, max_chars)
    ids = load_or_encode(directory / f"{tag}.ids.npy", corpus, tokenizer, max_chars)
    return tokenizer, ids
