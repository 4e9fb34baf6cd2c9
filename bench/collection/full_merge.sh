#!/usr/bin/env bash
# The full merge of a collection's index tiers (`neardup index maintain
# --full`, the server's idle merge) on a 20,000-document collection left
# with 5 tiers by commits of decreasing size (16,000 documents of
# cache/neardup_corpora/many_pairs.jsonl, then 3,571, 375, 47, 6 and 1 of
# cache/corpora/spamassassin_full.jsonl): the merge's wall, CPU, peak RSS and
# bytes written (against `index compact`, which also rewrites the segments);
# `similar --full` (20,000 searches) and `query` of 1,000 documents, 5 tiers
# against the merged copy, alternately; and the collection route
# (POST /v1/collections/a/query, passages=0, keep-alive, 200 queries a
# batch, the two servers alternately) with the servers' CPU ticks.
# Answers must be the same ("same answers"). Needs ~3 GB under WORK.
#   bench/collection/full_merge.sh [NEARDUP] [WORK] [ROUNDS]
set -euo pipefail
neardup=$(realpath "${1:-build/release/neardup}")
work=${2:-/tmp/neardup_full_merge}
rounds=${3:-2}
src=$(realpath cache)
rm -rf "$work" && mkdir -p "$work" && cd "$work"
head -16000 "$src/neardup_corpora/many_pairs.jsonl" > p0.jsonl
start=1
i=1
for n in 3571 375 47 6 1; do
  sed -n "${start},$((start + n - 1))p" "$src/corpora/spamassassin_full.jsonl" > p$i.jsonl
  start=$((start + n))
  i=$((i + 1))
done
sed -n '14001,14500p' "$src/neardup_corpora/many_pairs.jsonl" > q.jsonl
head -500 "$src/corpora/spamassassin_full.jsonl" | sed 's/"id": "/"id": "q-/' >> q.jsonl
"$neardup" index create A 2>/dev/null
for f in p0 p1 p2 p3 p4 p5; do "$neardup" index add -q --commit-every 100000 --commit-growth 0 A $f.jsonl; done
"$neardup" index stats A | grep -o '"documents":[0-9]*\|"index_tiers":[0-9]*\|"index_bytes":[0-9]*\|"segment_bytes":[0-9]*' | tr '\n' ' '
echo
cp -a A M && "$neardup" index maintain --full M
uptime
for _ in $(seq "$rounds"); do
  for cmd in "maintain --full" "compact"; do
    rm -rf X && cp -a A X && sync
    # shellcheck disable=SC2086 # $cmd is two words
    /usr/bin/time -f "index $cmd: wall %e s user %U s sys %S s maxrss %M KB fs_out %O blocks" \
      "$neardup" index $cmd -q X
  done
done
for _ in $(seq "$rounds"); do
  for d in A M; do
    rm -rf X && cp -a $d X
    /usr/bin/time -f "similar --full $d: wall %e s user %U s sys %S s" \
      "$neardup" similar -q --full --top 10 X > sim_$d.jsonl
  done
done
cmp -s sim_A.jsonl sim_M.jsonl && echo "similar: same answers" || echo "similar: ANSWERS DIFFER"
for _ in $(seq "$rounds"); do
  for d in A M; do
    /usr/bin/time -f "query $d: wall %e s user %U s sys %S s" "$neardup" query $d q.jsonl --passages 0 > out_$d.jsonl
  done
done
cmp -s out_A.jsonl out_M.jsonl && echo "query: same answers" || echo "query: ANSWERS DIFFER"
rm -rf X
"$neardup" serve --listen 127.0.0.1:18741 --data-dir sd1 --collection a=A --index-merge-idle 0 --threads 4 --log-format json > s1.log 2>&1 &
s1=$!
"$neardup" serve --listen 127.0.0.1:18742 --data-dir sd2 --collection a=M --index-merge-idle 0 --threads 4 --log-format json > s2.log 2>&1 &
s2=$!
trap 'kill $s1 $s2 2>/dev/null || true' EXIT
sleep 2
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
a0=$(ticks $s1)
b0=$(ticks $s2)
/usr/bin/python3 - $((rounds * 5)) <<'PY'
import http.client, statistics, sys, time
ports = {"tiers": 18741, "merged": 18742}
rounds = int(sys.argv[1])
lines = open("q.jsonl").read().splitlines()[:200]
conns = {k: http.client.HTTPConnection("127.0.0.1", p) for k, p in ports.items()}
lat = {k: [] for k in ports}
answers = {k: [] for k in ports}
for r in range(rounds):
    for k in (list(ports) if r % 2 == 0 else list(reversed(list(ports)))):
        for ln in lines:
            t = time.perf_counter()
            conns[k].request("POST", "/v1/collections/a/query?top=10&passages=0", ln,
                             {"Content-Type": "application/json"})
            body = conns[k].getresponse().read()
            lat[k].append(time.perf_counter() - t)
            if r < 2:
                answers[k].append(body)
print("route: same answers" if answers["tiers"] == answers["merged"] else "route: ANSWERS DIFFER")
for k in ports:
    v = sorted(lat[k])
    print("route %s: n=%d median %.3f ms p90 %.3f ms mean %.3f ms"
          % (k, len(v), statistics.median(v) * 1e3, v[int(len(v) * 0.9)] * 1e3, statistics.mean(v) * 1e3))
print("route tiers/merged median x%.3f" % (statistics.median(lat["tiers"]) / statistics.median(lat["merged"])))
PY
echo "route server CPU ticks (1/100 s): tiers $(($(ticks $s1) - a0)) merged $(($(ticks $s2) - b0))"
uptime
cd / && rm -rf "$work"
