#!/usr/bin/env bash
# Installs every build, test and benchmark dependency from Debian 12's
# packages. Idempotent: does nothing when all are present. Needs root (or sudo)
# only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git clang-format ccache mold
  libtbb-dev libsimdjson-dev libcli11-dev libsqlite3-dev zlib1g-dev libzstd-dev
  libutf8proc-dev libxxhash-dev libssl-dev libcpp-httplib-dev
  libgtest-dev libgmock-dev libbenchmark-dev libfaiss-dev
  openmpi-bin libopenmpi-dev
  gzip zstd
  libdeflate-dev
  libpoppler-cpp-dev libzip-dev libxml2-dev libgumbo-dev libtesseract-dev tesseract-ocr-eng
  pybind11-dev python3-pybind11 python3-dev python3-numpy python3-pytest
  python3-setuptools python3-wheel python3-venv
  chromium nodejs
  postgresql postgresql-common libpq-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install_deps: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
# The PostgreSQL tests start their own throwaway server (initdb + pg_ctl in
# a temporary directory): installing `postgresql` must not create and start
# the system cluster "main" (Debian does by default), which would only take
# memory and port 5432.
"${sudo_cmd[@]}" mkdir -p /etc/postgresql-common/createcluster.d
echo "create_main_cluster = false" |
  "${sudo_cmd[@]}" tee /etc/postgresql-common/createcluster.d/neardup-no-main-cluster.conf >/dev/null
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
