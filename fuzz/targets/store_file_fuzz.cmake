# The collection's file readers (segment files and chunk index files) on
# arbitrary bytes.
neardup_add_fuzzer(NAME store_file_fuzz SOURCES store_file_fuzz.cc LIBS neardup_store)
