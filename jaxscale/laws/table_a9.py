"""Chinchilla model configurations, Hoffmann et al. (2022) Table A9.

The 50 published configurations: total parameters (millions) and d_model. Chinchilla used a
vocabulary of 32,000 tokens and fixed (not learned) position encodings, so the embedding
parameters are N_E = v * d (Pearce & Song Eq. 2 with h = 0). These are published facts embedded
as a constant; ``../shared/data/chinchilla_table_a9_configs.csv`` holds the same numbers and the
test suite checks the two agree.
"""

from __future__ import annotations

import numpy as np

#: Vocabulary size of the Chinchilla tokenizer (Hoffmann et al. 2022, Section 4.1).
VOCAB_SIZE = 32_000

#: (total parameters in millions, d_model) for each row of Table A9.
CONFIGS: tuple[tuple[int, int], ...] = (
    (44, 512), (57, 576), (74, 640), (90, 640), (106, 640), (117, 768), (140, 768),
    (163, 768), (175, 896), (196, 896), (217, 896), (251, 1024), (278, 1024), (306, 1024),
    (425, 1280), (489, 1280), (509, 1408), (552, 1280), (587, 1408), (632, 1536), (664, 1408),
    (724, 1536), (816, 1536), (893, 1792), (1018, 1792), (1143, 1792), (1266, 2048),
    (1424, 2176), (1429, 2048), (1593, 2048), (1609, 2176), (1731, 2304), (1794, 2176),
    (2007, 2304), (2283, 2304), (2298, 2560), (2639, 2560), (2980, 2560), (3530, 2688),
    (3802, 2816), (4084, 2944), (4516, 3072), (6796, 3584), (9293, 4096), (11452, 4352),
    (12295, 4608), (12569, 4608), (13735, 4864), (14494, 4992), (16183, 5120),
)


def total_params() -> np.ndarray:
    """N_T of each configuration (parameters, float64)."""
    return np.array([m for m, _ in CONFIGS], dtype=np.float64) * 1e6


def d_model() -> np.ndarray:
    """d_model of each configuration (float64)."""
    return np.array([d for _, d in CONFIGS], dtype=np.float64)


def embedding_params(vocab_size: int = VOCAB_SIZE, context: int = 0) -> np.ndarray:
    """N_E = (h + v) d, Pearce & Song Eq. 2 (h = 0: Chinchilla's positions are not learned)."""
    return (context + vocab_size) * d_model()


def nonembedding_params(vocab_size: int = VOCAB_SIZE, context: int = 0) -> np.ndarray:
    """N_\\E = N_T - N_E, Pearce & Song Eq. 1."""
    return total_params() - embedding_params(vocab_size, context)


#: How close (relative) a model size must lie to a configuration's N_T to be taken for it.
MATCH_TOLERANCE = 0.01


def nonembedding_of(n_total: np.ndarray, tolerance: float = MATCH_TOLERANCE) -> np.ndarray | None:
    """N_\\E of models of total size ``n_total``, where every one lies within ``tolerance`` (relative)
    of a configuration's N_T: the nearest configuration's N_E = v d subtracted from it (Pearce & Song
    Eq. 1); None where any lies further from every configuration. (Two configurations lie 0.35%
    apart, 1,424M and 1,429M parameters; their embeddings differ by 0.3% of N_\\E.)"""
    n_total = np.asarray(n_total, dtype=np.float64)
    nearest = np.argmin(np.abs(np.log(n_total[:, None] / total_params()[None, :])), axis=1)
    if np.any(np.abs(n_total / total_params()[nearest] - 1.0) > tolerance):
        return None
    return n_total - embedding_params()[nearest]
