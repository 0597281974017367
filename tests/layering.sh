#!/usr/bin/env bash
# Checks every #include "folder/..." of src/ and props/ against the rooms of
# docs/architecture.md: a folder includes only the folders listed before it there (and itself).
# Usage: layering.sh SOURCE_DIR. Prints each offending include (file:line) and exits 1.
set -u
root=${1:?usage: layering.sh SOURCE_DIR}
cd "$root" || exit 2

# folder -> the folders it may include (besides itself)
declare -A may=(
  [numeric]=""
  [util]="numeric"
  [model]="numeric util"
  [attention]="model numeric util"
  [lang]="util"
  [hard_limit]="attention model numeric lang util"
  [soft_influence]="attention model numeric lang util"
  [soft_hard]="soft_influence attention model numeric lang util"
  [report]="hard_limit soft_influence soft_hard attention model numeric lang util"
  [gen]="attention model numeric lang util"
  [runner]="report hard_limit soft_influence soft_hard attention model numeric lang util"
  [props]="gen runner report hard_limit soft_influence soft_hard attention model numeric lang util"
  [dist]="props gen runner report hard_limit soft_influence soft_hard attention model numeric lang util"
  [cli]="dist props gen runner report hard_limit soft_influence soft_hard attention model numeric lang util"
)

status=0
while IFS= read -r file; do
  case $file in
    props/*) folder=props ;;
    src/*) folder=${file#src/}; folder=${folder%%/*} ;;
  esac
  if [[ -z ${may[$folder]+set} ]]; then
    echo "$file: folder '$folder' is not in the table of docs/architecture.md (tests/layering.sh)"
    status=1
    continue
  fi
  while IFS=: read -r line target; do
    dep=${target%%/*}
    [[ $dep == "$folder" ]] && continue
    [[ " ${may[$folder]} " == *" $dep "* ]] && continue
    [[ -z ${may[$dep]+set} ]] && continue # not one of ours (a generated header, a library)
    echo "$file:$line: $folder/ may not include $target (docs/architecture.md, the rooms)"
    status=1
  done < <(grep -n -o -E '^#include "[a-z_]+/[^"]+"' "$file" | sed -E 's/#include "//; s/"$//')
done < <(find src props -name '*.cpp' -o -name '*.hpp' | sort)
[[ $status == 0 ]] && echo "layering: every include follows docs/architecture.md"
exit $status
