#!/usr/bin/env bash
# Checks that attention kinds are asked about, never compared (docs/architecture.md, "Adding an
# attention kind"): outside the registry (src/model/attention_kind.hpp) no code of src/, props/,
# bench/ or fuzz/ compares a kind with an enumerator (`== attention_kind::x`, `x != ...`, also
# across lines) or calls is_hard_kind, and a switch over the kind (`case attention_kind::x:`)
# is found only in the registry and the kernels (src/attention/). Assigning a kind
# (`m.attention = attention_kind::soft`) is not a question and is allowed.
# Usage: attention_kinds.sh SOURCE_DIR, or attention_kinds.sh --self-test (its negative
# control: a small tree with every kind of offence must fail, each one named; a clean tree must
# pass). Prints each offence (file:line) and exits 1.
set -u

check() {
  local root=$1 status=0 file rel hits
  cd "$root" || return 2
  while IFS= read -r file; do
    rel=${file#./}
    [[ $rel == src/model/attention_kind.hpp ]] && continue
    # Comparisons and is_hard_kind, matched across line breaks; one "file:line: text" each.
    hits=$(perl -0777 -ne '
      while (/((?:[!=]=\s*(?:model::)?attention_kind::\w+)|(?:(?:model::)?attention_kind::\w+\s*[!=]=)|\bis_hard_kind\b)/g) {
        my $line = 1 + (substr($_, 0, $-[0]) =~ tr/\n//);
        (my $text = $1) =~ s/\s+/ /g;
        print "$ARGV:$line: $text\n";
      }' "$rel")
    if [[ -n $hits ]]; then
      while IFS= read -r h; do
        echo "$h: compares an attention kind; ask the registry (model/attention_kind.hpp) instead"
      done <<< "$hits"
      status=1
    fi
    if [[ $rel != src/attention/* ]]; then
      hits=$(grep -n -E '\bcase[[:space:]]+(model::)?attention_kind::' "$rel" | cut -d: -f1)
      for l in $hits; do
        echo "$rel:$l: switches over the attention kind outside the registry and the kernels (src/attention/)"
        status=1
      done
    fi
  done < <(find ./src ./props ./bench ./fuzz \( -name '*.cpp' -o -name '*.hpp' \) 2>/dev/null | sort)
  return $status
}

self_test() {
  local out status=0
  tmp=$(mktemp -d) || exit 2
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/src/model" "$tmp/src/attention" "$tmp/src/cli" "$tmp/props"
  cat > "$tmp/src/model/attention_kind.hpp" <<'EOF'
constexpr bool ok(attention_kind k) { return k == attention_kind::hard; }
EOF
  cat > "$tmp/src/attention/kernel.cpp" <<'EOF'
void f(attention_kind k) {
    switch (k) {
    case attention_kind::hard: break;
    }
}
EOF
  cat > "$tmp/src/cli/fine.cpp" <<'EOF'
void g(model& m) { m.attention = model::attention_kind::soft; }
EOF
  if ! out=$(check "$tmp" 2>&1); then
    echo "self-test: a clean tree fails:"; echo "$out"; status=1
  fi
  cat > "$tmp/src/cli/equal.cpp" <<'EOF'
bool a(model& m) { return m.attention == model::attention_kind::soft; }
EOF
  cat > "$tmp/props/unequal.cpp" <<'EOF'
bool b(model& m) {
    return m.attention !=
           attention_kind::hard;
}
EOF
  cat > "$tmp/src/attention/reversed.hpp" <<'EOF'
bool c(attention_kind k) { return attention_kind::average_hard == k; }
EOF
  cat > "$tmp/src/cli/old.cpp" <<'EOF'
bool d(model& m) { return model::is_hard_kind(m.attention); }
EOF
  cat > "$tmp/src/cli/switch.cpp" <<'EOF'
int e(attention_kind k) {
    switch (k) {
    case model::attention_kind::soft: return 1;
    }
}
EOF
  out=$(check "$tmp" 2>&1) && { echo "self-test: a tree with offences passes"; status=1; }
  for want in "src/cli/equal.cpp:1:" "props/unequal.cpp:2:" "src/attention/reversed.hpp:1:" \
              "src/cli/old.cpp:1:" "src/cli/switch.cpp:3:"; do
    if ! grep -q -F "./$want" <<< "$out" && ! grep -q -F "$want" <<< "$out"; then
      echo "self-test: the offence at $want is not named"; status=1
    fi
  done
  if grep -q -E "^(\./)?src/(cli/fine.cpp|attention/kernel.cpp|model/attention_kind.hpp):" <<< "$out"; then
    echo "self-test: an allowed file is named:"; echo "$out"; status=1
  fi
  [[ $status == 0 ]] && echo "attention kinds: the self-test's offences are each named"
  return $status
}

if [[ ${1:-} == --self-test ]]; then
  self_test
  exit $?
fi
root=${1:?usage: attention_kinds.sh SOURCE_DIR | --self-test}
if check "$root"; then
  echo "attention kinds: no comparison outside the registry, switches only in src/attention/"
  exit 0
fi
exit 1
