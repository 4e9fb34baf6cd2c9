// neardup_postgres.so: the archive neardup_sink_postgres as a module that
// the `neardup` CLI dlopen()s when a run first opens a sink
// (sink/postgres_sink.h). Its code is the archive's (the link pulls it in
// by the table's symbol); this file only gives the module a source.
#include "sink/postgres_sink.h"
