#include "neardup/recipe.h"

#include <simdjson.h>
#include <xxhash.h>

#include <algorithm>
#include <string>
#include <utility>

#include "util/json_writer.h"

namespace neardup {
namespace {

// Bounds checked by ValidateRecipe. They are generous; each says what breaks
// beyond it.
constexpr int kMaxShingleWidth = 64;  // the shingle ring buffer's capacity
constexpr int kMaxNumHashes = 16384;  // 128 KiB per sketch
constexpr std::string_view kFormatName = "neardup-recipe";

std::string_view BoolText(bool value) { return value ? "true" : "false"; }

std::string_view StopwordsKindName(StopwordsKind kind) {
  switch (kind) {
    case StopwordsKind::kNone:
      return "none";
    case StopwordsKind::kEnglish:
      return "english";
    case StopwordsKind::kCustom:
      return "custom";
  }
  return "none";
}

Status CheckRange(std::string_view field, int64_t value, int64_t low, int64_t high) {
  if (value < low || value > high) {
    return InvalidArgumentError(std::string(field) + " (" + std::to_string(value) +
                                ") must be between " + std::to_string(low) + " and " +
                                std::to_string(high));
  }
  return Status::Ok();
}

// --- Parsing ---------------------------------------------------------------

using simdjson::dom::element;
using simdjson::dom::object;

Status JsonError(std::string_view where, simdjson::error_code code) {
  return InvalidArgumentError("recipe: " + std::string(where) + ": " +
                              std::string(simdjson::error_message(code)));
}

Status ParseBool(element value, std::string_view where, bool* out) {
  auto result = value.get_bool();
  if (result.error()) return JsonError(where, result.error());
  *out = result.value_unsafe();
  return Status::Ok();
}

Status ParseInt(element value, std::string_view where, int64_t* out) {
  auto result = value.get_int64();
  if (result.error()) return JsonError(where, result.error());
  *out = result.value_unsafe();
  return Status::Ok();
}

Status ParseString(element value, std::string_view where, std::string* out) {
  auto result = value.get_string();
  if (result.error()) return JsonError(where, result.error());
  *out = std::string(result.value_unsafe());
  return Status::Ok();
}

Status UnknownKey(std::string_view object_name, std::string_view key) {
  return InvalidArgumentError("recipe: unknown key \"" + std::string(key) + "\" in " +
                              std::string(object_name));
}

Status ParseNormalization(element value, NormalizationOptions* out) {
  if (value.is_string()) {
    std::string name;
    NEARDUP_RETURN_IF_ERROR(ParseString(value, "normalize", &name));
    if (name != "ascii_word") {
      return InvalidArgumentError("recipe: normalize (\"" + name +
                                  "\") must be \"ascii_word\" or an object of options");
    }
    out->kind = NormalizerKind::kAsciiWord;
    return Status::Ok();
  }
  out->kind = NormalizerKind::kUnicode;
  auto obj = value.get_object();
  if (obj.error()) return JsonError("normalize", obj.error());
  for (auto field : obj.value_unsafe()) {
    std::string_view key = field.key;
    if (key == "nfkc") {
      NEARDUP_RETURN_IF_ERROR(ParseBool(field.value, "normalize.nfkc", &out->nfkc));
    } else if (key == "case_fold") {
      NEARDUP_RETURN_IF_ERROR(ParseBool(field.value, "normalize.case_fold", &out->case_fold));
    } else if (key == "remove_punctuation") {
      NEARDUP_RETURN_IF_ERROR(
          ParseBool(field.value, "normalize.remove_punctuation", &out->remove_punctuation));
    } else {
      return UnknownKey("normalize", key);
    }
  }
  return Status::Ok();
}

Status ParseStopwords(element value, Recipe* out) {
  if (value.is_string()) {
    std::string name;
    NEARDUP_RETURN_IF_ERROR(ParseString(value, "stopwords", &name));
    if (name == "none") {
      out->stopwords = StopwordsKind::kNone;
    } else if (name == "english") {
      out->stopwords = StopwordsKind::kEnglish;
    } else {
      return InvalidArgumentError("recipe: stopwords (\"" + name +
                                  "\") must be \"none\", \"english\" or a list of words");
    }
    return Status::Ok();
  }
  auto array = value.get_array();
  if (array.error()) return JsonError("stopwords", array.error());
  out->stopwords = StopwordsKind::kCustom;
  out->custom_stopwords.clear();
  for (element word : array.value_unsafe()) {
    std::string text;
    NEARDUP_RETURN_IF_ERROR(ParseString(word, "stopwords[]", &text));
    out->custom_stopwords.push_back(std::move(text));
  }
  std::sort(out->custom_stopwords.begin(), out->custom_stopwords.end());
  out->custom_stopwords.erase(
      std::unique(out->custom_stopwords.begin(), out->custom_stopwords.end()),
      out->custom_stopwords.end());
  return Status::Ok();
}

// Parses {"key": int, ...} objects whose fields are all integers.
template <typename Assign>
Status ParseIntObject(element value, std::string_view name, Assign assign) {
  auto obj = value.get_object();
  if (obj.error()) return JsonError(name, obj.error());
  for (auto field : obj.value_unsafe()) {
    int64_t number = 0;
    std::string where = std::string(name) + "." + std::string(field.key);
    NEARDUP_RETURN_IF_ERROR(ParseInt(field.value, where, &number));
    if (number < 0 || number > INT32_MAX) {
      return InvalidArgumentError(where + " (" + std::to_string(number) +
                                  ") must be between 0 and " + std::to_string(INT32_MAX));
    }
    if (!assign(field.key, number)) return UnknownKey(name, field.key);
  }
  return Status::Ok();
}

// REQUIRES: 0 <= number <= INT32_MAX (checked by ParseIntObject).
void AssignInt(int* field, int64_t number) { *field = static_cast<int>(number); }

// "simhash": {"bits": int, "shingle_width": int, "tie": "one" | "zero"}.
Status ParseSimHash(element value, SimHashOptions* out) {
  auto obj = value.get_object();
  if (obj.error()) return JsonError("simhash", obj.error());
  for (auto field : obj.value_unsafe()) {
    if (field.key == "tie") {
      std::string name;
      NEARDUP_RETURN_IF_ERROR(ParseString(field.value, "simhash.tie", &name));
      if (name == "one") {
        out->tie = SimHashTieRule::kOne;
      } else if (name == "zero") {
        out->tie = SimHashTieRule::kZero;
      } else {
        return InvalidArgumentError("recipe: simhash.tie (\"" + name +
                                    "\") must be \"one\" or \"zero\"");
      }
      continue;
    }
    int64_t number = 0;
    std::string where = "simhash." + std::string(field.key);
    NEARDUP_RETURN_IF_ERROR(ParseInt(field.value, where, &number));
    if (number < 0 || number > INT32_MAX) {
      return InvalidArgumentError(where + " (" + std::to_string(number) +
                                  ") must be between 0 and " + std::to_string(INT32_MAX));
    }
    if (field.key == "bits") {
      AssignInt(&out->bits, number);
    } else if (field.key == "shingle_width") {
      AssignInt(&out->shingle_width, number);
    } else {
      return UnknownKey("simhash", field.key);
    }
  }
  return Status::Ok();
}

}  // namespace

std::string_view TokenizerName(TokenizerKind kind) {
  switch (kind) {
    case TokenizerKind::kWord:
      return "word";
    case TokenizerKind::kWhitespace:
      return "whitespace";
    case TokenizerKind::kChar:
      return "char";
    case TokenizerKind::kGrapheme:
      return "grapheme";
  }
  return "word";
}

std::string_view FeatureHashName(FeatureHashKind kind) {
  switch (kind) {
    case FeatureHashKind::kXxh3:
      return "xxh3";
    case FeatureHashKind::kSdbm:
      return "sdbm";
    case FeatureHashKind::kFnv1a:
      return "fnv1a";
    case FeatureHashKind::kMd5:
      return "md5";
    case FeatureHashKind::kSha1:
      return "sha1";
    case FeatureHashKind::kSha256:
      return "sha256";
  }
  return "xxh3";
}

int DigestBits(FeatureHashKind kind) {
  switch (kind) {
    case FeatureHashKind::kMd5:
      return 128;
    case FeatureHashKind::kSha1:
      return 160;
    case FeatureHashKind::kSha256:
      return 256;
    case FeatureHashKind::kXxh3:
    case FeatureHashKind::kSdbm:
    case FeatureHashKind::kFnv1a:
      return 0;
  }
  return 0;
}

bool IsDigestRecipe(const Recipe& recipe) { return DigestBits(recipe.hash) != 0; }

std::string_view ScriptSegmentationName(ScriptSegmentation kind) {
  switch (kind) {
    case ScriptSegmentation::kNone:
      return "none";
    case ScriptSegmentation::kCharacters:
      return "characters";
  }
  return "none";
}

std::vector<std::string> PresetNames() { return {"default", "default-v1", "paper", "short"}; }

std::vector<std::string> DigestPresetNames() { return {"exlsh", "exlsh-chars"}; }

std::vector<std::string> AllPresetNames() {
  std::vector<std::string> names = PresetNames();
  for (std::string& name : DigestPresetNames()) names.push_back(std::move(name));
  return names;
}

Result<Recipe> PresetRecipe(std::string_view name) {
  Recipe recipe;
  recipe.name = std::string(name);
  if (name == "default") {
    return recipe;
  }
  // The version 1 rules for the rest: their ids stay those of version 1.
  recipe.version = 1;
  recipe.segment_scripts = ScriptSegmentation::kNone;
  if (name == "default-v1") {
    return recipe;
  }
  if (name == "paper") {
    recipe.normalization.remove_punctuation = true;
    recipe.tokenizer = TokenizerKind::kWhitespace;
    recipe.stopwords = StopwordsKind::kEnglish;
    recipe.hash = FeatureHashKind::kSdbm;
    recipe.simhash.shingle_width = 1;
    return recipe;
  }
  if (name == "short") {
    recipe.tokenizer = TokenizerKind::kChar;
    recipe.simhash.shingle_width = 3;
    recipe.minhash.shingle_width = 3;
    recipe.chunks.shingle_width = 3;
    return recipe;
  }
  if (name == "exlsh" || name == "exlsh-chars") {
    // ExLSH's wordwise_lsh / charwise_lsh with their defaults: String.split
    // splits on white space (not on "_", which the ASCII-word normalizer
    // keeps), String.graphemes keeps the spaces.
    recipe.normalization.kind = NormalizerKind::kAsciiWord;
    recipe.tokenizer = name == "exlsh" ? TokenizerKind::kWhitespace : TokenizerKind::kGrapheme;
    recipe.hash = FeatureHashKind::kMd5;
    recipe.simhash.bits = DigestBits(FeatureHashKind::kMd5);
    recipe.simhash.shingle_width = 3;
    recipe.simhash.tie = SimHashTieRule::kZero;
    return recipe;
  }
  std::string known;
  for (const std::string& preset : AllPresetNames()) {
    known += known.empty() ? preset : ", " + preset;
  }
  return InvalidArgumentError("unknown preset \"" + std::string(name) + "\" (known: " + known +
                              ")");
}

Status ValidateRecipe(const Recipe& recipe) {
  NEARDUP_RETURN_IF_ERROR(CheckRange("version", recipe.version, 1, kRecipeFormatVersion));
  if (recipe.version < 2 && recipe.segment_scripts != ScriptSegmentation::kNone) {
    return InvalidArgumentError("segment_scripts (\"" +
                                std::string(ScriptSegmentationName(recipe.segment_scripts)) +
                                "\") needs recipe version 2; version " +
                                std::to_string(recipe.version) + " has only \"none\"");
  }
  const int digest_bits = DigestBits(recipe.hash);
  if (digest_bits != 0) {
    const std::string hash(FeatureHashName(recipe.hash));
    if (recipe.simhash.bits != digest_bits) {
      return InvalidArgumentError("simhash.bits (" + std::to_string(recipe.simhash.bits) +
                                  ") must be " + std::to_string(digest_bits) +
                                  ", the width of hash (\"" + hash + "\")");
    }
    if (recipe.seed != 0) {
      return InvalidArgumentError("seed (" + std::to_string(recipe.seed) +
                                  ") must be 0 with hash (\"" + hash + "\"): a digest has no seed");
    }
  } else {
    if (recipe.simhash.bits != 64 && recipe.simhash.bits != 128) {
      return InvalidArgumentError("simhash.bits (" + std::to_string(recipe.simhash.bits) +
                                  ") must be 64 or 128");
    }
    if (recipe.normalization.kind == NormalizerKind::kAsciiWord) {
      return InvalidArgumentError(
          "normalize \"ascii_word\" needs a digest hash (md5, sha1 or sha256)");
    }
    if (recipe.tokenizer == TokenizerKind::kGrapheme) {
      return InvalidArgumentError(
          "tokenizer \"grapheme\" needs a digest hash (md5, sha1 or sha256)");
    }
  }
  NEARDUP_RETURN_IF_ERROR(
      CheckRange("simhash.shingle_width", recipe.simhash.shingle_width, 1, kMaxShingleWidth));
  NEARDUP_RETURN_IF_ERROR(
      CheckRange("minhash.shingle_width", recipe.minhash.shingle_width, 1, kMaxShingleWidth));
  NEARDUP_RETURN_IF_ERROR(
      CheckRange("chunks.shingle_width", recipe.chunks.shingle_width, 1, kMaxShingleWidth));
  NEARDUP_RETURN_IF_ERROR(
      CheckRange("minhash.num_hashes", recipe.minhash.num_hashes, 1, kMaxNumHashes));
  if (recipe.chunks.sample_modulus < 1) {
    return InvalidArgumentError("chunks.sample_modulus (0) must be at least 1");
  }
  if (recipe.stopwords == StopwordsKind::kCustom) {
    if (recipe.custom_stopwords.empty()) {
      return InvalidArgumentError("custom stopword list is empty");
    }
    for (const std::string& word : recipe.custom_stopwords) {
      if (word.empty()) return InvalidArgumentError("custom stopword list holds an empty word");
    }
  }
  return Status::Ok();
}

std::string CanonicalJson(const Recipe& recipe) {
  const NormalizationOptions& norm = recipe.normalization;
  std::string out = "{\"format\":\"";
  out += kFormatName;
  out += "\",\"version\":" + std::to_string(recipe.version);
  if (norm.kind == NormalizerKind::kAsciiWord) {
    out += ",\"normalize\":\"ascii_word\"";
  } else {
    out += ",\"normalize\":{\"nfkc\":";
    out += BoolText(norm.nfkc);
    out += ",\"case_fold\":";
    out += BoolText(norm.case_fold);
    out += ",\"remove_punctuation\":";
    out += BoolText(norm.remove_punctuation);
    out += "}";
  }
  out += ",\"tokenizer\":\"";
  out += TokenizerName(recipe.tokenizer);
  if (recipe.version >= 2) {  // version 1 strings stay byte for byte
    out += "\",\"segment_scripts\":\"";
    out += ScriptSegmentationName(recipe.segment_scripts);
  }
  out += "\",\"stopwords\":";
  if (recipe.stopwords == StopwordsKind::kCustom) {
    std::vector<std::string> words = recipe.custom_stopwords;
    std::sort(words.begin(), words.end());
    words.erase(std::unique(words.begin(), words.end()), words.end());
    out += "[";
    for (size_t i = 0; i < words.size(); ++i) {
      if (i > 0) out += ",";
      internal::AppendJsonString(&out, words[i]);
    }
    out += "]";
  } else {
    out += "\"";
    out += StopwordsKindName(recipe.stopwords);
    out += "\"";
  }
  out += ",\"hash\":\"";
  out += FeatureHashName(recipe.hash);
  out += "\",\"seed\":" + std::to_string(recipe.seed);
  out += ",\"simhash\":{\"bits\":" + std::to_string(recipe.simhash.bits) +
         ",\"shingle_width\":" + std::to_string(recipe.simhash.shingle_width);
  // Only the non-default rule is written: ids of recipes that predate the
  // option stay as they were.
  if (recipe.simhash.tie == SimHashTieRule::kZero) out += ",\"tie\":\"zero\"";
  out += "}";
  out += ",\"minhash\":{\"num_hashes\":" + std::to_string(recipe.minhash.num_hashes) +
         ",\"shingle_width\":" + std::to_string(recipe.minhash.shingle_width) + "}";
  out += ",\"chunks\":{\"shingle_width\":" + std::to_string(recipe.chunks.shingle_width) +
         ",\"sample_modulus\":" + std::to_string(recipe.chunks.sample_modulus) + "}}";
  return out;
}

Result<Recipe> ParseRecipeJson(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  auto doc = parser.parse(padded);
  if (doc.error()) return JsonError("not valid JSON", doc.error());
  auto root = doc.value_unsafe().get_object();
  if (root.error()) return JsonError("top level", root.error());

  Recipe recipe;
  bool saw_version = false;
  bool saw_segment_scripts = false;
  for (auto field : root.value_unsafe()) {
    std::string_view key = field.key;
    if (key == "format") {
      std::string format;
      NEARDUP_RETURN_IF_ERROR(ParseString(field.value, "format", &format));
      if (format != kFormatName) {
        return InvalidArgumentError("recipe: format (\"" + format + "\") must be \"" +
                                    std::string(kFormatName) + "\"");
      }
    } else if (key == "version") {
      int64_t version = 0;
      NEARDUP_RETURN_IF_ERROR(ParseInt(field.value, "version", &version));
      if (version > kRecipeFormatVersion) {
        return FailedPreconditionError("recipe version (" + std::to_string(version) +
                                       ") is newer than this build supports (" +
                                       std::to_string(kRecipeFormatVersion) + "): upgrade neardup");
      }
      if (version < 1) {
        return InvalidArgumentError("recipe version (" + std::to_string(version) +
                                    ") must be at least 1");
      }
      recipe.version = static_cast<int>(version);
      saw_version = true;
    } else if (key == "name") {
      NEARDUP_RETURN_IF_ERROR(ParseString(field.value, "name", &recipe.name));
    } else if (key == "normalize") {
      NEARDUP_RETURN_IF_ERROR(ParseNormalization(field.value, &recipe.normalization));
    } else if (key == "tokenizer") {
      std::string name;
      NEARDUP_RETURN_IF_ERROR(ParseString(field.value, "tokenizer", &name));
      if (name == "word") {
        recipe.tokenizer = TokenizerKind::kWord;
      } else if (name == "whitespace") {
        recipe.tokenizer = TokenizerKind::kWhitespace;
      } else if (name == "char") {
        recipe.tokenizer = TokenizerKind::kChar;
      } else if (name == "grapheme") {
        recipe.tokenizer = TokenizerKind::kGrapheme;
      } else {
        return InvalidArgumentError(
            "recipe: tokenizer (\"" + name +
            "\") must be \"word\", \"whitespace\", \"char\" or \"grapheme\"");
      }
    } else if (key == "segment_scripts") {
      std::string name;
      NEARDUP_RETURN_IF_ERROR(ParseString(field.value, "segment_scripts", &name));
      if (name == "none") {
        recipe.segment_scripts = ScriptSegmentation::kNone;
      } else if (name == "characters") {
        recipe.segment_scripts = ScriptSegmentation::kCharacters;
      } else {
        return InvalidArgumentError("recipe: segment_scripts (\"" + name +
                                    "\") must be \"none\" or \"characters\"");
      }
      saw_segment_scripts = true;
    } else if (key == "stopwords") {
      NEARDUP_RETURN_IF_ERROR(ParseStopwords(field.value, &recipe));
    } else if (key == "hash") {
      std::string name;
      NEARDUP_RETURN_IF_ERROR(ParseString(field.value, "hash", &name));
      if (name == "xxh3") {
        recipe.hash = FeatureHashKind::kXxh3;
      } else if (name == "sdbm") {
        recipe.hash = FeatureHashKind::kSdbm;
      } else if (name == "fnv1a") {
        recipe.hash = FeatureHashKind::kFnv1a;
      } else if (name == "md5") {
        recipe.hash = FeatureHashKind::kMd5;
      } else if (name == "sha1") {
        recipe.hash = FeatureHashKind::kSha1;
      } else if (name == "sha256") {
        recipe.hash = FeatureHashKind::kSha256;
      } else {
        return InvalidArgumentError("recipe: hash (\"" + name +
                                    "\") must be \"xxh3\", \"sdbm\", \"fnv1a\", \"md5\", "
                                    "\"sha1\" or \"sha256\"");
      }
    } else if (key == "seed") {
      auto seed = field.value.get_uint64();
      if (seed.error()) return JsonError("seed", seed.error());
      recipe.seed = seed.value_unsafe();
    } else if (key == "simhash") {
      NEARDUP_RETURN_IF_ERROR(ParseSimHash(field.value, &recipe.simhash));
    } else if (key == "minhash") {
      NEARDUP_RETURN_IF_ERROR(
          ParseIntObject(field.value, "minhash", [&](std::string_view k, int64_t v) {
            if (k == "num_hashes") {
              AssignInt(&recipe.minhash.num_hashes, v);
              return true;
            }
            if (k == "shingle_width") {
              AssignInt(&recipe.minhash.shingle_width, v);
              return true;
            }
            return false;
          }));
    } else if (key == "chunks") {
      NEARDUP_RETURN_IF_ERROR(
          ParseIntObject(field.value, "chunks", [&](std::string_view k, int64_t v) {
            if (k == "shingle_width") {
              AssignInt(&recipe.chunks.shingle_width, v);
              return true;
            }
            if (k == "sample_modulus") {
              recipe.chunks.sample_modulus = static_cast<uint32_t>(v);
              return true;
            }
            return false;
          }));
    } else {
      return UnknownKey("the recipe", key);
    }
  }
  if (!saw_version) {
    return InvalidArgumentError("recipe: \"version\" is missing (this build writes version " +
                                std::to_string(kRecipeFormatVersion) + ")");
  }
  if (!saw_segment_scripts && recipe.version < 2) {
    recipe.segment_scripts = ScriptSegmentation::kNone;
  }
  NEARDUP_RETURN_IF_ERROR(ValidateRecipe(recipe));
  return recipe;
}

std::string RecipeId(const Recipe& recipe) {
  std::string canonical = CanonicalJson(recipe);
  return internal::Hex64(XXH3_64bits(canonical.data(), canonical.size()));
}

}  // namespace neardup
