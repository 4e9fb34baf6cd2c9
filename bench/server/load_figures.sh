#!/usr/bin/env bash
# The figures of docs/SERVER.md "Measured": `neardup serve` on one core,
# bench/server/http_load on the other (taskset), loopback, a fresh data
# directory per run. For each run: the loader's line (requests/s, text MB/s,
# latency percentiles, its own CPU per request) and the server's CPU time
# per request (utime + stime from /proc/PID/stat over the run), and the
# hypervisor's steal share of the server's CPUs over the run (/proc/stat).
#
#   bench/server/load_figures.sh [BUILD_DIR...]   (default build/release)
#
# With several build directories (e.g. a copy of the starting build and the
# current one) each run line is run by each build in turn, so that a
# before/after comparison shares one stretch of machine load; each line is
# then prefixed with its build directory.
#
# The loader is the last build's bench/http_load for every build (the same
# client for before and after), or LOADER.
#
# Environment: SECONDS_PER_RUN (default 5), SERVER_CPU / LOADER_CPU (taskset
# CPU lists, default 0 / 1: one core each; "0,1" / "0,1" lets both share
# both cores; SERVER_CPU=0,1 with the loader on 1 gives batches both cores,
# session 13: the loader costs ~3 us of CPU per batch document against the
# server's ~30), FSYNC=1 to measure durable adds (default: --no-fsync, which
# measures everything but the disk), RUNS (the list of loader argument sets,
# one per line; default below), PRIORITY=1 to run the server and the loader
# each in its own scheduler autogroup at nice -19 (root only; on a machine
# other users load, their processes then take a small share of the two
# cores instead of half: a shared machine's figures are still indicative).
#
# The issue-14 figures, base and new alternating (session 10):
#   RUNS='--route documents --connections 32 --threads 4 --rate 5000
#   --route documents --connections 32 --threads 4
#   --route documents --connections 8 --threads 4 --batch 100' \
#   SECONDS_PER_RUN=10 bench/server/load_figures.sh BASE_DIR build/release BASE_DIR build/release
# (BASE_DIR holds neardup and bench/http_load, e.g. /work/main/wt/base10;
# since session 14 `neardup serve` loads its HTTP front end from the module
# neardup_server.so beside it, so a folder of copied binaries holds
# neardup_server.so, neardup_extract.so and neardup_postgres.so too):
# p50/p99 at a fixed 5,000 adds/s (set --rate to half the saturating rate
# the second line measures), the saturating single-add rate, batch MB/s.
# Batches on both cores (session 13; docs/SERVER.md "Measuring the load"):
#   SERVER_CPU=0,1 RUNS='--route documents --connections 8 --threads 4 --batch 100' \
#   SECONDS_PER_RUN=10 bench/server/load_figures.sh BASE_DIR build/release BASE_DIR build/release
# Each line ends with the split: "cores server S loader L".
# A build argument DIR:FLAGS runs DIR's server with FLAGS added (spaces
# as commas), e.g. the log roll-over with durable writes (session 16):
#   FSYNC=1 SERVER_CPU=0,1 RUNS='--route documents --connections 8 --threads 4 --batch 100' \
#   SECONDS_PER_RUN=10 bench/server/load_figures.sh build/release:--snapshot-log-mb,4 \
#   build/release build/release:--snapshot-log-mb,4 build/release
set -euo pipefail
[ $# -gt 0 ] || set -- build/release
# Each build must serve: a folder with `neardup` but without the module
# neardup_server.so beside it (session 14) fails here, not in the first run.
for arg in "$@"; do
  build=${arg%%:*}
  if ! serve_help=$("$build/neardup" serve --help 2>&1 >/dev/null); then
    echo "load_figures.sh: $build/neardup cannot serve (copy neardup_server.so beside it):" >&2
    echo "$serve_help" >&2
    exit 2
  fi
done
seconds=${SECONDS_PER_RUN:-5}
server_cpu=${SERVER_CPU:-0}
loader_cpu=${LOADER_CPU:-1}
fsync_flag=--no-fsync
[ "${FSYNC:-0}" = 1 ] && fsync_flag=
# Four loader threads: on a shared machine one thread gets one scheduler
# share of its core however idle it is, and the loader would set the pace.
default_runs='--route healthz --connections 32 --threads 4
--route check --connections 32 --threads 4
--route documents --connections 32 --threads 4
--route documents --connections 32 --threads 4 --pipeline 4
--route documents --connections 8 --threads 4 --batch 100'
runs=${RUNS:-$default_runs}
ticks=$(getconf CLK_TCK)
# Below the kernel's ephemeral range (32768-60999), where client sockets'
# local ports would make the bind fail now and then.
port=$((20000 + RANDOM % 12000))
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# "STEAL TOTAL": the hypervisor's steal ticks and all ticks of the server's
# CPUs (SERVER_CPU as a comma list) from /proc/stat. On a VM whose host is
# busy, steal comes in bursts that stop both vCPUs for tens of ms, and a
# thread's CPU clock can count part of it (session 11: a 20 us spin loop
# pinned to core 0 took 2-7 ms now and then): a run with steal above a few
# percent measures the host, not the server.
# The total is fields 2-9 (user .. steal): guest and guest_nice (10-11)
# are already counted in user and nice. SERVER_CPU may be a list or ranges
# ("0,1", "0-1"): expanded for the lookup.
steal_ticks() {
  awk -v spec="$server_cpu" 'BEGIN {
      n = split(spec, parts, ",")
      for (p = 1; p <= n; ++p) {
        if (split(parts[p], r, "-") == 2) { for (c = r[1]; c <= r[2]; ++c) want[c] = 1 }
        else want[parts[p]] = 1
      }
    }
    $1 ~ /^cpu[0-9]+$/ && (substr($1, 4) in want) {
      s += $9; for (i = 2; i <= 9 && i <= NF; ++i) t += $i } END { print s + 0, t + 0 }' /proc/stat
}

while IFS= read -r args; do
  [ -n "$args" ] || continue
  for arg in "$@"; do
    build=${arg%%:*}
    serve_flags=
    [ "$build" = "$arg" ] || serve_flags=${arg#*:}
    neardup=$build/neardup
    last=${!#}
    load=${LOADER:-${last%%:*}/bench/http_load}
    label=
    [ $# -gt 1 ] && label="$arg  "
    data=$(mktemp -d)
    # setsid: its own session, hence its own autogroup (PRIORITY).
    # shellcheck disable=SC2086
    setsid taskset -c "$server_cpu" "$neardup" serve --listen 127.0.0.1:$port \
      --data-dir "$data" --threads 128 --max-connections 128 $fsync_flag ${serve_flags//,/ } \
      2>/dev/null &
    server=$!
    for _ in $(seq 100); do
      (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break
      sleep 0.05
    done
    # A port another process holds makes the server exit at once: say so and
    # go on with the next port.
    if ! kill -0 $server 2>/dev/null; then
      echo "$label$args: the server did not start (port $port taken?)"
      rm -rf "$data"
      port=$((port + 1))
      continue
    fi
    # Once it listens, setsid has made its session (and autogroup).
    [ "${PRIORITY:-0}" = 1 ] && echo -19 > "/proc/$server/autogroup"
    before=$(cpu_ticks $server)
    read -r steal_before total_before < <(steal_ticks)
    if [ "${PRIORITY:-0}" = 1 ]; then
      # shellcheck disable=SC2086
      line=$(setsid bash -c 'echo -19 > /proc/self/autogroup; exec "$@"' loader \
        taskset -c "$loader_cpu" "$load" --port $port --seconds "$seconds" $args || true)
    else
      # shellcheck disable=SC2086
      line=$(taskset -c "$loader_cpu" "$load" --port $port --seconds "$seconds" $args || true)
    fi
    read -r steal_after total_after < <(steal_ticks)
    if ! after=$(cpu_ticks $server 2>/dev/null); then
      echo "$label$line  THE SERVER EXITED during the run"
      rm -rf "$data"
      port=$((port + 1))
      continue
    fi
    requests=$(echo "$line" | sed -E 's/.* requests ([0-9]+) .*/\1/')
    server_us=$(awk -v t=$((after - before)) -v hz="$ticks" -v n="$requests" \
      'BEGIN { if (n > 0) printf "%.1f", t / hz / n * 1e6; else print "-" }')
    steal=$(awk -v s=$((steal_after - steal_before)) -v t=$((total_after - total_before)) \
      'BEGIN { if (t > 0) printf "%.1f", 100 * s / t; else print "-" }')
    echo "$label$line  server CPU per request ${server_us} us  steal ${steal}% ${fsync_flag:-(durable)}  cores server $server_cpu loader $loader_cpu"
    kill -TERM $server
    wait $server || true
    rm -rf "$data"
    port=$((port + 1))
  done
done <<< "$runs"
