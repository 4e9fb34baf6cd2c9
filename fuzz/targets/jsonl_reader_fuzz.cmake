# 1,000 generated inputs under ASan+UBSan: its 3,000 took 48 s there (2.2 s in
# Release), mostly the kernel mapping ASan's fresh large buffers (session 19).
neardup_add_fuzzer(NAME jsonl_reader_fuzz SOURCES jsonl_reader_fuzz.cc LIBS neardup_io
                   SANITIZED_INPUTS 1000)
