// neardup.Corpus, num_differing_bits and find_all: the simhash package's API
// (seomoz/simhash-py) over neardup::HammingIndex (include/neardup/hamming_index.h).
//
// A Corpus is a set of 64-bit hashes (each stored as the entry (hash, 0)).
// Differences from the simhash package, all deliberate: find_first returns
// None when nothing matches (the package returns 0, which is also a valid
// hash) and returns the nearest match (ties: the smallest hash) rather than
// whichever table answers first; find_all lists each match once, nearest
// first, then by value.
//
// Thread safety: a Corpus may be shared between Python threads. Bulk calls
// release the GIL and take the corpus's lock (shared for queries, exclusive
// for changes); the lock is never held while waiting for the GIL.
#include <shared_mutex>
#include <string>

#include "bindings.h"
#include "neardup/hamming_index.h"

namespace neardup::python {
namespace {

class Corpus {
 public:
  Corpus(int num_blocks, int diff_bits)
      : index_(ValueOrThrow(HammingIndex::Create({num_blocks, diff_bits}))) {}

  int num_blocks() const { return index_.options().num_blocks; }
  int diff_bits() const { return index_.options().max_distance; }
  size_t size() const {
    std::shared_lock lock(mutex_);
    return index_.size();
  }
  uint64_t num_tables() const { return index_.num_tables(); }
  size_t memory_bytes() const {
    std::shared_lock lock(mutex_);
    return index_.MemoryBytes();
  }

  bool Insert(const py::handle& hash) {
    const HammingEntry entry{ToUint64(hash), 0};
    std::unique_lock lock(mutex_);
    return ValueOrThrow(index_.Insert(entry));
  }

  size_t InsertBulk(const py::handle& hashes) {
    const HashSpan values(hashes);
    Result<size_t> added = size_t{0};
    RunWithoutGil(0, [&] {
      std::vector<HammingEntry> entries = ToEntries(values.span());
      std::unique_lock lock(mutex_);
      added = index_.InsertBulk(entries);
    });
    return ValueOrThrow(std::move(added));
  }

  bool Remove(const py::handle& hash) {
    const HammingEntry entry{ToUint64(hash), 0};
    std::unique_lock lock(mutex_);
    return index_.Remove(entry);
  }

  size_t RemoveBulk(const py::handle& hashes) {
    const HashSpan values(hashes);
    size_t removed = 0;
    RunWithoutGil(0, [&] {
      std::vector<HammingEntry> entries = ToEntries(values.span());
      std::unique_lock lock(mutex_);
      removed = index_.RemoveBulk(entries);
    });
    return removed;
  }

  bool Contains(const py::handle& hash) const {
    const HammingEntry entry{ToUint64(hash), 0};
    std::shared_lock lock(mutex_);
    return index_.Contains(entry);
  }

  py::object FindFirst(const py::handle& query) const {
    const uint64_t q = ToUint64(query);
    std::optional<HammingMatch> match;
    {
      std::shared_lock lock(mutex_);
      match = index_.FindFirst(q);
    }
    if (!match) return py::none();
    return py::int_(match->fingerprint);
  }

  py::object FindFirstBulk(const py::handle& queries, bool as_arrays) const {
    const HashSpan values(queries);
    std::vector<std::optional<HammingMatch>> matches;
    RunWithoutGil(0, [&] {
      std::shared_lock lock(mutex_);
      matches = index_.FindFirstBulk(values.span());
    });
    if (as_arrays) {
      const auto n = static_cast<py::ssize_t>(matches.size());
      std::vector<uint8_t> found(matches.size());
      std::vector<uint64_t> hashes(matches.size());
      for (size_t i = 0; i < matches.size(); ++i) {
        found[i] = matches[i] ? 1 : 0;
        hashes[i] = matches[i] ? matches[i]->fingerprint : 0;
      }
      return py::make_tuple(OwningArray(std::move(found), {n}).attr("astype")("bool"),
                            OwningArray(std::move(hashes), {n}));
    }
    py::list out(matches.size());
    for (size_t i = 0; i < matches.size(); ++i) {
      out[i] = matches[i] ? py::object(py::int_(matches[i]->fingerprint)) : py::object(py::none());
    }
    return out;
  }

  py::list FindAll(const py::handle& query) const {
    const uint64_t q = ToUint64(query);
    std::vector<HammingMatch> matches;
    {
      std::shared_lock lock(mutex_);
      matches = index_.FindAll(q);
    }
    return ToList(matches);
  }

  py::object FindAllBulk(const py::handle& queries, bool as_arrays) const {
    const HashSpan values(queries);
    HammingMatchesBulk bulk;
    std::vector<uint64_t> offsets;
    std::vector<uint64_t> hashes;
    std::vector<uint8_t> distances;
    RunWithoutGil(0, [&] {
      {
        std::shared_lock lock(mutex_);
        bulk = index_.FindAllBulk(values.span());
      }
      if (!as_arrays) return;
      offsets.assign(bulk.offsets.begin(), bulk.offsets.end());
      hashes.resize(bulk.matches.size());
      distances.resize(bulk.matches.size());
      for (size_t i = 0; i < bulk.matches.size(); ++i) {
        hashes[i] = bulk.matches[i].fingerprint;
        distances[i] = static_cast<uint8_t>(bulk.matches[i].distance);
      }
    });
    if (as_arrays) {
      const auto n = static_cast<py::ssize_t>(offsets.size());
      const auto m = static_cast<py::ssize_t>(hashes.size());
      return py::make_tuple(OwningArray(std::move(offsets), {n}),
                            OwningArray(std::move(hashes), {m}),
                            OwningArray(std::move(distances), {m}));
    }
    const size_t n = bulk.offsets.empty() ? 0 : bulk.offsets.size() - 1;
    py::list out(n);
    for (size_t i = 0; i < n; ++i) out[i] = ToList(bulk.For(i));
    return out;
  }

  // Every pair of stored hashes within diff_bits, as (smaller, larger).
  py::list Pairs() const {
    std::vector<HammingPair> pairs;
    RunWithoutGil(0, [&] {
      std::shared_lock lock(mutex_);
      pairs = index_.SelfJoin();
    });
    return PairsToList(pairs);
  }

  static py::list PairsToList(const std::vector<HammingPair>& pairs) {
    py::list out(pairs.size());
    for (size_t i = 0; i < pairs.size(); ++i) {
      out[i] = py::make_tuple(pairs[i].a.fingerprint, pairs[i].b.fingerprint);
    }
    return out;
  }

 private:
  static std::vector<HammingEntry> ToEntries(std::span<const uint64_t> hashes) {
    std::vector<HammingEntry> entries(hashes.size());
    for (size_t i = 0; i < hashes.size(); ++i) entries[i] = {hashes[i], 0};
    return entries;
  }

  static py::list ToList(std::span<const HammingMatch> matches) {
    py::list out(matches.size());
    for (size_t i = 0; i < matches.size(); ++i) out[i] = py::int_(matches[i].fingerprint);
    return out;
  }

  mutable std::shared_mutex mutex_;
  HammingIndex index_;
};

py::list FindAllPairs(const py::handle& hashes, int num_blocks, int diff_bits) {
  const HashSpan values(hashes);
  const HammingIndexOptions options{num_blocks, diff_bits};
  ThrowIfError(ValidateHammingIndexOptions(options));
  Result<HammingIndex> index = InvalidArgumentError("not built");
  std::vector<HammingPair> pairs;
  RunWithoutGil(0, [&] {
    std::vector<HammingEntry> entries(values.span().size());
    for (size_t i = 0; i < entries.size(); ++i) entries[i] = {values.span()[i], 0};
    index = HammingIndex::Build(options, entries);
    if (index.ok()) pairs = index->SelfJoin();
  });
  ThrowIfError(index.status());
  return Corpus::PairsToList(pairs);
}

}  // namespace

void RegisterHamming(py::module_& m) {
  py::class_<Corpus>(
      m, "Corpus",
      "A set of 64-bit hashes searched for near-duplicates: every stored hash within "
      "`diff_bits` bits of a query. The simhash package's Corpus(num_blocks, diff_bits): "
      "C(num_blocks, diff_bits) permuted sorted tables (Manku, Jain, Das Sarma 2007). "
      "Hashes may be ints or numpy uint64 arrays. Safe to share between threads.")
      .def(py::init<int, int>(), py::arg("num_blocks"), py::arg("diff_bits"),
           "InvalidArgumentError unless 0 <= diff_bits < num_blocks <= 64 and "
           "C(num_blocks, diff_bits) <= 4096.")
      .def_property_readonly("num_blocks", &Corpus::num_blocks, "Blocks the 64 bits are cut into.")
      .def_property_readonly("diff_bits", &Corpus::diff_bits, "The largest distance reported.")
      .def_property_readonly("num_tables", &Corpus::num_tables, "C(num_blocks, diff_bits).")
      .def_property_readonly("memory_bytes", &Corpus::memory_bytes, "Bytes held by the tables.")
      .def("__len__", &Corpus::size, "The number of distinct stored hashes.")
      .def("__contains__", &Corpus::Contains, py::arg("hash"), "Whether `hash` is stored.")
      .def("insert", &Corpus::Insert, py::arg("hash"),
           "Stores `hash`; returns False if it was already there.")
      .def("insert_bulk", &Corpus::InsertBulk, py::arg("hashes"),
           "Stores every hash (an iterable of ints or a numpy uint64 array; the GIL is "
           "released); returns how many were new.")
      .def("remove", &Corpus::Remove, py::arg("hash"),
           "Removes `hash`; returns False if it was not there.")
      .def("remove_bulk", &Corpus::RemoveBulk, py::arg("hashes"),
           "Removes every hash; returns how many were there.")
      .def("find_first", &Corpus::FindFirst, py::arg("query"),
           "The nearest stored hash within diff_bits of `query` (ties: the smallest), or None.")
      .def("find_first_bulk", &Corpus::FindFirstBulk, py::arg("queries"),
           py::arg("as_arrays") = false,
           "find_first of each query, as a list (None where nothing matches); with "
           "as_arrays=True, numpy arrays (found: bool [n], hashes: uint64 [n], 0 where not "
           "found), which skips building a Python object per query.")
      .def("find_all", &Corpus::FindAll, py::arg("query"),
           "Every stored hash within diff_bits of `query`, each once, nearest first (then "
           "ascending).")
      .def("find_all_bulk", &Corpus::FindAllBulk, py::arg("queries"), py::arg("as_arrays") = false,
           "find_all of each query, as a list of lists; with as_arrays=True, numpy arrays "
           "(offsets: uint64 [n + 1], hashes: uint64, distances: uint8): query i's matches "
           "are hashes[offsets[i]:offsets[i + 1]], in find_all's order.")
      .def("pairs", &Corpus::Pairs,
           "Every pair of stored hashes within diff_bits, as (smaller, larger) tuples, sorted.");
  m.def(
      "num_differing_bits",
      [](const py::handle& a, const py::handle& b) {
        return std::popcount(ToUint64(a) ^ ToUint64(b));
      },
      py::arg("a"), py::arg("b"), "The Hamming distance of two 64-bit hashes.");
  m.def("find_all", &FindAllPairs, py::arg("hashes"), py::arg("number_of_blocks"),
        py::arg("different_bits"),
        "Every pair of distinct hashes among `hashes` within `different_bits` bits, as "
        "(smaller, larger) tuples, sorted (the simhash package's find_all).");
}

}  // namespace neardup::python
