# Sourced by the GUI tests: re-runs the calling script inside its own private
# X server, so tests never touch the user's display or each other's windows.
if [ -z "${ATTENTION_LAB_IN_XVFB:-}" ]; then
  export ATTENTION_LAB_IN_XVFB=1
  # (-a alone starts every search at :99: two tests started together can both
  # take :99, and one then loses its display when the other's server exits.
  # A random first number makes that collision all but impossible.)
  exec xvfb-run -a -n $((100 + RANDOM % 4000)) -s "-screen 0 ${XVFB_SCREEN:-1280x800x24}" bash "$0" "$@"
fi
