# Arbitrary bytes through the normalizer (all 8 option combinations) and the
# three tokenizers. 1,000 generated inputs under ASan+UBSan (3,000: 30 s there,
# 13 s in Release; session 19).
neardup_add_fuzzer(NAME normalizer_fuzz SOURCES normalizer_fuzz.cc LIBS neardup_text
                   SANITIZED_INPUTS 1000)
