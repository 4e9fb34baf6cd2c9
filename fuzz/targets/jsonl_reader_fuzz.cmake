neardup_add_fuzzer(NAME jsonl_reader_fuzz SOURCES jsonl_reader_fuzz.cc LIBS neardup_io)
