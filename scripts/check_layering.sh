#!/usr/bin/env bash
# Fails when a module of src/ includes a module above it, or when a front end
# (apps/, python/, examples/), its tests included, includes anything of
# src/. A module's tests (*_test.cc and their helpers) may reach higher
# modules and the library's test utilities: differential tests compare a
# module with the pipeline that uses it.
#
# The modules, lowest first (src/CMakeLists.txt builds them in this order and
# each may depend only on those before it):
modules=(util recipe hash sketch text extract io index store engine gpu format stream sink report)
#
# A public header include/neardup/NAME.h belongs to the module that has
# src/<module>/NAME.cc; the headers without such a file are listed here.
declare -A header_owner=(
  [check]=util [status]=util [loadable_module]=util
  [document]=io
  [minhash]=sketch
  [union_find]=index
  [index_store]=index
  [containment]=index
  [fingerprinter]=engine [containment_engine]=engine [positioned_output]=engine
)
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A rank
for i in "${!modules[@]}"; do rank[${modules[$i]}]=$i; done

owner_of_header() {  # NAME (relative to include/neardup, without .h)
  local name=$1 found
  if [ -n "${header_owner[$name]:-}" ]; then echo "${header_owner[$name]}"; return; fi
  found=$(find src -mindepth 2 -maxdepth 2 -name "$(basename "$name").cc" | head -1)
  if [ -n "$found" ]; then echo "$found" | cut -d/ -f2; return; fi
  echo "?"
}

failures=0
fail() { echo "layering: $*" >&2; failures=$((failures + 1)); }

for module in "${modules[@]}"; do
  [ -d "src/$module" ] || continue
  my_rank=${rank[$module]}
  while IFS=: read -r file line include; do
    case "$include" in
      neardup/*)
        name=${include#neardup/}; name=${name%.h}
        owner=$(owner_of_header "$name")
        if [ "$owner" = "?" ]; then
          fail "$file:$line includes $include, whose module is unknown: add it to header_owner in scripts/check_layering.sh"
        elif [ "${rank[$owner]}" -gt "$my_rank" ]; then
          fail "$file:$line: module $module includes $include of module $owner, which is above it"
        fi ;;
      *)
        dep=${include%%/*}
        if [ -n "${rank[$dep]:-}" ] && [ "${rank[$dep]}" -gt "$my_rank" ]; then
          fail "$file:$line: module $module includes $include of module $dep, which is above it"
        fi ;;
    esac
  done < <(grep -rnoE '^#include "[^"]+"' "src/$module" |
           grep -vE '^[^:]*(_test\.cc|_test_util\.h|_for_test\.h):' | sed -E 's/^([^:]+):([0-9]+):#include "([^"]+)"/\1:\2:\3/')
done

# Front ends, and their tests, stand on the public API alone.
for front in apps python examples; do
  [ -d "$front" ] || continue
  while IFS= read -r hit; do
    fail "$hit: a front end includes a private header of src/ (use include/neardup/)"
  done < <(grep -rnE '^#include "('"$(IFS='|'; echo "${modules[*]}")"')/' "$front" || true)
done

if [ "$failures" -gt 0 ]; then
  echo "layering: $failures wrong include(s)" >&2
  exit 1
fi
echo "layering: every module includes only modules below it; front ends only include/neardup"
