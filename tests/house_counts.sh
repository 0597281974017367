#!/usr/bin/env bash
# Measures what a new kind touches, so that the counts of docs/architecture.md ("What a new kind
# touches, measured") cannot go stale. For each kind of extension, the code files (src/, props/,
# bench/, fuzz/, python/binding/) that name the kinds of that extension are found and compared,
# as a set, with the files the doc's row lists:
#   attention kind  every enumerator of model::attention_kind after the first three (hard, soft,
#                   average-hard, which other code assigns: the soft counterpart of a hard model,
#                   the generators), by `attention_kind::<enumerator>` or its file-format name
#                   as a string literal;
#   map kind        the last alternative of model::map_impl (the newest kind), as a word;
#   graph op        the last alternative of model::graph_op, as a word.
# A file that names the kind and is not in the row, or a row's file that no longer names it,
# fails the test with both lists: a new place a kind must be handled is either removed or
# written down. (Scalar kinds are kept in their files by kind_tests.sh and by kinds.hpp's checks
# of every user kind's hooks.)
# Usage: house_counts.sh SOURCE_DIR, or house_counts.sh --self-test (its negative control: a
# small tree whose code names a kind in a file its doc does not list must fail, and one that
# lists a file that does not name it must fail too).
set -u

code_files() { find src props bench fuzz python/binding \( -name '*.cpp' -o -name '*.hpp' \) 2>/dev/null | sort; }

# The files of the doc's row whose first cell is $1 ("attention kind", "map kind", "graph op"):
# every `src/...`, `props/...` path in the row's second cell.
documented() {
  grep -E "^\| $1 \|" docs/architecture.md | head -1 | awk -F'|' '{print $3}' |
    grep -oE '(src|props|bench|fuzz|python/binding)/[A-Za-z0-9_./-]+\.(c|h)pp' | sort -u
}

# The last alternative of `using NAME = std::variant<...>;` in src/model/maps.hpp, without
# template arguments.
last_alternative() {
  NAME=$1 perl -0777 -ne '
    if (/using\s+$ENV{NAME}\s*=\s*std::variant<(.*?)>;/s) {
      my $v = $1;
      1 while $v =~ s/<[^<>]*>//g;
      my @a = split /\s*,\s*/, $v;
      (my $l = $a[-1]) =~ s/\s+//g;
      print $l;
    }' src/model/maps.hpp
}

compare() { # compare NAME MEASURED-FILES...
  local name=$1 status=0; shift
  local measured doc
  measured=$(printf '%s\n' "$@" | sed '/^$/d' | sort -u)
  doc=$(documented "$name")
  if [[ -z $doc ]]; then
    echo "house_counts: docs/architecture.md has no row '| $name | ... |' listing its files"
    return 1
  fi
  local extra missing
  extra=$(comm -23 <(echo "$measured") <(echo "$doc"))
  missing=$(comm -13 <(echo "$measured") <(echo "$doc"))
  if [[ -n $extra ]]; then
    echo "house_counts: a new $name is handled in files the doc's row does not list:"
    sed 's/^/  /' <<< "$extra"; status=1
  fi
  if [[ -n $missing ]]; then
    echo "house_counts: the doc's row for a new $name lists files that no longer name one:"
    sed 's/^/  /' <<< "$missing"; status=1
  fi
  echo "$name: $(wc -l <<< "$measured") code files ($(tr '\n' ' ' <<< "$measured"))"
  return $status
}

check() {
  local root=$1 status=0
  cd "$root" || return 2
  # Attention kinds after the first three, and their file-format names (the registry's rows).
  local enums e name files=()
  # The enum may span lines (one enumerator a line once it outgrows one): the file read whole.
  enums=$(perl -0777 -ne 'print "$1\n" if /enum class attention_kind\s*\{([^}]*)\}/' src/model/attention_kind.hpp |
            tr ',' '\n' | sed 's/[[:space:]]//g' | sed '/^$/d' | tail -n +4)
  for e in $enums; do
    name=$(grep -oE "\{attention_kind::$e, \"[^\"]+\"" src/model/attention_kind.hpp | sed 's/.*"\(.*\)"/\1/')
    while IFS= read -r f; do files+=("$f"); done < <(code_files |
      xargs -r grep -l -E "attention_kind::$e\\b${name:+|\"$name\"}" 2>/dev/null)
  done
  if [[ -z $enums ]]; then
    echo "house_counts: no attention kind after the first three in src/model/attention_kind.hpp"
    status=1
  else
    compare "attention kind" "${files[@]}" || status=1
  fi
  local alt
  for pair in "map kind:map_impl" "graph op:graph_op"; do
    alt=$(last_alternative "${pair#*:}")
    if [[ -z $alt ]]; then
      echo "house_counts: no std::variant ${pair#*:} in src/model/maps.hpp"; status=1; continue
    fi
    mapfile -t files < <(code_files | xargs -r grep -lw "$alt")
    compare "${pair%%:*}" "${files[@]}" || status=1
  done
  return $status
}

self_test() {
  local tmp status=0 out
  tmp=$(mktemp -d) || exit 2
  trap 'rm -rf "$tmp"' EXIT
  local doc=architecture.md # the file documented() reads, in the small tree
  mkdir -p "$tmp/src/model" "$tmp/src/attention" "$tmp/src/cli" "$tmp/docs"
  cat > "$tmp/src/model/attention_kind.hpp" <<'EOF'
enum class attention_kind { hard, soft, average_hard, tidy };
    {attention_kind::tidy, "tidy", weighting::normaliser},
EOF
  cat > "$tmp/src/attention/soft_impl.hpp" <<'EOF'
    case model::attention_kind::tidy: return 1;
EOF
  cat > "$tmp/src/model/maps.hpp" <<'EOF'
using map_impl = std::variant<affine_map<S>, new_map>;
using graph_op = std::variant<input_op, scale_op<S>, new_op>;
struct new_map {}; struct new_op {};
EOF
  cat > "$tmp/docs/$doc" <<'EOF'
| attention kind | src/model/attention_kind.hpp, src/attention/soft_impl.hpp | 4 |
| map kind | src/model/maps.hpp | 1 |
| graph op | src/model/maps.hpp | 1 |
EOF
  if ! out=$(check "$tmp" 2>&1); then
    echo "self-test: a tree that matches its doc fails:"; echo "$out"; status=1
  fi
  # A kind handled in one more file: named by its string, and a map kind in a theorem folder.
  echo 'if (name == "tidy") {}' > "$tmp/src/cli/extra.cpp"
  mkdir -p "$tmp/src/soft_influence"
  echo 'void f(const new_map&);' > "$tmp/src/soft_influence/box.cpp"
  out=$(check "$tmp" 2>&1) && { echo "self-test: an unlisted file passed"; status=1; }
  for want in "src/cli/extra.cpp" "src/soft_influence/box.cpp"; do
    grep -q "  $want" <<< "$out" || { echo "self-test: $want not named:"; echo "$out"; status=1; }
  done
  rm "$tmp/src/cli/extra.cpp" "$tmp/src/soft_influence/box.cpp"
  # A listed file that no longer names the kind.
  sed -i 's/| graph op | src\/model\/maps.hpp/| graph op | src\/model\/maps.hpp, src\/model\/gone.cpp/' "$tmp/docs/$doc"
  out=$(check "$tmp" 2>&1) && { echo "self-test: a stale row passed"; status=1; }
  grep -q "  src/model/gone.cpp" <<< "$out" || { echo "self-test: the stale file not named:"; echo "$out"; status=1; }
  [[ $status == 0 ]] && echo "self-test: passed"
  exit $status
}

if [[ ${1:-} == --self-test ]]; then
  self_test
fi
check "${1:?usage: house_counts.sh SOURCE_DIR | --self-test}"
