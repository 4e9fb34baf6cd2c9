#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server (initdb + pg_ctl in a temporary
# directory, unix socket only, default durability settings: fsync on) and
# runs build/release/bench/postgres_sink_bench against it, then removes it.
#   bench/postgres_sink_bench.sh [pair_rows] [insert_rows] [documents]
# Defaults: 1000000 pair rows for COPY, 100000 for INSERT, 10000 documents'
# top-100 lists. As root, the server runs as the `postgres` user.
set -euo pipefail
cd "$(dirname "$0")/.."
bench=${BENCH:-build/release/bench/postgres_sink_bench}
bindir=${NEARDUP_PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}
dir=$(mktemp -d /tmp/neardup_pg_bench.XXXXXX)
as=()
if [ "$(id -u)" -eq 0 ]; then chown postgres "$dir"; as=(runuser -u postgres --); fi
cleanup() {
  "${as[@]}" "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
"${as[@]}" "$bindir/initdb" -D "$dir/data" -U bench --auth=trust -E UTF8 --locale=C.UTF-8 \
  >"$dir/initdb.log"
"${as[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
  -o "-c listen_addresses='' -c unix_socket_directories='$dir' -c port=54328" start >/dev/null
"$bench" "postgresql://bench@/postgres?host=$dir&port=54328" "$@"
