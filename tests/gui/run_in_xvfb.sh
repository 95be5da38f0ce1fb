# Sourced by the GUI tests: re-runs the calling script inside its own private
# X server, so tests never touch the user's display or each other's windows.
if [ -z "${ATTENTION_LAB_IN_XVFB:-}" ]; then
  export ATTENTION_LAB_IN_XVFB=1
  exec xvfb-run -a -s "-screen 0 ${XVFB_SCREEN:-1280x800x24}" bash "$0" "$@"
fi
