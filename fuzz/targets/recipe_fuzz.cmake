neardup_add_fuzzer(NAME recipe_fuzz SOURCES recipe_fuzz.cc LIBS neardup_recipe)
