"""Huffman tree over the vocabulary for the hierarchical softmax (Mikolov 2013b §2.1, Eq. 3).

Frequent words get short codes, so the expected number of inner-node evaluations per word is
about log2(unigram perplexity) (Mikolov 2013a §2.1) instead of log2(V).
"""

from __future__ import annotations

import heapq
from typing import NamedTuple

import numpy as np


class HuffmanTree(NamedTuple):
    """Padded paths from the root to every word.

    ``points[w, j]`` is the j-th inner node on the path to word w (inner nodes are numbered
    0..V-2, the root is V-2); ``codes[w, j]`` is the branch taken there (0 or 1);
    ``lengths[w]`` = L(w) - 1 of Eq. (3), the number of valid entries in the row.
    """

    points: np.ndarray  # (V, max_len) int32
    codes: np.ndarray  # (V, max_len) int8
    lengths: np.ndarray  # (V,) int32


def build_huffman(counts: np.ndarray) -> HuffmanTree:
    """Build the Huffman tree of ``counts`` (one leaf per word, V >= 2 words).

    Ties between equal weights are broken by node creation order, so the tree is deterministic.
    """
    counts = np.asarray(counts, dtype=np.int64)
    v = len(counts)
    if v < 2:
        raise ValueError(f"a Huffman tree needs at least 2 words; got {v}")
    if (counts <= 0).any():
        raise ValueError("Huffman counts must be > 0")
    heap = [(int(c), i) for i, c in enumerate(counts)]
    heapq.heapify(heap)
    parent = np.empty(2 * v - 1, dtype=np.int64)
    branch = np.zeros(2 * v - 1, dtype=np.int8)
    for node in range(v, 2 * v - 1):  # node ids >= v are inner nodes
        c0, a = heapq.heappop(heap)
        c1, b = heapq.heappop(heap)
        parent[a], parent[b] = node, node
        branch[b] = 1
        heapq.heappush(heap, (c0 + c1, node))
    root = 2 * v - 2
    depth = np.zeros(2 * v - 1, dtype=np.int64)
    for node in range(root - 1, -1, -1):  # parents have larger ids than their children
        depth[node] = depth[parent[node]] + 1
    lengths = depth[:v].astype(np.int32)
    max_len = int(lengths.max())
    points = np.zeros((v, max_len), dtype=np.int32)
    codes = np.zeros((v, max_len), dtype=np.int8)
    words = np.arange(v)
    node = words.copy()
    for step in range(max_len):  # walk all words up one level at a time
        live = words[lengths > step]
        slot = lengths[live] - 1 - step
        codes[live, slot] = branch[node[live]]
        node[live] = parent[node[live]]
        points[live, slot] = node[live] - v
    return HuffmanTree(points=points, codes=codes, lengths=lengths)
