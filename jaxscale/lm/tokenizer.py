"""Byte-level BPE tokenizers (HF ``tokenizers``): train one on a corpus, or load a user's file.

Byte-level BPE (Radford et al. 2019, GPT-2) starts from the 256 bytes, so every string encodes
and decodes back exactly; merges learned on the corpus grow the vocabulary to ``vocab_size``.
A tokenizer is stored as one ``tokenizer.json`` (the HF format), so GPT-2's own file is accepted.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from jaxscale.support.corpus import iter_lines

END_OF_TEXT = "<|endoftext|>"
MIN_VOCAB = 257  # the 256 byte symbols plus the end-of-text token


def line_batches(path: str | Path, max_chars: int | None, size: int = 1000) -> Iterator[list[str]]:
    """Lines of ``path`` (newline kept) in lists of ``size``, stopping after ``max_chars`` characters."""
    batch: list[str] = []
    seen = 0
    for line in iter_lines(path):
        if max_chars is not None and seen >= max_chars:
            break
        seen += len(line) + 1
        batch.append(line + "\n")
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def train_tokenizer(corpus: str | Path, vocab_size: int, max_chars: int | None = None) -> Tokenizer:
    """Train a byte-level BPE tokenizer with ``vocab_size`` entries on (a prefix of) ``corpus``."""
    if not isinstance(vocab_size, int) or vocab_size < MIN_VOCAB:
        raise ValueError(f"vocab_size must be an integer >= {MIN_VOCAB}; got {vocab_size!r}")
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[END_OF_TEXT],
        show_progress=False,
    )
    tokenizer.train_from_iterator(line_batches(corpus, max_chars), trainer=trainer)
    return tokenizer


def load_tokenizer(path: str | Path) -> Tokenizer:
    """Load a ``tokenizer.json`` (ours, or a user's such as GPT-2's)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"tokenizer file not found: {path}")
    try:
        return Tokenizer.from_file(str(path))
    except Exception as err:  # tokenizers raises its own exception type for malformed files
        raise ValueError(f"{path} is not a valid tokenizer.json: {err}") from None


def load_or_train_tokenizer(
    path: str | Path, corpus: str | Path, vocab_size: int, max_chars: int | None = None
) -> Tokenizer:
    """The tokenizer saved at ``path``; trained on ``corpus`` and saved there first if absent."""
    path = Path(path)
    if path.is_file():
        return load_tokenizer(path)
    tokenizer = train_tokenizer(corpus, vocab_size, max_chars)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tokenizer.save(str(tmp))
    tmp.replace(path)
    return tokenizer
