#!/usr/bin/env bash
# sbx's one entry point. Every subcommand first installs whatever Debian
# packages the build needs and are missing, then generates and builds.
#
#   ./build.sh run              build, then run the renderer demo
#   ./build.sh test             build, run every suite (out/Default), the
#                               same under ASan+UBSan (out/Asan), then each
#                               fuzz target for a bounded time (out/Fuzz)
#   ./build.sh build            build out/Default only
#   ./build.sh bench [ARGS]     build, then run sbx-bench
#   ./build.sh install PREFIX   build, then install libsbx, headers, sbx.pc
#                               and the tools under PREFIX
#   ./build.sh deps             only install missing packages
#
# Environment: SBX_FUZZ_SECONDS (default 60) bounds each fuzz target;
# SBX_SKIP_ASAN=1 / SBX_SKIP_FUZZ=1 skip those stages locally;
# SBX_CORPUS_DIR names the corpus of third-party policy files the policy
# suites read (build/corpus.gni; default: ../shared/corpus when it exists,
# else those tests are skipped and counted as skipped).
set -euo pipefail

cd "$(dirname "$(readlink -f "$0")")"
ROOT=$PWD

# Build: gn ninja gcc clang (fuzzers), libraries. Tests: setpriv
# (util-linux), python3, and the programs sbx-run is tested on.
# Benchmarks: bubblewrap (comparison only). Containers: runc, and
# busybox-static for a container's root file system. Workers running real
# libraries: pango, cairo, fontconfig and a font.
PACKAGES=(
  generate-ninja ninja-build gcc pkg-config python3
  clang llvm-14 libclang-rt-14-dev clang-format
  libseccomp-dev libglib2.0-dev check libjson-glib-dev zlib1g-dev
  libpango1.0-dev libcairo2-dev libfontconfig-dev fonts-dejavu-core
  util-linux sqlite3 tar gzip bubblewrap runc busybox-static
)

log() { printf '==> %s\n' "$*" >&2; }

install_deps() {
  local missing=() p
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing missing packages: ${missing[*]}"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || {
      echo "build.sh: missing packages (${missing[*]}) and not root; install them with apt-get" >&2
      exit 1
    }
    sudo=(sudo)
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# gen DIR ARGS: (re)generate an output tree when its args changed.
gen() {
  local dir=$1 args=$2
  if [ -n "${SBX_CORPUS_DIR:-}" ]; then
    args="${args:+$args }sbx_corpus_dir=\"$(readlink -f "$SBX_CORPUS_DIR")\""
  fi
  if [ ! -f "$dir/build.ninja" ] || [ "$(cat "$dir/args.gn" 2>/dev/null)" != "$args" ]; then
    mkdir -p "$dir"
    printf '%s' "$args" >"$dir/args.gn"
    gn gen "$dir" >/dev/null
  fi
}

build_default() {
  gen out/Default ""
  # Every #include must come from a declared dependency.
  gn check out/Default
  ninja -C out/Default
}

# Prints the suites' output and keeps their `N passed, N failed, N skipped`
# counts.
TOTAL_PASSED=0
TOTAL_FAILED=0
TOTAL_SKIPPED=0
run_check() {
  local dir=$1 log_file
  log_file=$(mktemp)
  set +e
  ninja -C "$dir" check 2>&1 | tee "$log_file"
  local rc=${PIPESTATUS[0]}
  set -e
  local line
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log_file" | tail -n 1 || true)
  rm -f "$log_file"
  if [ -z "$line" ]; then
    TOTAL_FAILED=$((TOTAL_FAILED + 1))
    log "$dir: the suites did not complete (ninja exit $rc)"
    return
  fi
  TOTAL_PASSED=$((TOTAL_PASSED + $(echo "$line" | cut -d' ' -f1)))
  TOTAL_FAILED=$((TOTAL_FAILED + $(echo "$line" | cut -d' ' -f3)))
  TOTAL_SKIPPED=$((TOTAL_SKIPPED + $(echo "$line" | cut -d' ' -f5)))
  [ "$rc" -eq 0 ] || [ "$(echo "$line" | cut -d' ' -f3)" -ne 0 ] || TOTAL_FAILED=$((TOTAL_FAILED + 1))
}

# Seeds of a fuzz target: sandbox/tests/fuzz/seeds/NAME.dirs lists seed
# directories relative to the repository root, one per line; @corpus/ names
# the corpus (SBX_CORPUS_DIR, else ../shared/corpus), skipped when absent.
run_fuzzers() {
  local seconds=${SBX_FUZZ_SECONDS:-60} f name work seeds
  [ -d out/Fuzz/fuzz ] || { log "no fuzz targets built"; return; }
  for f in out/Fuzz/fuzz/*; do
    [ -x "$f" ] && [ -f "$f" ] || continue
    name=$(basename "$f")
    work=$(mktemp -d)
    seeds=()
    if [ -f "sandbox/tests/fuzz/seeds/$name.dirs" ]; then
      while read -r d; do
        case "$d" in
          @corpus/*) d="${SBX_CORPUS_DIR:-$ROOT/../shared/corpus}/${d#@corpus/}" ;;
          ?*) d="$ROOT/$d" ;;
        esac
        [ -n "$d" ] && [ -d "$d" ] && seeds+=("$d")
      done <"sandbox/tests/fuzz/seeds/$name.dirs"
    fi
    log "fuzzing $name for ${seconds}s"
    if ASAN_OPTIONS=detect_leaks=1 "$f" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 "$work" "${seeds[@]}" >"$work.log" 2>&1; then
      tail -n 3 "$work.log"
      echo "fuzz $name: ok"
      TOTAL_PASSED=$((TOTAL_PASSED + 1))
    else
      tail -n 60 "$work.log"
      echo "fuzz $name: FAILED"
      TOTAL_FAILED=$((TOTAL_FAILED + 1))
    fi
    rm -rf "$work" "$work.log"
  done
}

# Every C file must be as clang-format (the checked-in .clang-format) writes
# it; each one that is not counts as a failure and is named.
check_format() {
  local files f bad=()
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files=$(git ls-files '*.c' '*.h')
  else
    files=$(find sandbox tools examples -name '*.[ch]' | sort)
  fi
  for f in $files; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -eq 0 ]; then
    echo "format: every C file as .clang-format writes it"
    TOTAL_PASSED=$((TOTAL_PASSED + 1))
  else
    log "not formatted (run clang-format -i on them): ${bad[*]}"
    TOTAL_FAILED=$((TOTAL_FAILED + ${#bad[@]}))
  fi
}

cmd_test() {
  check_format
  build_default
  run_check out/Default
  if [ "${SBX_SKIP_ASAN:-0}" != 1 ]; then
    log "ASan + UBSan build"
    gen out/Asan "is_asan=true is_ubsan=true"
    ninja -C out/Asan
    SBX_TEST_TIMEOUT_SCALE=4 run_check out/Asan
  fi
  if [ "${SBX_SKIP_FUZZ:-0}" != 1 ]; then
    log "fuzz targets (libFuzzer, ASan)"
    gen out/Fuzz "is_fuzzer=true is_asan=true"
    ninja -C out/Fuzz fuzzers
    run_fuzzers
  fi
  echo "total: $TOTAL_PASSED passed, $TOTAL_FAILED failed, $TOTAL_SKIPPED skipped"
  [ "$TOTAL_FAILED" -eq 0 ]
}

cmd_run() {
  build_default
  exec out/Default/renderer-demo "$@"
}

cmd_install() {
  local prefix=${1:?usage: ./build.sh install PREFIX}
  build_default
  python3 build/install.py out/Default "$prefix"
}

main() {
  local cmd=${1:-build}
  [ $# -gt 0 ] && shift
  case "$cmd" in
    deps) install_deps ;;
    build) install_deps && build_default ;;
    run) install_deps && cmd_run "$@" ;;
    test) install_deps && cmd_test ;;
    bench) install_deps && build_default && exec out/Default/sbx-bench "$@" ;;
    install) install_deps && cmd_install "$@" ;;
    *)
      echo "usage: ./build.sh run|test|build|bench|install PREFIX|deps" >&2
      exit 2
      ;;
  esac
}

main "$@"
