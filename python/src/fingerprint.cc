// neardup.simhash() and the engine of neardup.fingerprint(): documents from
// any iterable of texts, fingerprinted with the GIL released, returned as
// flat numpy arrays (one allocation per sketch kind, never one per document).
#include <algorithm>
#include <limits>
#include <string>

#include "bindings.h"

namespace neardup::python {
namespace {

// Documents are fingerprinted this many at a time into one reused
// FingerprintBatch, so that its arrays never hold more than a batch of
// sketches beside the outputs.
constexpr size_t kBatchDocuments = 4096;

// high << 64 | low as one Python int.
py::object SimHash128ToInt(const SimHash128& value) {
  py::object shifted = py::int_(value.high).attr("__lshift__")(64);
  return shifted.attr("__or__")(py::int_(value.low));
}

py::object SimHash(const py::handle& text, const py::object& recipe_arg) {
  std::shared_ptr<const PyRecipe> recipe = RecipeOrDefault(recipe_arg);
  py::list one;
  one.append(text);
  DocumentViews docs = ReadDocuments(one);
  SketchSelection selection;
  selection.simhash = true;
  std::shared_ptr<const Fingerprinter> fingerprinter = recipe->GetFingerprinter(selection);
  Fingerprint fingerprint;
  Status status;
  {
    py::gil_scoped_release release;
    status = fingerprinter->Compute(docs.texts[0], &fingerprint);
  }
  ThrowIfError(status);
  if (recipe->recipe().simhash.bits == 128) {
    return SimHash128ToInt(fingerprint.simhash128);
  }
  return py::int_(fingerprint.simhash);
}

// The flat outputs of one fingerprint() call, filled without the GIL.
struct FlatFingerprints {
  std::vector<uint64_t> simhash;  // n or 2n (high, low) values
  std::vector<uint64_t> minhash;  // n * k, padded with UINT64_MAX
  std::vector<uint32_t> minhash_sizes;
  std::vector<uint64_t> kminhash;  // n * k
  std::vector<uint8_t> kminhash_empty;
  std::vector<uint32_t> chunk_values;
  std::vector<uint64_t> chunk_offsets;
  std::vector<uint64_t> num_tokens;
  std::vector<uint64_t> invalid_utf8;
};

Status FingerprintAll(const Fingerprinter& fingerprinter, std::span<const std::string_view> texts,
                      FlatFingerprints* out) {
  const SketchSelection& selection = fingerprinter.selection();
  const size_t n = texts.size();
  const size_t k = static_cast<size_t>(fingerprinter.recipe().minhash.num_hashes);
  const bool wide = fingerprinter.recipe().simhash.bits == 128;
  if (selection.simhash) out->simhash.resize(wide ? 2 * n : n);
  if (selection.minhash) {
    out->minhash.assign(n * k, std::numeric_limits<uint64_t>::max());
    out->minhash_sizes.resize(n);
  }
  if (selection.kvalue_minhash) {
    out->kminhash.resize(n * k);
    out->kminhash_empty.resize(n);
  }
  if (selection.chunks) out->chunk_offsets.assign(1, 0);
  out->num_tokens.resize(n);
  out->invalid_utf8.resize(n);
  // One flat batch, reused for every kBatchDocuments documents: its arrays
  // are copied row by row into the outputs (no Fingerprint objects).
  FingerprintBatch batch;
  for (size_t first = 0; first < n; first += kBatchDocuments) {
    const size_t count = std::min(kBatchDocuments, n - first);
    NEARDUP_RETURN_IF_ERROR(fingerprinter.ComputeBatch(texts.subspan(first, count), &batch));
    std::copy_n(batch.num_tokens().begin(), count, out->num_tokens.begin() + first);
    std::copy_n(batch.invalid_utf8_sequences().begin(), count, out->invalid_utf8.begin() + first);
    if (selection.simhash) {
      if (wide) {
        for (size_t j = 0; j < count; ++j) {
          const SimHash128 value = batch[j].simhash128();
          out->simhash[2 * (first + j)] = value.high;
          out->simhash[2 * (first + j) + 1] = value.low;
        }
      } else {
        std::copy_n(batch.simhash().begin(), count, out->simhash.begin() + first);
      }
    }
    if (selection.minhash) {
      std::copy_n(batch.minhash().begin(), count * k, out->minhash.begin() + first * k);
      std::copy_n(batch.minhash_count().begin(), count, out->minhash_sizes.begin() + first);
    }
    if (selection.kvalue_minhash) {
      std::copy_n(batch.kvalue_minhash().begin(), count * k, out->kminhash.begin() + first * k);
      std::copy_n(batch.kvalue_empty().begin(), count, out->kminhash_empty.begin() + first);
    }
    if (selection.chunks) {
      const uint64_t base = out->chunk_values.size();
      out->chunk_values.insert(out->chunk_values.end(), batch.chunk_ids().begin(),
                               batch.chunk_ids().end());
      for (size_t j = 1; j <= count; ++j) {
        out->chunk_offsets.push_back(base + batch.chunk_offsets()[j]);
      }
    }
  }
  return Status::Ok();
}

py::dict FingerprintDocuments(const py::handle& documents, bool simhash, bool minhash,
                              bool kminhash, bool chunks, const py::object& recipe_arg,
                              int threads) {
  std::shared_ptr<const PyRecipe> recipe = RecipeOrDefault(recipe_arg);
  SketchSelection selection;
  selection.simhash = simhash;
  selection.minhash = minhash;
  selection.kvalue_minhash = kminhash;
  selection.chunks = chunks;
  if (!simhash && !minhash && !kminhash && !chunks) {
    throw StatusException{InvalidArgumentError(
        "fingerprint: choose at least one of simhash, minhash, kminhash, chunks")};
  }
  std::shared_ptr<const Fingerprinter> fingerprinter = recipe->GetFingerprinter(selection);
  DocumentViews docs = ReadDocuments(documents);
  FlatFingerprints flat;
  Status status;
  RunWithoutGil(threads, [&] { status = FingerprintAll(*fingerprinter, docs.texts, &flat); });
  ThrowIfError(status);

  const auto n = static_cast<py::ssize_t>(docs.texts.size());
  const auto k = static_cast<py::ssize_t>(recipe->recipe().minhash.num_hashes);
  py::dict out;
  out["ids"] = docs.has_ids ? py::object(docs.ids) : py::none();
  out["recipe_id"] = RecipeId(recipe->recipe());
  out["num_tokens"] = OwningArray(std::move(flat.num_tokens), {n});
  out["invalid_utf8_sequences"] = OwningArray(std::move(flat.invalid_utf8), {n});
  out["simhash"] = py::none();
  if (simhash) {
    if (recipe->recipe().simhash.bits == 128) {
      out["simhash"] = OwningArray(std::move(flat.simhash), {n, 2});
    } else {
      out["simhash"] = OwningArray(std::move(flat.simhash), {n});
    }
  }
  out["minhash"] = py::none();
  out["minhash_sizes"] = py::none();
  if (minhash) {
    out["minhash"] = OwningArray(std::move(flat.minhash), {n, k});
    out["minhash_sizes"] = OwningArray(std::move(flat.minhash_sizes), {n});
  }
  out["kminhash"] = py::none();
  out["kminhash_empty"] = py::none();
  if (kminhash) {
    out["kminhash"] = OwningArray(std::move(flat.kminhash), {n, k});
    std::vector<uint8_t> empty = std::move(flat.kminhash_empty);
    out["kminhash_empty"] = OwningArray(std::move(empty), {n}).attr("astype")("bool");
  }
  out["chunk_values"] = py::none();
  out["chunk_offsets"] = py::none();
  if (chunks) {
    const auto total = static_cast<py::ssize_t>(flat.chunk_values.size());
    out["chunk_values"] = OwningArray(std::move(flat.chunk_values), {total});
    out["chunk_offsets"] = OwningArray(std::move(flat.chunk_offsets), {n + 1});
  }
  return out;
}

}  // namespace

void RegisterFingerprint(py::module_& m) {
  m.def("simhash", &SimHash, py::arg("text"), py::arg("recipe") = py::none(),
        "The SimHash of one text (str, or UTF-8 bytes) under `recipe` (default preset when "
        "None): an int of recipe.simhash_bits bits (for 128 bits, high word << 64 | low).");
  m.def("_fingerprint", &FingerprintDocuments, py::arg("documents"), py::arg("simhash"),
        py::arg("minhash"), py::arg("kminhash"), py::arg("chunks"), py::arg("recipe"),
        py::arg("threads"), "The engine of neardup.fingerprint(): a dict of flat numpy arrays.");
}

}  // namespace neardup::python
