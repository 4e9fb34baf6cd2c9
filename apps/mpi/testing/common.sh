# shellcheck shell=bash
# Sourced by the MPI test scripts of this directory (after they set `here`
# to it): their shared preamble.
#   fresh_corpus WORK ARGS...  empties WORK and writes make_corpus.py's
#                              corpus into WORK/in (ARGS: its arguments)
#   fail MESSAGE...            reports a failure ("FAIL: ...") and counts it
#   finish                     exits 1 if anything failed, else 0
: "${here:?common.sh: set here to the testing directory first}"
failures=0
# Exits at once when the corpus cannot be written (some scripts run
# without set -e).
fresh_corpus() {
  local work=$1
  shift
  if ! { rm -rf "$work" && mkdir -p "$work" &&
    /usr/bin/python3 "$here/make_corpus.py" "$work/in" "$@"; }; then
    echo "FAIL: cannot write the corpus in $work" >&2
    exit 1
  fi
}
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
finish() {
  exit $((failures > 0))
}
