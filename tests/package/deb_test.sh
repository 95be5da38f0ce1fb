#!/usr/bin/env bash
# The .deb of scripts/package, extracted with dpkg -x (not installed): its
# dependencies were computed, both programs run from the extracted tree, the
# app finds its lessons there (a package has no source tree to fall back on),
# opens a lesson file given as its argument, refuses a bad one, and draws a
# real picture.
#   deb_test.sh DEB_DIR SOURCE_DIR OUT_DIR
set -uo pipefail
source "$(dirname "$0")/../gui/run_in_xvfb.sh"
deb_dir=$1 source_dir=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

debs=("$deb_dir"/attention-lab_*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || { echo "FAIL: expected one .deb in $deb_dir, found: ${debs[*]}"; exit 1; }
deb=${debs[0]}
rm -rf "$out" && mkdir -p "$out"
tree=$out/extracted
dpkg -x "$deb" "$tree" || { echo "FAIL: dpkg -x $deb"; exit 1; }

# dpkg-shlibdeps named the libraries the binaries link, with versions.
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for lib in 'libc6 (>=' 'libglfw3 (>=' 'libgomp1 (>=' 'libpcre2-8-0 (>=' 'libstdc++6 (>=' fonts-dejavu-core; do
  [[ $depends == *"$lib"* ]] || fail "Depends does not name $lib"
done
# OpenBLAS is loaded at run time (a model's products), so it is recommended, not required.
# OpenBLAS for a model's products; Mesa's EGL vendor for pictures with no display.
[ "$(dpkg-deb -f "$deb" Recommends)" = "libopenblas0-openmp, libegl-mesa0" ] ||
  fail "Recommends is '$(dpkg-deb -f "$deb" Recommends)', expected 'libopenblas0-openmp, libegl-mesa0'"

# State and settings of its own: never the user's, nor a neighbouring test's.
export XDG_STATE_HOME="$out/state" XDG_CONFIG_HOME="$out/config"
app=$tree/usr/bin/attention-lab cli=$tree/usr/bin/attention-lab-cli
version=$(dpkg-deb -f "$deb" Version)
"$cli" --version | grep -qx "attention-lab-cli ${version%-*}" || fail "attention-lab-cli --version is not ${version%-*}"
"$app" --version | grep -qx "attention-lab ${version%-*}" || fail "attention-lab --version is not ${version%-*}"
"$cli" preset book -o "$out/book.json" && "$cli" validate "$out/book.json" >/dev/null || fail "the CLI cannot write and validate a preset"

# No path of the build machine inside: the data is found relative to the executable.
grep -q -- "$source_dir" "$app" && fail "the packaged app holds the source path $source_dir"
[ -f "$tree/usr/share/attention-lab/lessons/order.txt" ] || fail "the lessons are not in usr/share/attention-lab/lessons"
desktop-file-validate "$tree/usr/share/applications/attention-lab.desktop" || fail "desktop-file-validate"

unset ATTENTION_LAB_LESSONS
# The default scenario, a built-in lesson found in the extracted tree, and a lesson file as the argument (%f).
"$app" --size 1280x720 --screenshot "$out/default.png" 2>"$out/default.err" || fail "--screenshot exited $?"
grep -q "not found" "$out/default.err" && fail "the app did not find its font: $(cat "$out/default.err")"
"$app" --lesson causal-masking --lesson-step 2 --size 1280x720 --screenshot "$out/lesson.png" ||
  fail "the built-in lesson causal-masking did not open from the extracted tree"
"$app" "$tree/usr/share/attention-lab/lessons/why-sqrt-dk.json" --size 1280x720 --screenshot "$out/lesson-file.png" ||
  fail "a lesson file given as the argument did not open"
python3 "$here/../gui/png_check.py" 1280 720 "$out/default.png" "$out/lesson.png" "$out/lesson-file.png" ||
  fail "a screenshot is not a real picture"

# A file that is neither a scenario nor a lesson: exit 2, naming both kinds.
echo '{"hello": 1}' >"$out/neither.json"
"$app" "$out/neither.json" --screenshot "$out/x.png" 2>"$out/neither.err"
[ $? -eq 2 ] || fail "a file that is neither a scenario nor a lesson did not exit 2"
grep -q "scenario" "$out/neither.err" && grep -q "lesson" "$out/neither.err" ||
  fail "the message for a bad file does not name the kinds expected: $(cat "$out/neither.err")"

[ "$fails" -eq 0 ] && echo "the .deb extracts and runs: $deb"
exit $((fails > 0))
