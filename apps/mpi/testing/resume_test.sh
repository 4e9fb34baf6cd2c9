#!/usr/bin/env bash
# --checkpoint DIR / --resume: a job whose rank dies right after a stage
# (the test build's hook NEARDUP_MPI_TEST_EXIT_AFTER=<stage>:<rank>: the
# rank exits without MPI_Finalize, as a killed one would, and Open MPI ends
# the job), resumed by the shipped neardup-mpi, writes exactly neardup's
# output; a damaged checkpoint file is reported, never used; a resume of
# another job (flags, inputs, rank count) is refused, and so is a
# checkpoint of an older format (the test build's
# NEARDUP_MPI_TEST_CHECKPOINT_FORMAT).
#
# Usage: resume_test.sh NEARDUP NEARDUP_MPI MPIEXEC WORKDIR NEARDUP_MPI_TESTHOOKS
# (the test build, neardup-mpi-testhooks; empty: skipped, exit 77).
set -uo pipefail
neardup=$1 neardup_mpi=$2 mpiexec=$3 work=$4 testhooks=${5:-}
if [ -z "$testhooks" ]; then
  echo "neardup-mpi-testhooks is not built (NEARDUP_TEST_HOOKS off): skipped"
  exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
fresh_corpus "$work" 15 >/dev/null
cd "$work/in"
inputs=(big.jsonl small.jsonl texts)
# mpi N ARGS...: neardup-mpi on N ranks; its exit code in $code, stderr in $work/err.
# MPI_BINARY=... picks another binary (the test build).
mpi() {
  local n=$1
  shift
  code=0
  timeout 120 "$mpiexec" -n "$n" --oversubscribe "${MPI_BINARY:-$neardup_mpi}" "$@" \
    2>"$work/err" || code=$?
}
# Evidence of a failure, on stderr: the last job's stderr, and for
# `evidence EXPECTED GOT` also where the two files differ.
evidence() {
  echo "--- stderr of the last job (exit $code):" >&2
  cat "$work/err" >&2
  if [ $# = 2 ]; then
    echo "--- $1 against $2:" >&2
    cmp "$1" "$2" >&2
    diff "$1" "$2" 2>&1 | head -n 20 >&2
  fi
  return 0
}

# A rank gone after each stage (rank 0 or another), then resumed:
# neardup's output. A MinHash `pairs` resumed after its fingerprint stage
# sketches its candidate documents again from the checkpoint's records
# (the deferred verification sketches). Pairs as placed for each command:
# on their first documents' owners (pairs; SimHash's leader rule), on their
# verifiers (MinHash's leader rule), each rank's own forest (components).
cases=(
  "2 pairs:1 dedup --rule components --keep longest"
  "3 fingerprint:2 dedup --keep longest"
  "2 pairs:0 clusters --rule leader --threshold 0.5"
  "2 pairs:0 dedup --method simhash --max-distance 6"
  "2 pairs:1 pairs"
  "2 fingerprint:1 pairs"
  "2 lines:1 fingerprint --minhash --simhash --chunks"
)
for i in "${!cases[@]}"; do
  read -r -a words <<<"${cases[$i]}"
  n=${words[0]} hook=${words[1]} command=("${words[@]:2}")
  stage=${hook%%:*}
  "$neardup" "${command[@]}" --quiet "${inputs[@]}" -o "$work/expected.$i" 2>"$work/neardup.err"
  if [ ! -s "$work/expected.$i" ]; then
    fail "neardup ${command[*]} wrote nothing"
    cat "$work/neardup.err" >&2
  fi
  NEARDUP_MPI_TEST_EXIT_AFTER=$hook MPI_BINARY=$testhooks mpi "$n" "${command[@]}" --quiet "${inputs[@]}" \
    -o "$work/got.$i" --checkpoint "$work/ck.$i"
  if [ "$code" = 0 ] || [ -e "$work/got.$i" ]; then
    fail "[$i] ${command[*]}: the job with a rank gone after $stage exited $code (or left an output)"
    evidence
  fi
  # --threads and --no-fsync may change on resume (they cannot change the output).
  mpi "$n" "${command[@]}" --quiet "${inputs[@]}" -o "$work/got.$i" --checkpoint "$work/ck.$i" \
    --resume --threads 1 --no-fsync --profile
  cp "$work/err" "$work/err.$i"
  if [ "$code" != 0 ]; then
    fail "[$i] ${command[*]}: resume exited $code"
    evidence
  elif ! grep -q "resuming after stage $stage " "$work/err"; then
    fail "[$i] ${command[*]}: the resume did not start after stage $stage"
    evidence
  elif ! cmp -s "$work/expected.$i" "$work/got.$i"; then
    fail "[$i] ${command[*]}: resumed output differs from neardup's"
    evidence "$work/expected.$i" "$work/got.$i"
  elif [ "$stage" = fingerprint ] && [ "$command" = pairs ] &&
    ! grep -q "sketched [1-9][0-9]* documents again" "$work/err"; then
    fail "[$i] ${command[*]}: the resumed job sketched no candidate document again"
    evidence
  else
    echo "ok [$i, $n ranks, rank gone after $hook] ${command[*]}"
  fi
done

# A finished checkpoint resumes at the output (dedup, 3 ranks: case 1),
# with the pairs stage's counters: --profile's documents sketched again,
# candidates verified, handed to another rank and bytes of pairs placed per
# rank are those of the run that found the pairs (the leader rule places
# no pair: its bytes are 0, so some rank must have verified candidates;
# on this seeded corpus at 3 ranks the split by cost hands some over).
rm -f "$work/got.1"
mpi 3 dedup --keep longest --quiet "${inputs[@]}" -o "$work/got.1" --checkpoint "$work/ck.1" \
  --resume --profile
if ! cmp -s "$work/expected.1" "$work/got.1"; then
  fail "resume of a finished checkpoint: exit $code"
  evidence "$work/expected.1" "$work/got.1"
fi
placed() {
  grep -o "profile rank [0-9]*\|sketched [0-9]* documents again\|verified [0-9]* candidates ([0-9]* exact)\|[0-9]* handed to another rank\|pairs sent [0-9.]* MB" "$1" |
    paste -sd' '
}
if [ "$(placed "$work/err")" != "$(placed "$work/err.1")" ] ||
  ! grep -q "verified [1-9][0-9]* candidates" "$work/err" ||
  ! grep -q " [1-9][0-9]* handed to another rank" "$work/err"; then
  fail "resumed --profile: '$(placed "$work/err")', the run that found the pairs: '$(placed "$work/err.1")'"
  evidence
else
  echo "ok [resumed counters] $(placed "$work/err")"
fi

# Damaged files: a flipped byte (a rank's pairs, the manifest) and a
# truncation, each reported by name.
for copy in flipped cut manifest; do cp -r "$work/ck.1" "$work/$copy"; done
/usr/bin/python3 - "$work/flipped/pairs.rank1" "$work/cut/fingerprint.rank2" \
  "$work/manifest/manifest" <<'PY'
import os, sys
for path in (sys.argv[1], sys.argv[3]):
    with open(path, "r+b") as f:
        data = bytearray(f.read()); data[len(data) // 2 + 30] ^= 0x10
        f.seek(0); f.write(data)
os.truncate(sys.argv[2], os.path.getsize(sys.argv[2]) - 100)
PY
for damage in "flipped pairs.rank1 checksum mismatch" "cut fingerprint.rank2 truncated" \
  "manifest manifest checksum mismatch"; do
  read -r dir file what <<<"$damage"
  mpi 3 dedup --keep longest --quiet "${inputs[@]}" -o "$work/damaged" --checkpoint "$work/$dir" --resume
  if [ "$code" = 0 ] || [ -e "$work/damaged" ] || ! grep -q "$dir/$file: .*$what" "$work/err"; then
    fail "a $dir checkpoint file was not reported (exit $code):"
    evidence
  else
    echo "ok [damaged: $dir $file] $(grep -o "$dir/$file: .*" "$work/err")"
  fi
done

# Another job: other flags, another rank count, a changed input.
refused() {  # refused WHAT N ARGS...
  local what=$1
  shift
  mpi "$@" --quiet -o "$work/other" --checkpoint "$work/ck.1" --resume
  if [ "$code" = 0 ] || [ -e "$work/other" ] || ! grep -q "checkpoint of another job" "$work/err"; then
    fail "a resume with $what was not refused (exit $code):"
    evidence
  else
    echo "ok [refused: $what] $(grep -o "differ: .*" "$work/err")"
  fi
}
refused "another flag" 3 dedup --keep shortest "${inputs[@]}"
refused "2 ranks instead of 3" 2 dedup --keep longest "${inputs[@]}"
touch -d "2001-01-01" small.jsonl
refused "a changed input" 3 dedup --keep longest "${inputs[@]}"

# A checkpoint written by an older binary (format 3, session 11: the
# leader rule's pairs on their second documents' owners; format 2, session
# 10: its pairs stage did not save the bytes of pairs placed; format 1,
# before session 10, had the leader rule's pairs all on rank 0) is refused
# by its format, not resumed into an internal error; so is one of a later
# binary's format (7).
for format in 3 7; do
  NEARDUP_MPI_TEST_CHECKPOINT_FORMAT=$format MPI_BINARY=$testhooks mpi 2 dedup --quiet "${inputs[@]}" \
    -o "$work/old.out" --checkpoint "$work/old.$format"
  if [ "$code" != 0 ]; then
    fail "a run writing a format-$format checkpoint exited $code"
    evidence
  fi
  mpi 2 dedup --quiet "${inputs[@]}" -o "$work/old.resumed" --checkpoint "$work/old.$format" --resume
  if [ "$code" = 0 ] || [ -e "$work/old.resumed" ] ||
    ! grep -q "checkpoint of format $format, written by another version of neardup-mpi (this one reads formats 4 to 6)" "$work/err"; then
    fail "a format-$format checkpoint was not refused (exit $code):"
    evidence
  else
    echo "ok [refused: format $format] $(grep -o "format $format.*" "$work/err")"
  fi
done

# A format-4 checkpoint (sessions 12-16: the components rule's forests all
# on rank 0) is still resumed: the union-find takes forests on any rank.
# (The test build writes its own placement under format 4's name: this
# covers the acceptance, not forests on rank 0.)
NEARDUP_MPI_TEST_CHECKPOINT_FORMAT=4 NEARDUP_MPI_TEST_EXIT_AFTER=pairs:1 MPI_BINARY=$testhooks \
  mpi 2 dedup --rule components --keep longest --quiet "${inputs[@]}" -o "$work/four.out" \
  --checkpoint "$work/four"
if [ "$code" = 0 ] || [ -e "$work/four.out" ]; then
  fail "the format-4 job with rank 1 gone after pairs exited $code (or left an output)"
  evidence
fi
mpi 2 dedup --rule components --keep longest --quiet "${inputs[@]}" -o "$work/four.out" \
  --checkpoint "$work/four" --resume
if [ "$code" != 0 ] || ! grep -q "resuming after stage pairs " "$work/err"; then
  fail "a format-4 checkpoint was not resumed after pairs (exit $code)"
  evidence
elif ! cmp -s "$work/expected.0" "$work/four.out"; then
  fail "the resumed format-4 checkpoint's output differs from neardup's"
  evidence "$work/expected.0" "$work/four.out"
else
  echo "ok [format 4 resumed] dedup --rule components"
fi

# --resume without --checkpoint; standard input cannot be checkpointed; a
# resume with no checkpoint yet runs from the start.
mpi 2 pairs --quiet big.jsonl -o "$work/x" --resume
if ! grep -q "needs --checkpoint" "$work/err" || [ "$code" = 0 ]; then
  fail "--resume alone accepted"
  evidence
fi
mpi 2 pairs --quiet - -o "$work/x" --checkpoint "$work/stdin" </dev/null
if ! grep -q "standard input" "$work/err" || [ "$code" = 0 ]; then
  fail "--checkpoint of stdin accepted"
  evidence
fi
"$neardup" pairs --quiet "${inputs[@]}" -o "$work/expected.fresh" 2>/dev/null
mpi 2 pairs --quiet "${inputs[@]}" -o "$work/got.fresh" --checkpoint "$work/fresh" --resume
if ! cmp -s "$work/expected.fresh" "$work/got.fresh" || [ ! -f "$work/fresh/manifest" ]; then
  fail "a resume with an empty checkpoint directory (exit $code)"
  evidence "$work/expected.fresh" "$work/got.fresh"
fi
# The next run empties $work: a failed run's directory is kept beside it.
if [ "$failures" -gt 0 ]; then
  rm -rf "$work.failed"
  cp -r "$work" "$work.failed"
  echo "the work directory is kept in $work.failed" >&2
fi
finish
