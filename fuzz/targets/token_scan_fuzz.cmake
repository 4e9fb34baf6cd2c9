# Arbitrary bytes through the block tokenizer on every CPU path, against
# ForEachToken (raw and normalized).
neardup_add_fuzzer(NAME token_scan_fuzz SOURCES token_scan_fuzz.cc LIBS neardup_text)
