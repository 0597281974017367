#!/usr/bin/env bash
# Installs the Debian packages attnprop needs to build, test and benchmark.
#   scripts/install-deps.sh           the build (g++), tests (python3-torch for the python
#                                     tests) and benchmarks
#   scripts/install-deps.sh --fuzz    also clang and libFuzzer, for `make fuzz` (fuzz/)
# Idempotent: runs `apt-get update` and `apt-get install` only when a package is missing.
set -euo pipefail

# python3-torch and python3-numpy: the PyTorch importer python/attnprop_torch and its tests
# (CTest label python, run by /usr/bin/python3), and the PyTorch baseline of the benchmarks
# (bench/torch_baseline.py); python3-onnx: its ONNX reader (import_onnx) and the ONNX tests.
packages=(
  build-essential cmake pkg-config
  # ccache: the build of `make test-nompi` reuses the objects of `make test`'s (all but the
  # world of src/dist), also on a machine whose cache starts empty (docs/reliability.md)
  ccache
  libboost-dev libgmp-dev libmpfr-dev libflint-arb-dev libflint-dev
  librapidcheck-dev catch2 libcli11-dev libfmt-dev
  # MPI: check, influence and restrict over ranks (ATTNPROP_MPI; the C API only) and mpirun
  libopenmpi-dev openmpi-bin
  libbenchmark-dev
  python3 python3-torch python3-numpy python3-onnx
  # figures: rsvg-convert renders the SVGs to PNG, in DejaVu Sans, the font their layout measures
  librsvg2-bin fonts-dejavu-core
)
# `install-deps.sh --fuzz` installs clang++-14 and its runtime (libclang_rt.fuzzer and the
# sanitizers for clang).
for opt in "$@"; do
  case "$opt" in
    --fuzz) packages+=(clang-14 libclang-rt-14-dev) ;;
    *) echo "install-deps.sh: unknown option $opt (--fuzz)" >&2; exit 2 ;;
  esac
done

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
