#!/bin/sh
# tests/install/test_install.sh — `make install` into a temporary DESTDIR, then a
# consumer built against the staged prefix with pkg-config and with CMake's
# find_package(mgopt CONFIG), run, then `make uninstall` leaves no file behind.
# usage: test_install.sh [BUILD_DIR] [CC]   (from the repository root; make test runs it)
# The consumer's implementation file is compiled once, at -O0 (a few seconds), and
# linked into both consumers. pkg-config or cmake missing: that part is skipped
# with a note.
B=${1:-build}
CC=${2:-${CC:-cc}}
ROOT=$(pwd)
PREFIX=/usr/local
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
check() { # check DESCRIPTION COMMAND...
  d=$1; shift
  if "$@" >"$T/out" 2>&1; then ok; else bad "$d"; tail -n 30 "$T/out"; fi
}

T=$(mktemp -d "${TMPDIR:-/tmp}/mgopt-install.XXXXXX") || { echo "0 passed, 1 failed"; exit 1; }
trap 'rm -rf "$T"' EXIT
STAGE=$T/stage
P=$STAGE$PREFIX
# `make` here inherits the calling make's variables (MAKEFLAGS), so B's configuration
# is the same and nothing is rebuilt; MAKELEVEL keeps its messages quiet.
mk() { make --no-print-directory -s -C "$ROOT" B="$B" PREFIX="$PREFIX" DESTDIR="$STAGE" "$@"; }

VERSION=$(sed -n 's/^#define MGOPT_VERSION_STRING "\(.*\)"$/\1/p' "$ROOT/src/api.h")

# ---------------------------------------------------------------- install
check "make install" mk install
for f in bin/mgopt include/mgopt.h include/mgopt_passes.h lib/pkgconfig/mgopt.pc \
         lib/cmake/mgopt/mgoptConfig.cmake lib/cmake/mgopt/mgoptConfigVersion.cmake \
         lib/cmake/mgopt/mgoptTargets.cmake; do
  if [ -f "$P/$f" ]; then ok; else bad "not installed: $f"; fi
done
n=$(find "$STAGE" -type f | wc -l)
if [ "$n" -eq 7 ]; then ok; else bad "make install wrote $n files, expected 7:"; find "$STAGE" -type f; fi
if cmp -s "$P/include/mgopt.h" "$ROOT/mgopt.h" && cmp -s "$P/include/mgopt_passes.h" "$ROOT/mgopt_passes.h"
then ok; else bad "the installed headers differ from the repository's"; fi
check "the installed tool runs" "$P/bin/mgopt" --list-passes

# ---------------------------------------------------------------- the consumer's implementation, once
INC="-I$P/include"
CWARN="-std=c99 -Wall -Wextra -Wpedantic -Werror"
if command -v pkg-config >/dev/null 2>&1; then
  PCP="PKG_CONFIG_PATH=$P/lib/pkgconfig"
  v=$(env "$PCP" pkg-config --modversion mgopt 2>&1)
  if [ "$v" = "$VERSION" ]; then ok; else bad "pkg-config --modversion mgopt: '$v', expected $VERSION"; fi
  cflags=$(env "$PCP" pkg-config --cflags mgopt | sed 's/ *$//')
  libs=$(env "$PCP" pkg-config --libs mgopt | sed 's/ *$//')
  if [ "$cflags" = "-I$P/include" ] || [ "$(cd "${cflags#-I}" 2>/dev/null && pwd -P)" = "$(cd "$P/include" && pwd -P)" ]
  then ok; else bad "pkg-config --cflags mgopt: '$cflags', expected -I$P/include"; fi
  case " $libs " in *" -lm "*) ok ;; *) bad "pkg-config --libs mgopt: '$libs' lacks -lm" ;; esac
  INC=$cflags
else
  echo "note: pkg-config not installed: the pkg-config consumer is not built"
fi
# shellcheck disable=SC2086 # the flags are words
check "the implementation compiles in its own file" \
  $CC $CWARN -O0 -c $INC -o "$T/impl.o" "$ROOT/tests/install/consumer_impl.c"

# ---------------------------------------------------------------- pkg-config consumer
if [ -n "${PCP:-}" ]; then
  # shellcheck disable=SC2086
  check "the pkg-config consumer links" \
    $CC $CWARN $cflags -o "$T/consumer_pc" "$ROOT/tests/install/consumer_main.c" "$T/impl.o" $libs
  check "the pkg-config consumer runs" "$T/consumer_pc"
fi

# ---------------------------------------------------------------- CMake consumer
if command -v cmake >/dev/null 2>&1; then
  mkdir -p "$T/cm"
  cat > "$T/cm/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.14)
project(consumer C)
# a newer or incompatible version is refused (before 1.0, the minor version must match)
find_package(mgopt 99.0 CONFIG QUIET)
if(mgopt_FOUND)
  message(FATAL_ERROR "find_package(mgopt 99.0) accepted version \${mgopt_VERSION}")
endif()
string(REGEX MATCH "^[0-9]+\\\\.[0-9]+" mm "$VERSION")
find_package(mgopt \${mm} CONFIG REQUIRED)
if(NOT mgopt_VERSION STREQUAL "$VERSION")
  message(FATAL_ERROR "mgopt_VERSION is \${mgopt_VERSION}, expected $VERSION")
endif()
get_target_property(libs mgopt::mgopt INTERFACE_LINK_LIBRARIES)
if(NOT "m" IN_LIST libs)
  message(FATAL_ERROR "mgopt::mgopt does not link libm: \${libs}")
endif()
add_executable(consumer "$ROOT/tests/install/consumer_main.c" "$T/impl.o")
target_link_libraries(consumer PRIVATE mgopt::mgopt)
CMAKE
  check "cmake finds mgopt::mgopt (CMAKE_PREFIX_PATH=staged prefix)" \
    cmake -S "$T/cm" -B "$T/cm/build" -DCMAKE_C_COMPILER="$CC" -DCMAKE_PREFIX_PATH="$P" \
      -DCMAKE_C_FLAGS="$CWARN" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  check "the CMake consumer builds" cmake --build "$T/cm/build"
  check "the CMake consumer runs" "$T/cm/build/consumer"
else
  echo "note: cmake not installed: the CMake consumer is not built"
fi

# ---------------------------------------------------------------- uninstall
check "make uninstall" mk uninstall
left=$(find "$STAGE" -type f | wc -l)
if [ "$left" -eq 0 ]; then ok; else bad "make uninstall left $left files:"; find "$STAGE" -type f; fi
if [ ! -e "$P/lib/cmake/mgopt" ]; then ok; else bad "make uninstall left lib/cmake/mgopt"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
