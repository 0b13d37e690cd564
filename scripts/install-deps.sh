#!/usr/bin/env bash
# Installs what gpusched's build, tests and benchmarks need on Debian 12 (run as root).
# Idempotent: does nothing when everything is present.
set -euo pipefail

debs=(cmake g++ make ccache libeigen3-dev libboost-graph-dev doctest-dev libbenchmark-dev
      libyaml-cpp-dev nlohmann-json3-dev libcli11-dev python3 python3-pip python3-dev ninja-build
      clang-14 libclang-rt-14-dev  # clang 14: the second compiler of the header check; libFuzzer's runtime
      libcpp-httplib-dev           # gpusched-extender's HTTP server and API-server client (bookworm: 0.11.4)
      libsimdjson-dev)             # gpusched-extender's request reader (bookworm: 3.0.1; optional in CMake)
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

# Python packages for python/ (bindings, tests, stubs, plots). Pinned where generated output
# (stubs, mypy results) must be reproducible.
py_pkgs=("pybind11==3.1.0" "scikit-build-core==1.1.2" "numpy>=2" matplotlib pytest hypothesis tqdm
         "pybind11-stubgen==3.0.0" "mypy==2.4.1"
         # tests/extender: requests built from the official client's models; /metrics read by the
         # official Prometheus text parser; deploy/'s CRD schema checked by jsonschema.
         "kubernetes==37.0.2" "prometheus_client==0.26.0" "jsonschema==4.26.0"
         # python/tools/offline_bound.py: the LP bound, solved by HiGHS through scipy.optimize.
         "scipy==1.16.3"
         # python/tools/typical_pods.py: reads and writes profile files.
         "PyYAML>=6")
if ! python3 -c "import pybind11, scikit_build_core, numpy, matplotlib, pytest, hypothesis, tqdm, pybind11_stubgen, mypy, kubernetes, prometheus_client, jsonschema, scipy, yaml" 2>/dev/null; then
  echo "install-deps: pip install ${py_pkgs[*]}" >&2
  # Debian 12's own python3 refuses system-wide pip installs (PEP 668) unless told otherwise.
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q "${py_pkgs[@]}"
fi
