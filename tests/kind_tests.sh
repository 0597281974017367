#!/usr/bin/env bash
# Checks that no code outside src/numeric tests which scalar kind it runs in: what differs
# between kinds is a hook of the kind in its own header (docs/architecture.md, "One place per
# scalar kind"), so a new kind touches the files that list says and no generic code. A type
# test names a kind or a kind's template parameter S in std::is_same / std::same_as /
# std::holds_alternative / kind_choice::is<...>.
# Usage: kind_tests.sh SOURCE_DIR, or kind_tests.sh --self-test (the negative control: a tree
# with planted type tests must fail, naming each). Prints each offending line (file:line) and
# exits 1.
set -u

kinds='S|double|float|rational|mpfr_real|arb_ball|dinterval|interval|diff_ball|soft_change_scalar'
pattern="(is_same(_v)?|same_as|holds_alternative|\\.is)[[:space:]]*<([^;]*[^[:alnum:]_:])?[[:space:]]*(numeric::)?(${kinds})[[:space:]]*[,>]"

scan() {
  local root=$1 status=0
  while IFS= read -r hit; do
    echo "$hit: a type test of a scalar kind outside src/numeric (docs/architecture.md, \"One place per scalar kind\")"
    status=1
  done < <(cd "$root" && find src props -name '*.cpp' -o -name '*.hpp' 2>/dev/null | sort |
             grep -v '^src/numeric/' | xargs -r grep -n -E "$pattern" /dev/null)
  return $status
}

if [[ ${1:-} == --self-test ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/src/soft_influence" "$tmp/src/numeric" "$tmp/src/model" "$tmp/props"
  printf '%s\n' 'if constexpr (std::is_same_v<S, numeric::dinterval>) return 5;' > "$tmp/src/soft_influence/a.cpp"
  printf '%s\n' 'constexpr bool c = std::same_as<double, S>;' > "$tmp/props/b.cpp"
  printf '%s\n' 'if (attempt.scalar.is<numeric::dinterval>()) {}' > "$tmp/src/soft_influence/c.cpp"
  printf '%s\n' 'std::holds_alternative<S>(e->value)' > "$tmp/src/model/d.hpp"
  # Allowed: a kind's own files in src/numeric, and type tests of other things (graph ops).
  printf '%s\n' 'template <class S> inline constexpr bool x = std::is_same_v<S, arb_ball>;' > "$tmp/src/numeric/e.hpp"
  printf '%s\n' 'if constexpr (!std::is_same_v<T, input_op>) out.push_back(T::name);' > "$tmp/src/model/f.cpp"
  out=$(scan "$tmp")
  status=$?
  expected="src/model/d.hpp:1 src/soft_influence/a.cpp:1 src/soft_influence/c.cpp:1 props/b.cpp:1"
  for e in $expected; do
    if ! grep -q "^$e:" <<< "$out"; then
      echo "self-test: the planted type test $e was not found"; echo "$out"; exit 1
    fi
  done
  if grep -q -E '^src/(numeric/e\.hpp|model/f\.cpp)' <<< "$out"; then
    echo "self-test: an allowed line was reported"; echo "$out"; exit 1
  fi
  [[ $status == 1 ]] || { echo "self-test: the scan did not fail"; exit 1; }
  echo "kind tests: the check finds every planted type test"
  exit 0
fi

root=${1:?usage: kind_tests.sh SOURCE_DIR | --self-test}
if scan "$root"; then
  echo "kind tests: no type test of a scalar kind outside src/numeric"
  exit 0
fi
exit 1
