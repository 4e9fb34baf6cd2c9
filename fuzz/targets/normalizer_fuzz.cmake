# Arbitrary bytes through the normalizer (all 8 option combinations) and the
# three tokenizers.
neardup_add_fuzzer(NAME normalizer_fuzz SOURCES normalizer_fuzz.cc LIBS neardup_text)
