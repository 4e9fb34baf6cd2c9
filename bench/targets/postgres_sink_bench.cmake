# Rows/s into PostgreSQL: COPY (binary, text) against prepared row-by-row
# INSERT, and top-100 lists through UpdateTopN (a plain program: it needs a
# server; bench/postgres_sink_bench.sh starts a throwaway one). Needs libpq.
if(NEARDUP_HAVE_LIBPQ)
  add_executable(postgres_sink_bench postgres_sink_bench.cc)
  target_link_libraries(postgres_sink_bench PRIVATE neardup::core PkgConfig::LIBPQ
                                                    neardup_build_flags)
endif()
