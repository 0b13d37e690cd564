#!/usr/bin/env bash
# Installs what gpusched's build, tests and benchmarks need on Debian 12 (run as root).
# Idempotent: does nothing when everything is present.
set -euo pipefail

debs=(cmake g++ make ccache libeigen3-dev libboost-graph-dev doctest-dev libbenchmark-dev
      libyaml-cpp-dev nlohmann-json3-dev libcli11-dev python3 python3-pip)
missing=()
for d in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$d" 2>/dev/null | grep -q "install ok installed" || missing+=("$d")
done
if ((${#missing[@]})); then
  echo "install-deps: apt-get install ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
