# Arbitrary bytes as a HammingIndex file: Open (with and without verify_data;
# as given and with the checksums recomputed so that mutations reach the
# structural checks and the queries), then queries and the self-join on
# whatever opened. Seeds: small valid indexes and truncations of them,
# written by HammingFileTest.FuzzSeedsAreCurrent (NEARDUP_WRITE_FUZZ_SEEDS=1).
neardup_add_fuzzer(NAME hamming_file_fuzz SOURCES hamming_file_fuzz.cc LIBS neardup_index)
