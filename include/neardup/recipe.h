// Recipe: the one value type that says how text becomes fingerprints.
//
// normalize (NFKC, case folding, punctuation) -> tokenize (word | whitespace |
// char) -> stopword filter -> shingles of `shingle_width` tokens -> 64-bit
// feature hash -> sketches (SimHash, MinHash, chunk set).
//
// A second route, the digest route, is taken when the feature hash is a
// cryptographic digest (MD5, SHA-1, SHA-256; for compatibility with tools
// such as the Elixir library ExLSH): each shingle's bytes (its tokens
// concatenated, no separator) are digested, a text with fewer tokens than the
// width has no shingle, and the SimHash is as wide as the digest (128, 160
// or 256 bits), read most significant bit of the first byte first. It
// computes SimHash only. The ASCII-word normalizer and grapheme tokens are
// digest-route options (docs/RECIPES.md).
//
// A recipe is serialised canonically (CanonicalJson), and its id is a hash of
// that form. Every stored fingerprint carries the id of the recipe that made
// it; mixing fingerprints of different recipes is an error.
// Frozen: for a given canonical recipe, fingerprints never change between
// releases or platforms (golden vectors in tests/golden/). A change to any
// stage that would alter a fingerprint bumps kRecipeFormatVersion.
// Thread safety: a plain value type.
#ifndef NEARDUP_RECIPE_H_
#define NEARDUP_RECIPE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/status.h"

namespace neardup {

// Bumped whenever any fingerprint of an existing recipe would change. Each
// recipe keeps the version it was written with (Recipe::version), and this
// build computes the fingerprints of every version from 1 to this one.
// Version 2: the word tokenizer cuts Chinese, Japanese, Thai, Lao, Khmer and
// Myanmar text into characters (segment_scripts); CHANGELOG.md lists them all.
inline constexpr int kRecipeFormatVersion = 2;

enum class NormalizerKind {
  // The three options of NormalizationOptions below (the default).
  kUnicode,
  // ExLSH's normalizer: Unicode NFC, Unicode lower case (full mappings), then
  // every character that is not an ASCII word character [A-Za-z0-9_]
  // replaced by a space, runs of spaces collapsed to one (leading and
  // trailing ones kept). The three options below are ignored. Digest route
  // only.
  kAsciiWord,
};

struct NormalizationOptions {
  // Unicode NFKC (compatibility composition). Default true: "ﬁ" == "fi",
  // full-width == ASCII. Off only for byte-exact compatibility with tools that
  // do no normalization.
  bool nfkc = true;
  // Unicode full case folding. Default true: "Straße" == "STRASSE".
  bool case_fold = true;
  // Delete Unicode punctuation (general category P*). Default false: the word
  // tokenizer already splits on punctuation; the `paper` preset turns it on so
  // whitespace tokens lose their trailing commas and full stops.
  bool remove_punctuation = false;
  // Default kUnicode (the three options above). Written in the canonical
  // form as "normalize": "ascii_word" instead of the options object when
  // kAsciiWord. Last, so that {nfkc, case_fold} initializers keep meaning.
  NormalizerKind kind = NormalizerKind::kUnicode;
};

enum class TokenizerKind {
  kWord,        // maximal runs of Unicode letters, marks and digits
  kWhitespace,  // split on Unicode white space only (the SimHash FPGA paper)
  kChar,        // one token per code point, white-space runs as one " " token
  // One token per extended grapheme cluster (Unicode UAX #29, utf8proc),
  // white space included, nothing dropped. Digest route only.
  kGrapheme,
};

// How the word tokenizer cuts scripts written without spaces
// (src/text/script_segments.h). Applies to TokenizerKind::kWord only.
enum class ScriptSegmentation {
  kNone,        // a run of letters is one token, whatever its script (version 1)
  kCharacters,  // each Han, Hiragana, Thai, Lao, Khmer, Myanmar character a
                // token (with its marks), each Katakana run a token
};

enum class FeatureHashKind {
  kXxh3,   // XXH3-64 with seed (default: fast, high quality)
  kSdbm,   // sdbm over bytes, 64-bit: h = c + (h << 6) + (h << 16) - h, h0 = seed
  kFnv1a,  // FNV-1a 64 over bytes; offset basis XOR seed
  // Cryptographic digests (OpenSSL libcrypto) of each shingle's bytes: the
  // digest route. No seed; simhash.bits must be the digest's width. Slow
  // (a digest per shingle) and kept for compatibility only.
  kMd5,     // 128 bits
  kSha1,    // 160 bits
  kSha256,  // 256 bits
};

// The digest's width in bits for kMd5, kSha1, kSha256; 0 for the 64-bit
// feature hashes.
int DigestBits(FeatureHashKind kind);

// How a SimHash bit whose signed sum is exactly 0 is set.
enum class SimHashTieRule {
  kOne,   // 1 (the SimHash FPGA paper; the default)
  kZero,  // 0: a bit is 1 only when its sum is > 0 (ExLSH)
};

enum class StopwordsKind {
  kNone,
  kEnglish,  // the built-in English list (frozen with kRecipeFormatVersion)
  kCustom,   // `Recipe::custom_stopwords`
};

struct SimHashOptions {
  // 64 or 128. A 128-bit SimHash's high 64 bits equal the 64-bit SimHash.
  // With a digest hash: the digest's width (128, 160 or 256), no other.
  int bits = 64;
  // Default kOne (the paper's rule). Written in the canonical form only when
  // kZero, so recipes without it keep their ids.
  SimHashTieRule tie = SimHashTieRule::kOne;
  // Tokens per shingle. Default 3 (see docs/RECIPES.md): unigrams make every
  // English text share its most frequent words; 3-word shingles keep SimHash
  // distance proportional to the edit rate.
  int shingle_width = 3;
};

struct MinHashOptions {
  // Hash values per sketch (k), for bottom-k and for k-value sketches.
  // Default 128: standard error of a Jaccard estimate about 1/sqrt(k) ~ 0.09
  // at J = 0.5, 1 KiB per sketch.
  int num_hashes = 128;
  // Tokens per shingle. Default 5 (word 5-shingles, the usual for near-dup).
  int shingle_width = 5;
};

struct ChunkOptions {
  // Tokens per chunk. Default 5.
  int shingle_width = 5;
  // Keep a chunk only when (chunk id % sample_modulus) == 0. Default 1 (all):
  // larger values shrink indexes by that factor at a cost in accuracy.
  uint32_t sample_modulus = 1;
};

struct Recipe {
  // A preset's name, or "custom". Informational: not part of the id.
  std::string name = "custom";
  NormalizationOptions normalization;
  TokenizerKind tokenizer = TokenizerKind::kWord;
  // The recipe format version whose rules compute the fingerprints, 1 to
  // kRecipeFormatVersion. Default: the current one. Part of the id.
  int version = kRecipeFormatVersion;
  // Default kCharacters (version 2): without it one changed character of a
  // Japanese clause changes a whole 20-60 character token and every shingle
  // around it. Version 1 recipes have only kNone.
  ScriptSegmentation segment_scripts = ScriptSegmentation::kCharacters;
  StopwordsKind stopwords = StopwordsKind::kNone;
  // Normalised, sorted, unique. Used only when stopwords == kCustom.
  std::vector<std::string> custom_stopwords;
  FeatureHashKind hash = FeatureHashKind::kXxh3;
  uint64_t seed = 0;
  SimHashOptions simhash;
  MinHashOptions minhash;
  ChunkOptions chunks;
};

// The presets of the 64-bit feature-hash route (every sketch), in a stable
// order.
std::vector<std::string> PresetNames();
// The digest-route presets (SimHash only): "exlsh", "exlsh-chars".
std::vector<std::string> DigestPresetNames();
// Every name PresetRecipe accepts: PresetNames() then DigestPresetNames().
std::vector<std::string> AllPresetNames();

// True when the recipe takes the digest route (its hash is a digest).
bool IsDigestRecipe(const Recipe& recipe);

// `default`: word tokens (scripts without spaces cut into characters), NFKC +
//            case folding, xxh3, SimHash over 3-shingles, MinHash and chunks
//            over 5-shingles. Version 2.
// `default-v1`: `default` as it was in version 1 (a run of kanji and kana is
//            one token): the fingerprints and id of version 1's `default`.
// `paper`:   reproduces the SimHash FPGA paper: lower case, punctuation
//            removed, English stopwords removed, whitespace tokens, unigrams
//            weighted by term frequency, sdbm, 64 bits.
// `short`:   character 3-grams, for user names, URLs and titles.
// `exlsh`:   reproduces ExLSH's wordwise_lsh bit for bit: ASCII-word
//            normalizer, whitespace tokens, 3-shingles, MD5, 128-bit SimHash,
//            strict tie rule.
// `exlsh-chars`: ExLSH's charwise_lsh: the same with grapheme tokens.
// `paper` and `short` are version 1 recipes: version 2 changed nothing for
// their tokenizers, so they keep their ids.
Result<Recipe> PresetRecipe(std::string_view name);

// Checks every parameter; the message names the field, the bound and the value.
Status ValidateRecipe(const Recipe& recipe);

// One-line JSON with keys in a fixed order and no optional spacing; equal
// recipes give equal strings. Includes `version`; excludes `name`. A version 1
// recipe gives exactly the string version 1 wrote (no segment_scripts key).
std::string CanonicalJson(const Recipe& recipe);

// Parses a recipe written by CanonicalJson, or by hand (keys in any order,
// missing keys take the defaults of the recipe's version: segment_scripts is
// "none" in version 1 and "characters" from version 2). Rejects unknown keys,
// segment_scripts in a version 1 recipe, and versions newer than
// kRecipeFormatVersion.
Result<Recipe> ParseRecipeJson(std::string_view json);

// 16 lower-case hex digits: XXH3-64 (seed 0) of CanonicalJson(recipe).
std::string RecipeId(const Recipe& recipe);

std::string_view TokenizerName(TokenizerKind kind);
std::string_view FeatureHashName(FeatureHashKind kind);
std::string_view ScriptSegmentationName(ScriptSegmentation kind);

}  // namespace neardup

#endif  // NEARDUP_RECIPE_H_
