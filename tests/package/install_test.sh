#!/usr/bin/env bash
# `cmake --install` to a fresh prefix, then the tree moved elsewhere: the app
# still finds its lessons there (one exists only in the installed tree, so the
# source tree cannot be what answers), and every file of the desktop
# integration is where the README says.
#   install_test.sh BUILD_DIR OUT_DIR
set -uo pipefail
source "$(dirname "$0")/../gui/run_in_xvfb.sh"
build=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

rm -rf "$out" && mkdir -p "$out"
cmake --install "$build" --prefix "$out/prefix" >"$out/install.log" || { cat "$out/install.log"; exit 1; }
mv "$out/prefix" "$out/moved"
p=$out/moved
for f in bin/attention-lab bin/attention-lab-cli share/attention-lab/lessons/order.txt \
         share/applications/attention-lab.desktop share/mime/packages/attention-lab.xml \
         share/icons/hicolor/scalable/apps/attention-lab.svg share/man/man1/attention-lab.1.gz \
         share/man/man1/attention-lab-cli.1.gz share/doc/attention-lab/README.md; do
  [ -f "$p/$f" ] || fail "$f is not installed"
done
for size in 16 22 24 32 48 64 128 256; do
  python3 - "$p/share/icons/hicolor/${size}x${size}/apps/attention-lab.png" "$size" <<'PY' || fail "icon ${size}x${size}"
import struct, sys
data = open(sys.argv[1], "rb").read()
w, h = struct.unpack(">II", data[16:24])
sys.exit(0 if data[:8] == b"\x89PNG\r\n\x1a\n" and w == h == int(sys.argv[2]) else 1)
PY
done

# A lesson only the installed tree has.
sed 's/"title": "[^"]*"/"title": "Only installed"/' "$p/share/attention-lab/lessons/causal-masking.json" \
  >"$p/share/attention-lab/lessons/only-installed.json"
unset ATTENTION_LAB_LESSONS
"$p/bin/attention-lab" --lesson only-installed --size 1024x640 --screenshot "$out/only-installed.png" ||
  fail "the moved install tree did not find its own lesson"
python3 "$here/../gui/png_check.py" 1024 640 "$out/only-installed.png" || fail "the screenshot is not a real picture"

[ "$fails" -eq 0 ] && echo "cmake --install to a prefix, moved, finds its data"
exit $((fails > 0))
