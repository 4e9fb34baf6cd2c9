// neardup.MinHash and neardup.MinHashLSH: datasketch's API over neardup's
// one-permutation k-value MinHash (neardup::KValueBuilder) and banded LSH
// (neardup::LshIndex, bands chosen by neardup::ChooseLshParams).
//
// Where results differ from datasketch, and why (also in docs/PYTHON.md):
// - The hash family: datasketch applies num_perm universal hash functions
//   (a*h + b mod 2^61-1) to a 32-bit SHA-1 of each item; neardup hashes each
//   item once with XXH3-64 and splits the 64-bit range into num_perm bins
//   (one-permutation hashing, Li, Owen, Zhang 2012), filling empty bins by
//   optimal densification (Shrivastava 2017). The estimate of Jaccard has
//   the same expectation, at a fraction of the cost, but the values differ.
// - An empty MinHash (no update) is similar to nothing: jaccard() is 0.0
//   between two empty ones (datasketch says 1.0); its digest is all
//   2**64 - 1.
// - MinHashLSH chooses bands and rows with neardup's weighted false
//   positive / negative areas (the same integral as datasketch) and keeps
//   the candidates unverified, as datasketch does.
//
// Thread safety: MinHash and MinHashLSH calls hold the GIL (each is short);
// objects may be shared between Python threads.
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>

#include "bindings.h"
#include "neardup/feature_hash.h"
#include "neardup/lsh_index.h"
#include "neardup/lsh_params.h"
#include "neardup/minhash.h"
#include "neardup/similarity.h"

namespace neardup::python {
namespace {

class MinHash {
 public:
  MinHash(int num_perm, uint64_t seed) : num_perm_(num_perm), seed_(seed) {
    if (num_perm < 1 || num_perm > kMaxLshNumHashes) {
      throw StatusException{InvalidArgumentError("num_perm (" + std::to_string(num_perm) +
                                                 ") must be in [1, " +
                                                 std::to_string(kMaxLshNumHashes) + "]")};
    }
    mins_.assign(static_cast<size_t>(num_perm), std::numeric_limits<uint64_t>::max());
    filled_.assign(static_cast<size_t>(num_perm), 0);
  }

  int num_perm() const { return num_perm_; }
  uint64_t seed() const { return seed_; }

  void Update(const py::handle& item) {
    AddHash(HashFeature(FeatureHashKind::kXxh3, Bytes(item), seed_));
  }

  void UpdateBatch(const py::handle& items) {
    if (items.is_none() || PyUnicode_Check(items.ptr()) || PyBytes_Check(items.ptr())) {
      throw py::type_error("update_batch takes an iterable of bytes or str");
    }
    for (py::handle item : py::iter(items)) Update(item);
  }

  // Adds a precomputed 64-bit feature hash (for example a fingerprint's).
  void UpdateHash(const py::handle& hash) { AddHash(ToUint64(hash)); }

  bool IsEmpty() const {
    for (uint8_t f : filled_) {
      if (f) return false;
    }
    return true;
  }

  // The densified sketch; the same as a KValueBuilder fed every hash, since
  // each bin keeps only its minimum.
  KValueSketch Sketch() const {
    KValueBuilder builder(num_perm_, seed_);
    for (size_t i = 0; i < mins_.size(); ++i) {
      if (filled_[i]) builder.Add(mins_[i]);
    }
    return builder.Finish();
  }

  std::vector<uint64_t> DigestValues() const {
    KValueSketch sketch = Sketch();
    if (sketch.empty)
      return std::vector<uint64_t>(mins_.size(), std::numeric_limits<uint64_t>::max());
    return std::move(sketch.values);
  }

  double Jaccard(const MinHash& other) const {
    if (other.seed_ != seed_) {
      throw StatusException{InvalidArgumentError("MinHash seeds differ (" + std::to_string(seed_) +
                                                 " and " + std::to_string(other.seed_) +
                                                 "): their values are not comparable")};
    }
    return ValueOrThrow(EstimateJaccard(Sketch(), other.Sketch()));
  }

  void Merge(const MinHash& other) {
    if (other.seed_ != seed_ || other.num_perm_ != num_perm_) {
      throw StatusException{InvalidArgumentError(
          "cannot merge MinHash of num_perm " + std::to_string(other.num_perm_) + ", seed " +
          std::to_string(other.seed_) + " into one of num_perm " + std::to_string(num_perm_) +
          ", seed " + std::to_string(seed_))};
    }
    for (size_t i = 0; i < mins_.size(); ++i) {
      if (other.filled_[i]) {
        filled_[i] = 1;
        mins_[i] = std::min(mins_[i], other.mins_[i]);
      }
    }
  }

  bool Equals(const MinHash& other) const {
    return seed_ == other.seed_ && num_perm_ == other.num_perm_ && mins_ == other.mins_ &&
           filled_ == other.filled_;
  }

  py::tuple State() const {
    return py::make_tuple(
        num_perm_, seed_,
        py::bytes(reinterpret_cast<const char*>(mins_.data()), mins_.size() * sizeof(uint64_t)),
        py::bytes(reinterpret_cast<const char*>(filled_.data()), filled_.size()));
  }

  static MinHash FromState(const py::tuple& state) {
    if (state.size() != 4) throw py::value_error("bad MinHash pickle state");
    MinHash m(state[0].cast<int>(), state[1].cast<uint64_t>());
    const std::string mins = state[2].cast<std::string>();
    const std::string filled = state[3].cast<std::string>();
    if (mins.size() != m.mins_.size() * sizeof(uint64_t) || filled.size() != m.filled_.size()) {
      throw py::value_error("bad MinHash pickle state: sizes do not match num_perm");
    }
    std::memcpy(m.mins_.data(), mins.data(), mins.size());
    std::memcpy(m.filled_.data(), filled.data(), filled.size());
    return m;
  }

 private:
  static std::string_view Bytes(const py::handle& item) {
    if (PyBytes_Check(item.ptr())) {
      return std::string_view(PyBytes_AS_STRING(item.ptr()),
                              static_cast<size_t>(PyBytes_GET_SIZE(item.ptr())));
    }
    if (PyUnicode_Check(item.ptr())) {
      Py_ssize_t size = 0;
      const char* data = PyUnicode_AsUTF8AndSize(item.ptr(), &size);
      if (data == nullptr) throw py::error_already_set();
      return std::string_view(data, static_cast<size_t>(size));
    }
    const std::string type = item.is_none()
                                 ? std::string("None")
                                 : std::string(py::str(item.get_type().attr("__name__")));
    throw py::type_error("MinHash.update takes bytes or str, not " + type);
  }

  // The bin of the frozen one-permutation definition (neardup/minhash.h).
  void AddHash(uint64_t hash) {
    const auto bin = static_cast<size_t>(
        (static_cast<unsigned __int128>(hash) * static_cast<uint64_t>(num_perm_)) >> 64);
    filled_[bin] = 1;
    if (hash < mins_[bin]) mins_[bin] = hash;
  }

  int num_perm_;
  uint64_t seed_;
  // mins_[i]: the smallest hash in bin i (2^64 - 1 if none); filled_[i]: any.
  std::vector<uint64_t> mins_;
  std::vector<uint8_t> filled_;
};

class MinHashLsh {
 public:
  MinHashLsh(double threshold, int num_perm, std::pair<double, double> weights,
             const py::object& params)
      : index_(Create(threshold, num_perm, weights, params)), num_perm_(num_perm) {}

  int num_bands() const { return index_.params().num_bands; }
  int rows_per_band() const { return index_.params().rows_per_band; }
  int num_perm() const { return num_perm_; }
  size_t size() const { return index_.size(); }
  bool Contains(const py::object& key) const { return key_to_id_.contains(key); }

  void Insert(const py::object& key, const py::handle& minhash) {
    if (key_to_id_.contains(key)) {
      throw StatusException{InvalidArgumentError(
          "MinHashLSH.insert: key " + std::string(py::repr(key)) + " is already present")};
    }
    const std::vector<uint64_t> sketch = SketchOf(minhash);
    const uint64_t id = next_id_;
    ThrowIfError(index_.Insert(id, sketch));
    ++next_id_;
    key_to_id_[key] = py::int_(id);
    id_to_key_.emplace(id, key);
  }

  py::list Query(const py::handle& minhash) const {
    const std::vector<uint64_t> sketch = SketchOf(minhash);
    const std::vector<uint64_t> ids = ValueOrThrow(index_.Query(sketch));
    py::list out(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) out[i] = id_to_key_.at(ids[i]);
    return out;
  }

  void Remove(const py::object& key) {
    if (!key_to_id_.contains(key)) {
      throw StatusException{InvalidArgumentError("MinHashLSH.remove: key " +
                                                 std::string(py::repr(key)) + " is not present")};
    }
    const uint64_t id = key_to_id_[key].cast<uint64_t>();
    index_.Remove(id);
    PyDict_DelItem(key_to_id_.ptr(), key.ptr());
    id_to_key_.erase(id);
  }

  py::list Keys() const {
    std::vector<std::pair<uint64_t, py::object>> entries(id_to_key_.begin(), id_to_key_.end());
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    py::list out(entries.size());
    for (size_t i = 0; i < entries.size(); ++i) out[i] = entries[i].second;
    return out;
  }

 private:
  static LshIndex Create(double threshold, int num_perm, std::pair<double, double> weights,
                         const py::object& params) {
    LshParams chosen;
    if (!params.is_none()) {
      auto [bands, rows] = params.cast<std::pair<int, int>>();
      chosen = {bands, rows};
    } else {
      LshParamsOptions options;
      options.threshold = threshold;
      options.num_hashes = num_perm;
      options.false_positive_weight = weights.first;
      options.false_negative_weight = weights.second;
      chosen = ValueOrThrow(ChooseLshParams(options)).params;
    }
    return ValueOrThrow(LshIndex::Create(chosen, num_perm));
  }

  // A MinHash's digest, or any sequence of ints / numpy uint64 array (its
  // length is checked by the index: InvalidArgumentError).
  static std::vector<uint64_t> SketchOf(const py::handle& minhash) {
    if (py::isinstance<MinHash>(minhash)) return minhash.cast<const MinHash&>().DigestValues();
    const HashSpan values(minhash);
    return std::vector<uint64_t>(values.span().begin(), values.span().end());
  }

  LshIndex index_;
  int num_perm_;
  uint64_t next_id_ = 0;
  py::dict key_to_id_;
  std::unordered_map<uint64_t, py::object> id_to_key_;
};

}  // namespace

void RegisterMinHash(py::module_& m) {
  py::class_<MinHash>(
      m, "MinHash",
      "A one-permutation MinHash sketch of a set of items (datasketch's MinHash API). "
      "Items are hashed with XXH3-64 (seeded); the 64-bit range is split into num_perm bins "
      "and empty bins are densified, so jaccard() estimates |A & B| / |A | B| with standard "
      "error about sqrt(J(1-J)/num_perm). Values differ from datasketch's (another hash "
      "family); see docs/PYTHON.md.")
      .def(py::init<int, uint64_t>(), py::arg("num_perm") = 128, py::arg("seed") = 1,
           "An empty sketch. InvalidArgumentError unless 1 <= num_perm <= 8192.")
      .def_property_readonly("num_perm", &MinHash::num_perm, "The number of values (k).")
      .def_property_readonly("seed", &MinHash::seed, "The hash seed.")
      .def("update", &MinHash::Update, py::arg("item"),
           "Adds one item (bytes, or str as UTF-8). Adding an item twice changes nothing.")
      .def("update_batch", &MinHash::UpdateBatch, py::arg("items"), "update() of each item.")
      .def("update_hash", &MinHash::UpdateHash, py::arg("hash"),
           "Adds an already hashed item (an int in [0, 2**64)).")
      .def("is_empty", &MinHash::IsEmpty, "True until the first update.")
      .def(
          "digest",
          [](const MinHash& self) {
            return OwningArray(self.DigestValues(), {static_cast<py::ssize_t>(self.num_perm())});
          },
          "The num_perm values as a numpy uint64 array (all 2**64 - 1 when empty).")
      .def("jaccard", &MinHash::Jaccard, py::arg("other"),
           "The estimated Jaccard similarity; 0.0 if either is empty. InvalidArgumentError "
           "when num_perm or seed differ.")
      .def("merge", &MinHash::Merge, py::arg("other"),
           "Makes this the sketch of the union of both sets.")
      .def(
          "copy", [](const MinHash& self) { return MinHash(self); }, "An independent copy.")
      .def("__eq__",
           [](const MinHash& self, const py::object& other) {
             return py::isinstance<MinHash>(other) && self.Equals(other.cast<const MinHash&>());
           })
      .def("__len__", &MinHash::num_perm)
      .def(py::pickle([](const MinHash& self) { return self.State(); },
                      [](const py::tuple& state) { return MinHash::FromState(state); }));

  py::class_<MinHashLsh>(
      m, "MinHashLSH",
      "Banded LSH over MinHash sketches (datasketch's MinHashLSH API): query() returns the "
      "keys of stored sketches that agree with the query on every value of at least one "
      "band -- candidates, not verified. Keys may be any hashable object.")
      .def(py::init<double, int, std::pair<double, double>, py::object>(),
           py::arg("threshold") = 0.9, py::arg("num_perm") = 128,
           py::arg("weights") = std::make_pair(0.5, 0.5), py::arg("params") = py::none(),
           "Bands and rows are chosen for `threshold` by minimising the weighted "
           "(false positive, false negative) areas, unless params=(bands, rows) is given. "
           "InvalidArgumentError for a threshold outside (0, 1) or bands * rows > num_perm.")
      .def_property_readonly("b", &MinHashLsh::num_bands, "The number of bands.")
      .def_property_readonly("r", &MinHashLsh::rows_per_band, "Values per band.")
      .def_property_readonly("num_perm", &MinHashLsh::num_perm, "Values per sketch.")
      .def("insert", &MinHashLsh::Insert, py::arg("key"), py::arg("minhash"),
           "Stores a MinHash (or a sequence / numpy array of num_perm uint64 values) under "
           "`key`. InvalidArgumentError if the key is present or the length is wrong.")
      .def("query", &MinHashLsh::Query, py::arg("minhash"),
           "The keys of stored sketches sharing a band with `minhash`, in insertion order.")
      .def("remove", &MinHashLsh::Remove, py::arg("key"),
           "Removes `key`. InvalidArgumentError (a ValueError) if it is not present.")
      .def("keys", &MinHashLsh::Keys, "The stored keys, in insertion order.")
      .def("is_empty", [](const MinHashLsh& self) { return self.size() == 0; })
      .def("__contains__", &MinHashLsh::Contains, py::arg("key"))
      .def("__len__", &MinHashLsh::size);
}

}  // namespace neardup::python
