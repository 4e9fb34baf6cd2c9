# Arbitrary bytes through each document extractor (PDF, DOCX, ODT, HTML,
# WARC; the first byte chooses) and format detection. Seeds: the fixtures of
# src/extract/extract_test_util.h, written by scripts/make_extract_fuzz_seeds.sh.
neardup_add_fuzzer(NAME document_extractor_fuzz SOURCES document_extractor_fuzz.cc
                   LIBS neardup_extract)
