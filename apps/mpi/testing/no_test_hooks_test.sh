#!/usr/bin/env bash
# The shipped neardup-mpi reads none of the test build's variables
# (NEARDUP_MPI_TEST_EXIT_AFTER, NEARDUP_MPI_TEST_CHECKPOINT_FORMAT: compiled
# only into neardup-mpi-testhooks): their names are not in the binary, and a
# checkpointed job run with both set finishes with neardup's output and a
# checkpoint of the current format, which the same binary resumes.
#
# Usage: no_test_hooks_test.sh NEARDUP NEARDUP_MPI MPIEXEC WORKDIR
set -uo pipefail
neardup=$1 neardup_mpi=$2 mpiexec=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
fresh_corpus "$work" 15 300 >/dev/null
cd "$work/in"
inputs=(big.jsonl small.jsonl texts)

if grep -aq "NEARDUP_MPI_TEST_" "$neardup_mpi"; then
  fail "$neardup_mpi holds the name of a test variable"
fi

"$neardup" pairs --quiet "${inputs[@]}" -o "$work/expected" 2>/dev/null
[ -s "$work/expected" ] || fail "neardup pairs wrote nothing"
for run in first resume; do
  resume=()
  [ "$run" = resume ] && resume=(--resume)
  code=0
  NEARDUP_MPI_TEST_EXIT_AFTER=pairs:1 NEARDUP_MPI_TEST_CHECKPOINT_FORMAT=3 \
    timeout 120 "$mpiexec" -n 2 --oversubscribe "$neardup_mpi" pairs --quiet "${inputs[@]}" \
    -o "$work/got.$run" --checkpoint "$work/ck" "${resume[@]}" 2>"$work/err.$run" || code=$?
  if [ "$code" != 0 ]; then
    fail "the $run run with the test variables set exited $code:"
    cat "$work/err.$run" >&2
  elif ! cmp -s "$work/expected" "$work/got.$run"; then
    fail "the $run run with the test variables set differs from neardup's output"
  elif [ "$run" = resume ] && ! grep -q "resuming after stage " "$work/err.$run"; then
    fail "the checkpoint written with the test variables set was not resumed:"
    cat "$work/err.$run" >&2
  else
    echo "ok [$run run with the test variables set]"
  fi
done
finish
