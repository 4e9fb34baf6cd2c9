// neardup.Collection: a persistent document archive for containment search
// (neardup::Collection and the containment engine, include/neardup/
// collection.h and containment_engine.h) -- the CLI's `index`, `query` and
// `similar` from Python.
//
// Thread safety: a Collection may be shared between Python threads. Calls
// release the GIL while they work and take the collection's lock (shared
// for queries, exclusive for add / remove / compact); the lock is never held
// while waiting for the GIL.
#include <map>
#include <shared_mutex>
#include <string>

#include "bindings.h"
#include "neardup/collection.h"
#include "neardup/containment_engine.h"

namespace neardup::python {
namespace {

py::dict CommitToDict(const CommitResult& result) {
  py::dict out;
  out["added"] = result.added;
  out["modified"] = result.modified;
  out["unchanged"] = result.unchanged;
  out["removed"] = result.removed;
  out["generation"] = result.generation;
  return out;
}

class PyCollection {
 public:
  PyCollection(const std::string& path, bool writable) {
    Collection::OpenOptions options;
    options.mode = writable ? Collection::Mode::kReadWrite : Collection::Mode::kReadOnly;
    Result<std::unique_ptr<Collection>> opened = InternalError("not opened");
    {
      py::gil_scoped_release release;
      opened = Collection::Open(path, options);
    }
    collection_ = ValueOrThrow(std::move(opened));
    fingerprinter_ = ValueOrThrow(CreateCollectionFingerprinter(*collection_));
  }

  static void Create(const std::string& path, const py::object& recipe_arg,
                     uint32_t max_document_frequency, bool store_texts) {
    std::shared_ptr<const PyRecipe> recipe = RecipeOrDefault(recipe_arg);
    CollectionOptions options;
    options.max_document_frequency = max_document_frequency;
    options.store_texts = store_texts;
    ThrowIfError(Collection::Create(path, recipe->recipe(), options));
  }

  std::string path() const { return collection_->dir(); }
  std::string recipe_id() const { return collection_->recipe_id(); }

  size_t size() const {
    std::shared_lock lock(mutex_);
    return collection_->LiveDocuments().size();
  }

  bool Contains(const std::string& id) const {
    std::shared_lock lock(mutex_);
    return ValueOrThrow(collection_->FindDocument(id)).has_value();
  }

  py::list Ids() const {
    Result<std::vector<DocumentInfo>> docs = InternalError("not listed");
    {
      py::gil_scoped_release release;
      std::shared_lock lock(mutex_);
      docs = collection_->ListDocuments();
    }
    py::list out;
    for (const DocumentInfo& info : ValueOrThrow(std::move(docs))) out.append(info.id);
    return out;
  }

  // Fingerprints the (id, text) pairs and commits them in one commit.
  py::dict Add(const py::handle& documents) {
    DocumentViews docs = ReadDocuments(documents);
    std::vector<std::string> ids;
    ids.reserve(docs.texts.size());
    for (size_t i = 0; i < docs.texts.size(); ++i) {
      py::handle id = docs.ids[i];
      if (!docs.has_ids || !PyUnicode_Check(id.ptr())) {
        throw py::type_error("Collection.add takes (id, text) pairs with str ids (document " +
                             std::to_string(i) + ")");
      }
      ids.push_back(id.cast<std::string>());
    }
    Result<CommitResult> result = InternalError("not committed");
    RunWithoutGil(0, [&] {
      std::vector<Fingerprint> fingerprints;
      Status status = fingerprinter_->ComputeBatch(docs.texts, &fingerprints);
      if (!status.ok()) {
        result = status;
        return;
      }
      std::vector<IncomingDocument> upserts(docs.texts.size());
      for (size_t i = 0; i < upserts.size(); ++i) {
        upserts[i] = {ids[i], ids[i], docs.texts[i], std::move(fingerprints[i].chunks),
                      fingerprints[i].simhash};
      }
      std::unique_lock lock(mutex_);
      result = collection_->Commit(upserts, {});
    });
    return CommitToDict(ValueOrThrow(std::move(result)));
  }

  py::dict Remove(const py::handle& ids_arg) {
    if (ids_arg.is_none() || PyUnicode_Check(ids_arg.ptr())) {
      throw py::type_error("Collection.remove takes an iterable of str ids");
    }
    std::vector<std::string> ids;
    for (py::handle id : py::iter(ids_arg)) {
      if (!PyUnicode_Check(id.ptr())) throw py::type_error("Collection.remove: ids must be str");
      ids.push_back(id.cast<std::string>());
    }
    Result<CommitResult> result = InternalError("not committed");
    RunWithoutGil(0, [&] {
      std::unique_lock lock(mutex_);
      result = collection_->Commit({}, ids);
    });
    return CommitToDict(ValueOrThrow(std::move(result)));
  }

  py::list Query(const py::handle& text, size_t top, double min_similarity, size_t passages) const {
    py::list one;
    one.append(text);
    DocumentViews docs = ReadDocuments(one);
    QueryOptions options;
    options.top_n = top;
    options.min_similarity = min_similarity;
    options.passages_top = passages;
    Result<QueryResult> result = InternalError("not queried");
    RunWithoutGil(0, [&] {
      std::shared_lock lock(mutex_);
      result = QueryDocument(*collection_, *fingerprinter_, docs.texts[0], options);
    });
    const QueryResult& answer = ValueOrThrow(std::move(result));
    py::list out;
    for (const QueryMatch& match : answer.matches) {
      py::list spans;
      for (const Passage& p : match.passages) {
        spans.append(py::make_tuple(p.query_begin, p.query_end, p.match_begin, p.match_end));
      }
      py::dict row;
      row["id"] = match.id;
      row["shared"] = match.shared;
      row["a_in_b"] = match.a_in_b;
      row["b_in_a"] = match.b_in_a;
      row["passages"] = spans;
      out.append(row);
    }
    return out;
  }

  py::list Similar(size_t top, double min_similarity) const {
    SimilarOptions options;
    options.top_n = top;
    options.min_similarity = min_similarity;
    Result<std::vector<SimilarityRow>> rows = InternalError("not computed");
    Result<std::map<uint32_t, std::string>> ids = InternalError("not computed");
    RunWithoutGil(0, [&] {
      std::shared_lock lock(mutex_);
      rows = ComputeAllSimilarities(*collection_, options);
      if (!rows.ok()) return;
      std::vector<uint32_t> docs;
      for (const SimilarityRow& row : *rows) {
        docs.push_back(row.a);
        docs.push_back(row.b);
      }
      ids = collection_->ExternalIds(docs);
    });
    ThrowIfError(rows.status());
    ThrowIfError(ids.status());
    py::list out;
    for (const SimilarityRow& row : *rows) {
      out.append(py::make_tuple(ids->at(row.a), ids->at(row.b), row.a_in_b, row.b_in_a));
    }
    return out;
  }

  void Compact() {
    Status status;
    RunWithoutGil(0, [&] {
      std::unique_lock lock(mutex_);
      status = collection_->Compact();
    });
    ThrowIfError(status);
  }

  void Verify() const {
    Status status;
    RunWithoutGil(0, [&] {
      std::shared_lock lock(mutex_);
      status = collection_->Verify();
    });
    ThrowIfError(status);
  }

 private:
  mutable std::shared_mutex mutex_;
  std::unique_ptr<Collection> collection_;
  std::unique_ptr<Fingerprinter> fingerprinter_;
};

}  // namespace

void RegisterCollection(py::module_& m) {
  py::class_<PyCollection>(
      m, "Collection",
      "A persistent archive of documents on disk (a directory) for containment search: "
      "which stored documents contain parts of a text, with the matching passages. The "
      "CLI's `index`, `query` and `similar`. Commits are atomic and crash-safe; one "
      "writer per directory at a time.")
      .def(py::init<const std::string&, bool>(), py::arg("path"), py::arg("writable") = false,
           "Opens the collection in `path`. StorageError when it is missing or damaged; "
           "InvalidArgumentError when writable and another process holds the writer lock.")
      .def_static("create", &PyCollection::Create, py::arg("path"), py::arg("recipe") = py::none(),
                  py::arg("max_document_frequency") = 1000, py::arg("store_texts") = true,
                  "Creates an empty collection in `path` (absent or empty). Open it with "
                  "Collection(path, writable=True) to add documents.")
      .def_property_readonly("path", &PyCollection::path, "The collection's directory.")
      .def_property_readonly("recipe_id", &PyCollection::recipe_id,
                             "The id of the recipe the collection was created with.")
      .def("__len__", &PyCollection::size, "The number of live documents.")
      .def("__contains__", &PyCollection::Contains, py::arg("id"))
      .def("ids", &PyCollection::Ids, "The live documents' ids, by document number.")
      .def("add", &PyCollection::Add, py::arg("documents"),
           "Adds or replaces (id, text) pairs in one commit; returns the counts "
           "{added, modified, unchanged, removed, generation}.")
      .def("remove", &PyCollection::Remove, py::arg("ids"),
           "Removes the documents with these ids in one commit. StorageError (not_found) "
           "and nothing removed when an id is absent.")
      .def("query", &PyCollection::Query, py::arg("text"), py::arg("top") = 10,
           py::arg("min_similarity") = 0.1, py::arg("passages") = 0,
           "The stored documents that share the most of `text`, best first: dicts {id, "
           "shared, a_in_b (how much of the text is in the match), b_in_a, passages}; the "
           "best `passages` matches get their matching passages as (query_begin, query_end, "
           "match_begin, match_end) byte offsets.")
      .def("similar", &PyCollection::Similar, py::arg("top") = 100, py::arg("min_similarity") = 0.1,
           "For every document its most similar documents, as (id_a, id_b, a_in_b, b_in_a) "
           "rows (the CLI's `similar`).")
      .def("compact", &PyCollection::Compact, "Rewrites the live rows into one segment.")
      .def("verify", &PyCollection::Verify,
           "Checks every invariant and checksum; StorageError (data_loss) on damage.");
}

}  // namespace neardup::python
