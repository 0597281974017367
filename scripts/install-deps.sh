#!/usr/bin/env bash
# Installs the Debian packages attnprop needs to build, test and benchmark.
# Idempotent: runs `apt-get update` and `apt-get install` only when a package is missing.
set -euo pipefail

# python3-torch and python3-numpy: the PyTorch exporter python/attnprop_torch and its tests
# (CTest label python, run by /usr/bin/python3), and the PyTorch baseline of the benchmarks
# (bench/torch_baseline.py).
packages=(
  build-essential cmake pkg-config
  libboost-dev libgmp-dev libmpfr-dev libflint-arb-dev libflint-dev
  librapidcheck-dev catch2 libcli11-dev libfmt-dev
  libbenchmark-dev
  python3 python3-torch python3-numpy
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing missing Debian packages: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "install-deps: not root and no sudo; install these packages: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
