# Shared by scripts/run and scripts/test: install what is missing, then build.
# Sourced, not executed.

ATTENTION_LAB_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libimgui-dev libglfw3-dev libegl-dev libegl-mesa0 python3-glad libeigen3-dev libgtest-dev libbenchmark-dev
  nlohmann-json3-dev libstb-dev libgl1-mesa-dri libgl1-mesa-dev fonts-dejavu-core
  xvfb xauth xdotool x11-apps
  clang libclang-rt-14-dev libomp-dev
  libpcre2-dev zlib1g-dev libsentencepiece-dev sentencepiece
  libopenblas0-openmp
)

repo_root() { cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd; }

# Installs only the packages that are not installed yet; sudo only when not root.
#   ensure_packages             the packages every build needs (above)
#   ensure_packages lintian …   those named (scripts/package's tools)
ensure_packages() {
  local missing=() wanted=("$@")
  [ $# -eq 0 ] && wanted=("${ATTENTION_LAB_PACKAGES[@]}")
  for pkg in "${wanted[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "Installing missing packages: ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -ne 0 ] && sudo=(sudo)
  "${sudo[@]}" apt-get update -q -o DPkg::Lock::Timeout=600
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    -o DPkg::Lock::Timeout=600 "${missing[@]}"
}

# build PRESET: configure (once) and build with two jobs.
build_preset() {
  local preset=$1 root
  root=$(repo_root)
  cmake -S "$root" --preset "$preset" >/dev/null
  cmake --build "$root/build/$preset" -j2
}

# The sanitizer suite's binaries: no GUI binary, no benchmarks (scripts/test's asan stage).
build_asan_targets() {
  local root
  root=$(repo_root)
  cmake -S "$root" --preset asan >/dev/null
  cmake --build "$root/build/asan" -j2 --target core_tests gui_logic_tests attention-lab-cli
}

# build_fuzz_targets TARGET…: the libFuzzer binaries named (fuzz_TARGET; scripts/fuzz).
build_fuzz_targets() {
  local root
  root=$(repo_root)
  cmake -S "$root" --preset fuzz >/dev/null
  cmake --build "$root/build/fuzz" -j2 --target "${@/#/fuzz_}"
}

# fuzz_target_names: every target under fuzz/targets/, one per line.
fuzz_target_names() {
  local f
  for f in "$(repo_root)"/fuzz/targets/*.cpp; do basename "$f" .cpp; done
}
