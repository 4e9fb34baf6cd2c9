"""neardup: near-duplicate detection with SimHash, MinHash and LSH.

The C++ engine from Python:
- Recipe, simhash(), fingerprint(): versioned fingerprints as numpy arrays.
- Corpus, num_differing_bits(), find_all(): the simhash package's API.
- MinHash, MinHashLSH: datasketch's API (another hash family: docs/PYTHON.md).
- pairs(), clusters(), dedup(): the CLI's answers as Python objects.
- Collection: a persistent archive for containment search (query, similar).
- Stream: `neardup serve`'s near-duplicate stream (window, durable), without HTTP.
Errors: neardup.Error and its subclasses InvalidArgumentError (a ValueError)
and StorageError (an OSError), carrying the library's message.
"""

from ._neardup import (
    Collection,
    Corpus,
    Error,
    InvalidArgumentError,
    MinHash,
    MinHashLSH,
    Recipe,
    StorageError,
    Stream,
    find_all,
    num_differing_bits,
    simhash,
)
from ._api import Fingerprints, Pair, clusters, dedup, fingerprint, pairs

__all__ = [
    "Collection", "Corpus", "Error", "Fingerprints", "InvalidArgumentError", "MinHash", "MinHashLSH", "Pair",
    "Recipe", "StorageError", "Stream", "clusters", "dedup", "find_all", "fingerprint",
    "num_differing_bits", "pairs", "simhash",
]
