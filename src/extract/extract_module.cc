// neardup_extract.so: the archive neardup_extract_libraries as a module
// that a program dlopen()s on its first extraction (extract_backend.h). Its
// code is the archive's (the link pulls it in by the table's symbol); this
// file only gives the module a source.
#include "extract/extract_backend.h"
