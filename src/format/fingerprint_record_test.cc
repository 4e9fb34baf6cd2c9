#include "neardup/format/fingerprint_record.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace neardup::format {
namespace {

uint64_t WordAt(const std::string& bytes, size_t word) {
  uint64_t value = 0;  // little-endian, decoded by hand
  for (int i = 7; i >= 0; --i) {
    value = (value << 8) | static_cast<uint8_t>(bytes[8 * word + static_cast<size_t>(i)]);
  }
  return value;
}

Recipe SmallRecipe(int bits) {
  Recipe recipe = *PresetRecipe("default");
  recipe.minhash.num_hashes = 4;
  recipe.simhash.bits = bits;
  return recipe;
}

TEST(FingerprintRecordTest, FieldsInDocumentedOrderLittleEndian) {
  SketchSelection selection;
  selection.simhash = true;
  selection.minhash = true;
  selection.kvalue_minhash = true;
  Result<FingerprintRecordLayout> layout = MakeFingerprintRecordLayout(SmallRecipe(64), selection);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->record_bytes, 8u * (1 + 1 + 5 + 5));
  EXPECT_EQ(FingerprintRecordDtype(*layout),
            "[(\"tokens\", \"<u8\"), (\"simhash\", \"<u8\"), (\"minhash_count\", \"<u8\"), "
            "(\"minhash\", \"<u8\", (4,)), (\"kminhash_empty\", \"<u8\"), "
            "(\"kminhash\", \"<u8\", (4,))]");

  Fingerprint fp;
  fp.num_tokens = 42;
  fp.simhash = 0x0102030405060708ull;
  fp.minhash.values = {5, 9};  // a short document: two of four values
  fp.kvalue_minhash.values = {11, 12, 13, 14};
  fp.kvalue_minhash.empty = false;
  std::string out = "x";  // appended after what is there
  AppendFingerprintRecord(&out, fp, *layout);
  ASSERT_EQ(out.size(), 1 + layout->record_bytes);
  EXPECT_EQ(out[1], '\x2a');
  out.erase(0, 1);
  EXPECT_EQ(out[8], '\x08');  // least significant byte first
  const std::vector<uint64_t> expected = {
      42, 0x0102030405060708ull, 2, 5, 9, UINT64_MAX, UINT64_MAX, 0, 11, 12, 13, 14};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(WordAt(out, i), expected[i]) << i;

  Fingerprint featureless;  // no tokens: an empty k-value sketch is flagged, values 0
  out.clear();
  AppendFingerprintRecord(&out, featureless, *layout);
  EXPECT_EQ(WordAt(out, 2), 0u);
  EXPECT_EQ(WordAt(out, 7), 1u);
  EXPECT_EQ(WordAt(out, 8), 0u);
}

TEST(FingerprintRecordTest, WideSimHashHighWordFirst) {
  SketchSelection selection;
  selection.simhash = true;
  Result<FingerprintRecordLayout> layout = MakeFingerprintRecordLayout(SmallRecipe(128), selection);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->record_bytes, 24u);
  Fingerprint fp;
  fp.simhash128 = SimHash128{7, 3};  // high, low
  std::string out;
  AppendFingerprintRecord(&out, fp, *layout);
  EXPECT_EQ(WordAt(out, 1), 7u);
  EXPECT_EQ(WordAt(out, 2), 3u);
}

TEST(FingerprintRecordTest, VariableLengthSketchesAreRefused) {
  SketchSelection chunks;
  chunks.chunks = true;
  Result<FingerprintRecordLayout> layout = MakeFingerprintRecordLayout(SmallRecipe(64), chunks);
  ASSERT_FALSE(layout.ok());
  EXPECT_NE(layout.status().message().find("chunk"), std::string::npos);

  SketchSelection simhash;
  simhash.simhash = true;
  layout = MakeFingerprintRecordLayout(SmallRecipe(256), simhash);
  ASSERT_FALSE(layout.ok());
  EXPECT_NE(layout.status().message().find("256"), std::string::npos);
}

}  // namespace
}  // namespace neardup::format
