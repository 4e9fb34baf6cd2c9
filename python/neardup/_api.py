"""The Python-level parts of neardup's API: fingerprint() and its result
type, and pairs() / clusters() / dedup(), which shape the engine's answers
(document numbers) into the caller's ids."""

from __future__ import annotations

from typing import Any, Hashable, Iterable, List, NamedTuple, Optional

import numpy as np

from . import _neardup

__all__ = ["Fingerprints", "Pair", "fingerprint", "pairs", "clusters", "dedup"]


class Fingerprints:
    """The fingerprints of a batch of documents, as flat numpy arrays.

    Attributes (None when not asked for):
      ids: the ids of (id, text) inputs, else None (documents are numbered).
      recipe_id: the id of the recipe that made them.
      simhash: uint64 [n], or [n, 2] (high, low) for a 128-bit recipe.
      minhash: uint64 [n, k], bottom-k values ascending; row i holds
        minhash_sizes[i] values (fewer than k for short documents), then
        2**64 - 1 padding that carries no meaning.
      minhash_sizes: uint32 [n].
      kminhash: uint64 [n, k], one-permutation k-value sketches (for LSH);
        a row with kminhash_empty[i] set holds no meaning.
      kminhash_empty: bool [n].
      chunk_values, chunk_offsets: the sorted chunk ids of document i are
        chunk_values[chunk_offsets[i]:chunk_offsets[i + 1]] (see chunks(i)).
      num_tokens: uint64 [n]; 0 means no features (similar to nothing).
      invalid_utf8_sequences: uint64 [n] (always 0 for str input).
    """

    __slots__ = (
        "ids", "recipe_id", "simhash", "minhash", "minhash_sizes", "kminhash",
        "kminhash_empty", "chunk_values", "chunk_offsets", "num_tokens",
        "invalid_utf8_sequences",
    )

    def __init__(self, fields: dict) -> None:
        for name in self.__slots__:
            setattr(self, name, fields[name])

    def __len__(self) -> int:
        return len(self.num_tokens)

    def chunks(self, i: int) -> np.ndarray:
        """The sorted chunk ids of document i (a view, not a copy)."""
        if self.chunk_values is None:
            raise ValueError("fingerprint() was called without chunks=True")
        return self.chunk_values[self.chunk_offsets[i]:self.chunk_offsets[i + 1]]

    def __repr__(self) -> str:
        kinds = [n for n in ("simhash", "minhash", "kminhash", "chunk_values")
                 if getattr(self, n) is not None]
        return f"Fingerprints(n={len(self)}, recipe_id='{self.recipe_id}', sketches={kinds})"

    def __getstate__(self):
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state):
        for name in self.__slots__:
            setattr(self, name, state[name])


def fingerprint(documents: Iterable[Any], simhash: bool = True, minhash: bool = True,
                chunks: bool = False, recipe: Optional[_neardup.Recipe] = None,
                threads: int = 0, kminhash: bool = False) -> Fingerprints:
    """Fingerprints every document of `documents`.

    documents: any iterable of str (or UTF-8 bytes), or of (id, text) pairs.
    simhash / minhash (bottom-k) / kminhash (k-value, for LSH) / chunks:
    which sketches to compute; each costs time. recipe: a neardup.Recipe
    (None: the 'default' preset). threads: worker threads (0: all cores).

    The texts are read in place (no copy per document); the GIL is released
    while the fingerprints are computed, so other Python threads run.
    Raises TypeError for an item that is not text (None included),
    UnicodeError (a ValueError) for bytes that are not UTF-8.
    """
    return Fingerprints(_neardup._fingerprint(documents, simhash, minhash, kminhash, chunks,
                                              recipe, threads))


class Pair(NamedTuple):
    """Two near-duplicate documents: a comes before b in input order."""
    a: Hashable
    b: Hashable
    similarity: float
    # The Hamming distance for method='simhash'; None for 'minhash'.
    distance: Optional[int]


def _run(documents, method, threshold, max_distance, num_blocks, verify, fp_weight, fn_weight,
         rule, keep, recipe, threads):
    return _neardup._near_duplicates(documents, method, threshold, max_distance, num_blocks,
                                     verify or "", fp_weight, fn_weight, rule, keep, recipe,
                                     threads)


def pairs(documents: Iterable[Any], threshold: float = 0.8, method: str = "minhash", *,
          max_distance: int = 3, num_blocks: int = 0, verify: Optional[str] = None,
          fp_weight: float = 0.05, fn_weight: float = 0.95,
          recipe: Optional[_neardup.Recipe] = None, threads: int = 0) -> List[Pair]:
    """Every verified near-duplicate pair, each once, sorted by (a, b) in input order.

    The same pairs as `neardup pairs` on the same texts. method 'minhash':
    Jaccard of word 5-shingles >= threshold (LSH candidates, verified exactly
    unless verify='sketch'); method 'simhash': Hamming distance of the 64-bit
    SimHash <= max_distance. Ids are those of (id, text) inputs, else the
    documents' numbers.
    """
    out = _run(documents, method, threshold, max_distance, num_blocks, verify, fp_weight,
               fn_weight, "leader", "first", recipe, threads)
    ids = out["ids"]
    return [Pair(ids[a], ids[b], similarity, distance)
            for a, b, similarity, distance in out["pairs"]]


def clusters(documents: Iterable[Any], threshold: float = 0.8, method: str = "minhash", *,
             rule: str = "leader", max_distance: int = 3, num_blocks: int = 0,
             verify: Optional[str] = None, fp_weight: float = 0.05, fn_weight: float = 0.95,
             recipe: Optional[_neardup.Recipe] = None, threads: int = 0) -> List[List[Hashable]]:
    """Groups of two or more near-duplicates, as lists of ids in input order,
    ordered by their first member: the clusters of `neardup clusters`.

    rule 'leader': each document joins the first earlier document it is
    similar to that leads a cluster (no chains); 'components': transitive
    closure of the pairs.
    """
    out = _run(documents, method, threshold, max_distance, num_blocks, verify, fp_weight,
               fn_weight, rule, "first", recipe, threads)
    ids = out["ids"]
    members: dict = {}
    for doc, cluster in enumerate(out["cluster_of"].tolist()):
        members.setdefault(cluster, []).append(ids[doc])
    return [group for _, group in sorted(members.items()) if len(group) >= 2]


def dedup(documents: Iterable[Any], threshold: float = 0.8, method: str = "minhash", *,
          rule: str = "leader", keep: str = "first", max_distance: int = 3,
          num_blocks: int = 0, verify: Optional[str] = None, fp_weight: float = 0.05,
          fn_weight: float = 0.95, recipe: Optional[_neardup.Recipe] = None,
          threads: int = 0) -> List[Hashable]:
    """The ids of the documents kept, in input order: one per cluster (the
    first, or the 'longest' / 'shortest' in UTF-8 bytes, ties to the earlier)
    and every document without a near-duplicate: what `neardup dedup` keeps.
    """
    out = _run(documents, method, threshold, max_distance, num_blocks, verify, fp_weight,
               fn_weight, rule, keep, recipe, threads)
    ids = out["ids"]
    return [ids[i] for i in np.flatnonzero(out["keep"]).tolist()]
