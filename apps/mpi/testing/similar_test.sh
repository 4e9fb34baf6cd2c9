#!/usr/bin/env bash
# `mpiexec -n N neardup-mpi similar COLLECTION` against `neardup similar`:
# byte-identical output and the same exit code, on a collection of several
# index tiers with removed documents and a boilerplate cap, whose stored
# table `neardup` updates incrementally (so the full distributed computation
# is checked against the incremental one too).
#
# Usage: similar_test.sh NEARDUP NEARDUP_MPI MPIEXEC WORKDIR RANKS...
set -euo pipefail
neardup=$1 neardup_mpi=$2 mpiexec=$3 work=$4
shift 4
ranks=("$@")
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"

fresh_corpus "$work" 15 300
coll=$work/collection
# Three commits of falling size: three tiers (the merge policy keeps them);
# the 24 copies of small.jsonl put their chunks over the cap of 20.
"$neardup" index create --max-df 20 "$coll" 2>/dev/null
"$neardup" index add -q "$coll" "$work/in/big.jsonl"
"$neardup" similar -q "$coll" -o /dev/null  # a stored table, updated below
"$neardup" index add -q "$coll" "$work/in/small.jsonl"
"$neardup" index add -q "$coll" "$work/in/texts"
"$neardup" index remove -q "$coll" doc-1 doc-5 small-3 copy-0
stats=$("$neardup" index stats "$coll")
tiers=$(sed -n 's/.*"index_tiers":\([0-9]*\).*/\1/p' <<<"$stats")
dead=$(sed -n 's/.*"index_dead_postings":\([0-9]*\).*/\1/p' <<<"$stats")
boilerplate=$(sed -n 's/.*"boilerplate_keys":\([0-9]*\).*/\1/p' <<<"$stats")
[ "$tiers" -ge 3 ] && [ "$dead" -gt 0 ] && [ "$boilerplate" -gt 0 ] ||
  fail "the collection is not what the test needs: $stats"

last=${ranks[${#ranks[@]}-1]}
# FLAGS | rank counts | to stdout. The first run of neardup is its
# incremental update of the stored table; the others recompute (new flags).
cases=(
  "|${ranks[*]}|0"
  "--top 2 --min 0 --format csv --full|$last|1"
)
for i in "${!cases[@]}"; do
  IFS='|' read -r flags_text case_ranks to_stdout <<<"${cases[$i]}"
  read -r -a flags <<<"$flags_text"
  "$neardup" similar "$coll" "${flags[@]}" -o "$work/expected.$i" 2>"$work/expected.$i.err"
  if [ "$i" = 0 ] && ! grep -q "incremental update" "$work/expected.$i.err"; then
    fail "neardup did not update its table incrementally: $(cat "$work/expected.$i.err")"
  fi
  for n in $case_ranks; do
    extra=()
    # Rounds of 4 documents per rank (--memory-mb 1) at the highest count.
    [ "$n" = "$last" ] && extra=(--memory-mb 1)
    code=0
    if [ "$to_stdout" = 1 ]; then
      timeout 120 "$mpiexec" -n "$n" --oversubscribe "$neardup_mpi" similar -q "$coll" \
        "${flags[@]}" "${extra[@]}" -o - >"$work/got.$i.$n" 2>"$work/got.$i.$n.err" || code=$?
    else
      timeout 120 "$mpiexec" -n "$n" --oversubscribe "$neardup_mpi" similar -q "$coll" \
        "${flags[@]}" "${extra[@]}" -o "$work/got.$i.$n" 2>"$work/got.$i.$n.err" || code=$?
    fi
    if [ "$code" != 0 ]; then
      fail "[$n ranks] similar $flags_text: exit $code: $(cat "$work/got.$i.$n.err")"
    elif ! cmp -s "$work/expected.$i" "$work/got.$i.$n"; then
      fail "[$n ranks] similar $flags_text: output differs from neardup's"
      diff "$work/expected.$i" "$work/got.$i.$n" | head -5 >&2 || true
    else
      echo "ok [$n ranks] similar $flags_text ($(wc -l <"$work/got.$i.$n") lines)"
    fi
  done
  [ "$(wc -l <"$work/expected.$i")" -ge 10 ] || fail "neardup similar $flags_text found too few rows"
done

# Not a collection: neardup's exit code, a message naming it, no output.
expected_code=0
"$neardup" similar -q "$work/in" -o "$work/expected.bad" 2>/dev/null || expected_code=$?
code=0
timeout 120 "$mpiexec" -n 2 --oversubscribe "$neardup_mpi" similar -q "$work/in" \
  -o "$work/got.bad" 2>"$work/got.bad.err" || code=$?
if [ "$expected_code" = 0 ] || [ "$code" != "$expected_code" ]; then
  fail "not a collection: exit $code, neardup exited $expected_code"
elif ! grep -q "not a neardup collection" "$work/got.bad.err" || [ -e "$work/got.bad" ]; then
  fail "not a collection: no clear message, or an output was left"
else
  echo "ok [2 ranks] similar on a directory that is not a collection (exit $code)"
fi
finish
