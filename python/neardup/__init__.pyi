"""Type stubs of the neardup package."""

from typing import Any, Hashable, Iterable, List, NamedTuple, Optional

import numpy as np
import numpy.typing as npt

from ._neardup import (
    Collection as Collection,
    Corpus as Corpus,
    Error as Error,
    InvalidArgumentError as InvalidArgumentError,
    MinHash as MinHash,
    MinHashLSH as MinHashLSH,
    Recipe as Recipe,
    StorageError as StorageError,
    Stream as Stream,
    find_all as find_all,
    num_differing_bits as num_differing_bits,
    simhash as simhash,
)

class Fingerprints:
    ids: Optional[List[Hashable]]
    recipe_id: str
    simhash: Optional[npt.NDArray[np.uint64]]
    minhash: Optional[npt.NDArray[np.uint64]]
    minhash_sizes: Optional[npt.NDArray[np.uint32]]
    kminhash: Optional[npt.NDArray[np.uint64]]
    kminhash_empty: Optional[npt.NDArray[np.bool_]]
    chunk_values: Optional[npt.NDArray[np.uint32]]
    chunk_offsets: Optional[npt.NDArray[np.uint64]]
    num_tokens: npt.NDArray[np.uint64]
    invalid_utf8_sequences: npt.NDArray[np.uint64]
    def __len__(self) -> int: ...
    def chunks(self, i: int) -> npt.NDArray[np.uint32]: ...

class Pair(NamedTuple):
    a: Hashable
    b: Hashable
    similarity: float
    distance: Optional[int]

def fingerprint(documents: Iterable[Any], simhash: bool = True, minhash: bool = True,
                chunks: bool = False, recipe: Optional[Recipe] = None, threads: int = 0,
                kminhash: bool = False) -> Fingerprints: ...
def pairs(documents: Iterable[Any], threshold: float = 0.8, method: str = "minhash", *,
          max_distance: int = 3, num_blocks: int = 0, verify: Optional[str] = None,
          fp_weight: float = 0.05, fn_weight: float = 0.95, recipe: Optional[Recipe] = None,
          threads: int = 0) -> List[Pair]: ...
def clusters(documents: Iterable[Any], threshold: float = 0.8, method: str = "minhash", *,
             rule: str = "leader", max_distance: int = 3, num_blocks: int = 0,
             verify: Optional[str] = None, fp_weight: float = 0.05, fn_weight: float = 0.95,
             recipe: Optional[Recipe] = None, threads: int = 0) -> List[List[Hashable]]: ...
def dedup(documents: Iterable[Any], threshold: float = 0.8, method: str = "minhash", *,
          rule: str = "leader", keep: str = "first", max_distance: int = 3,
          num_blocks: int = 0, verify: Optional[str] = None, fp_weight: float = 0.05,
          fn_weight: float = 0.95, recipe: Optional[Recipe] = None,
          threads: int = 0) -> List[Hashable]: ...
