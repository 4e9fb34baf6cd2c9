# shellcheck shell=bash
# Sourced by the MPI test scripts of this directory (after they set `here`
# to it): their shared preamble.
#   fresh_corpus WORK ARGS...  empties WORK and writes make_corpus.py's
#                              corpus into WORK/in (ARGS: its arguments)
#   fail MESSAGE...            reports a failure ("FAIL: ...") and counts it
#   finish                     exits 1 if anything failed, else 0
: "${here:?common.sh: set here to the testing directory first}"
failures=0
# Open MPI 4.1 keeps each job's session directory under one per-user folder
# (/tmp/ompi.HOST.UID) that every mpiexec creates and the last one removes:
# two jobs starting and ending at once (ctest -j runs these scripts side by
# side) race on it and one fails in orte_init with "mkdir ... File exists"
# (open-mpi/ompi#8510). Each script gets a folder of its own, short enough
# for the Unix sockets inside it, removed when the script exits.
if [ -z "${OMPI_MCA_orte_tmpdir_base:-}" ]; then
  OMPI_MCA_orte_tmpdir_base=$(mktemp -d /tmp/nd-ompi.XXXXXX) || {
    echo "FAIL: cannot make a session folder for Open MPI" >&2
    exit 1
  }
  export OMPI_MCA_orte_tmpdir_base
  trap 'rm -rf "$OMPI_MCA_orte_tmpdir_base"' EXIT
fi
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
