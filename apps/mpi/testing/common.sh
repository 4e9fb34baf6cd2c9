# Sourced by the MPI test scripts of this directory (after they set `here`
# to it): their shared preamble.
#   fresh_corpus WORK ARGS...  empties WORK and writes make_corpus.py's
#                              corpus into WORK/in (ARGS: its arguments)
#   fail MESSAGE...            reports a failure ("FAIL: ...") and counts it
#   finish                     exits 1 if anything failed, else 0
failures=0
fresh_corpus() {
  local work=$1
  shift
  rm -rf "$work" && mkdir -p "$work"
  /usr/bin/python3 "$here/make_corpus.py" "$work/in" "$@"
}
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
finish() {
  exit $((failures > 0))
}
