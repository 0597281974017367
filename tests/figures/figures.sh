#!/bin/sh
# figures.sh MODE BIN SVG_CHECK GOLDEN_DIR WORK_DIR: the figures attnprop's commands write.
#
#   MODE=make      writes the reports under WORK_DIR (the fixture of the two tests below):
#                  influence sweeps with a cross-entropy (cc-parity, PARITY), with a constant
#                  cross-entropy and a growing n * influence (cc-parity-ln0), without one
#                  (soft-positional-i), with an undefined row (soft-majority-ln0); a restrict
#                  sweep (hard-parity-attempt); plot's overlay of the two cc-parity sweeps, of
#                  two simulate runs and of two restrict sweeps; a report's figures without
#                  title (report.md has it) and with --figure-text; and a
#                  restrict run without the renderer, which
#                  writes the SVG, no PNG, and says why in report.md.
#   MODE=geometry  every SVG passes svg_check (no NaN or infinity, every text inside the
#                  canvas, no two texts overlapping), and one baseline per kind equals the
#                  approved one in GOLDEN_DIR after dropping the "made by" line (the version and
#                  commit). ATTNPROP_APPROVE=1 copies the new figures over the baselines instead.
#   MODE=png       attnprop rendered every SVG to a PNG (and plot's to a PDF) with its renderer; exit 77 (skipped)
#                  when the renderer (rsvg-convert) is not installed.
# POSIX sh.
set -u
mode=$1 bin=$2 check=$3 golden=$4 work=$5

svgs() { find "$work" -name '*.svg' | sort; }

case $mode in
make)
    rm -rf "$work" && mkdir -p "$work" || exit 1
    run() { # run EXPECTED_EXIT args...
        want=$1; shift
        "$bin" "$@" >"$work/last.log" 2>&1
        got=$?
        [ "$got" -eq "$want" ] || { echo "attnprop $*: exit $got, expected $want"; cat "$work/last.log"; exit 1; }
    }
    run 0 influence --model cc-parity --n 8,16,32,64 --inputs 2 --language parity --out "$work/cc-parity"
    run 0 influence --model cc-parity-ln0 --n 8,16,64,256 --inputs 2 --positions 2 --language parity --out "$work/cc-parity-ln0"
    run 0 influence --model soft-positional-i --n 8,16,32 --inputs 2 --out "$work/soft-positional-i"
    run 4 influence --model soft-majority-ln0 --n 3,4,6,8 --inputs 2 --out "$work/soft-majority-ln0"
    run 0 restrict --model hard-parity-attempt --n 8:256:x2 --language parity --samples 8 --out "$work/restrict"
    # plot: two sweeps overlaid (layer norm at eps = 0 against none), for papers.
    run 0 plot "$work/cc-parity" "$work/cc-parity-ln0" --out "$work/overlay"
    [ -f "$work/overlay/influence.svg" ] || { echo "plot wrote no overlay/influence.svg"; exit 1; }
    for m in cc-parity cc-parity-ln0; do
        grep -q ">$m<" "$work/overlay/influence.svg" || { echo "overlay: no legend entry $m"; exit 1; }
    done
    ! grep -q -e 'Verdict' -e 'passed' -e 'log scale' "$work/overlay/influence.svg" ||
        { echo "overlay: a verdict or '(log scale)' in the image"; exit 1; }
    grep -q '^| .*cc-parity-ln0 | not-applicable |$' "$work/overlay/report.md" ||
        { echo "overlay: report.md lacks the verdicts"; cat "$work/overlay/report.md"; exit 1; }
    # plot of simulate folders (the smallest certified beta against n) and of restrict folders.
    run 0 simulate --model hard-first-one-position --beta 100 --n 8,16,32 --out "$work/simulate-a"
    run 0 simulate --model hard-first --beta 100 --n 8,16,32 --out "$work/simulate-b"
    run 0 plot "$work/simulate-a" "$work/simulate-b" --out "$work/overlay-simulate"
    for m in hard-first-one-position hard-first; do
        grep -q ">$m" "$work/overlay-simulate/beta.svg" || { echo "overlay-simulate: no legend entry $m"; exit 1; }
    done
    run 0 restrict --model hard-first --n 8:64:x2 --samples 8 --out "$work/restrict-first"
    run 0 plot "$work/restrict" "$work/restrict-first" --out "$work/overlay-restrict"
    for m in hard-parity-attempt hard-first; do
        grep -q ">$m<" "$work/overlay-restrict/restrict.svg" || { echo "overlay-restrict: no legend entry $m"; exit 1; }
    done
    grep -q '^| .*restrict-first | hard-first | 8, 16, 32, 64 |$' "$work/overlay-restrict/report.md" ||
        { echo "overlay-restrict: report.md lacks the folders"; cat "$work/overlay-restrict/report.md"; exit 1; }
    # A report's figures carry no title or caption: report.md has them; --figure-text draws them.
    grep -q 'one-symbol influence against the input length n' "$work/cc-parity/influence.svg" &&
        { echo "cc-parity/influence.svg: a title in the image"; exit 1; }
    grep -q 'restrictions keeping' "$work/restrict/restrict.svg" &&
        { echo "restrict/restrict.svg: a title in the image"; exit 1; }
    grep -q '^Figure `influence`: cc-parity: one-symbol influence against the input length n\.$' "$work/cc-parity/report.md" ||
        { echo "cc-parity/report.md lacks the figure's title"; cat "$work/cc-parity/report.md"; exit 1; }
    grep -q '^Figure `restrict`: hard-parity-attempt: restrictions keeping' "$work/restrict/report.md" ||
        { echo "restrict/report.md lacks the figure's title"; exit 1; }
    texts=$work/../figures-with-text
    rm -rf "$texts"
    "$bin" restrict --model hard-parity-attempt --n 8,16 --samples 8 --figure-text --out "$texts" >"$work/last.log" 2>&1 ||
        { echo "restrict --figure-text failed:"; cat "$work/last.log"; exit 1; }
    grep -q 'restrictions keeping' "$texts/restrict.svg" ||
        { echo "restrict --figure-text: no title in the image"; exit 1; }
    for f in cc-parity/influence.svg cc-parity/cross_entropy.svg cc-parity-ln0/cross_entropy.svg \
             soft-positional-i/influence.svg soft-majority-ln0/influence.svg restrict/restrict.svg; do
        [ -f "$work/$f" ] || { echo "$f was not written"; exit 1; }
    done
    [ ! -f "$work/soft-positional-i/cross_entropy.svg" ] ||
        { echo "a sweep without cross-entropy wrote cross_entropy.svg"; exit 1; }
    # Without the renderer: the same exit code, the SVG, no PNG (an earlier one is removed), and
    # report.md says why. (This folder is not one of the figures checked below.)
    norender=$work/../figures-no-renderer
    rm -rf "$norender" && mkdir -p "$norender" && : > "$norender/restrict.png"
    ATTNPROP_SVG_RENDERER=attnprop-no-such-renderer "$bin" restrict --model hard-parity-attempt \
        --n 8,16,32 --samples 8 --out "$norender" --force >"$work/last.log" 2>&1 ||
        { echo "restrict without a renderer failed:"; cat "$work/last.log"; exit 1; }
    [ -f "$norender/restrict.svg" ] && [ ! -e "$norender/restrict.png" ] ||
        { echo "without a renderer: expected restrict.svg and no restrict.png"; ls "$norender"; exit 1; }
    grep -q '^No PNG: attnprop-no-such-renderer not found (Debian package librsvg2-bin)\.$' "$norender/report.md" ||
        { echo "report.md does not say why there is no PNG:"; cat "$norender/report.md"; exit 1; }
    exit 0
    ;;
geometry)
    # shellcheck disable=SC2046
    "$check" $(svgs) || exit 1
    status=0
    for pair in influence:cc-parity/influence.svg cross_entropy:cc-parity-ln0/cross_entropy.svg \
                restrict:restrict/restrict.svg undefined:soft-majority-ln0/influence.svg \
                overlay:overlay/influence.svg; do
        kind=${pair%%:*} file=$work/${pair#*:}
        grep -v '^<!-- made by ' "$file" >"$work/$kind.normalised"
        if [ "${ATTNPROP_APPROVE:-}" = 1 ]; then
            cp "$work/$kind.normalised" "$golden/$kind.svg" && echo "approved $golden/$kind.svg"
        elif ! cmp -s "$work/$kind.normalised" "$golden/$kind.svg"; then
            echo "$kind: $file differs from the approved $golden/$kind.svg:"
            diff "$golden/$kind.svg" "$work/$kind.normalised" | head -20
            echo "(look at it: rsvg-convert -o x.png $file; approve: ATTNPROP_APPROVE=1 ctest -R 'figures: geometry')"
            status=1
        fi
    done
    exit $status
    ;;
png)
    renderer=${ATTNPROP_SVG_RENDERER-rsvg-convert}
    if [ -z "$renderer" ] || ! command -v "$renderer" >/dev/null 2>&1; then
        echo "SKIPPED: the SVG renderer '$renderer' is not installed (Debian package librsvg2-bin); no PNG to check"
        exit 77
    fi
    status=0
    for s in $(svgs); do
        p=${s%.svg}.png
        if [ ! -s "$p" ]; then
            echo "$p was not written"; status=1; continue
        fi
        # A PNG signature; rendered from this very SVG (checked for one figure of each command,
        # a rendering takes a few tenths of a second).
        sig=$(od -An -tx1 -N8 "$p" | tr -d ' \n')
        [ "$sig" = 89504e470d0a1a0a ] || { echo "$p is not a PNG"; status=1; }
        case $s in */cc-parity/influence.svg|*/restrict/restrict.svg)
            "$renderer" --zoom 2 --output "$work/again.png" "$s" || { echo "$renderer fails on $s"; status=1; }
            cmp -s "$p" "$work/again.png" || { echo "$p is not the rendering of $s"; status=1; } ;;
        esac
        dir=$(dirname "$s")
        grep -q "\`$(basename "$p")\`" "$dir/report.md" || { echo "$dir/report.md does not list $(basename "$p")"; status=1; }
    done
    # plot's PDF, rendered from its SVG by the same renderer.
    pdf=$work/overlay/influence.pdf
    [ "$(head -c 5 "$pdf" 2>/dev/null)" = "%PDF-" ] || { echo "$pdf is not a PDF"; status=1; }
    grep -q '`influence.pdf`' "$work/overlay/report.md" || { echo "overlay/report.md does not list influence.pdf"; status=1; }
    echo "checked $(svgs | wc -l) PNGs and a PDF"
    exit $status
    ;;
*)
    echo "usage: figures.sh make|geometry|png BIN SVG_CHECK GOLDEN_DIR WORK_DIR" >&2
    exit 64
    ;;
esac
