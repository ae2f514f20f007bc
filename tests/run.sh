#!/bin/sh
# tests/run.sh — runs every test program and suite, sums their "N passed, N failed" lines.
# usage: run.sh BUILD_DIR [COMMAND...]: every BUILD_DIR/tests/test_* program, then each
# further argument as a shell command line (programs and suites from the Makefile's
# TEST_PROGS / TEST_CMDS).
# MGOPT_TEST_RUNNER, when set, prefixes each BUILD_DIR/tests program (e.g. qemu-s390x
# for programs built by a cross compiler: `make test-cross`).
B=${1:-build}
[ $# -gt 0 ] && shift
total_p=0; total_f=0; status=0

run_one() { # $1: label, $2: command line
  out=$(sh -c "$2" 2>&1); rc=$?
  last=$(printf '%s\n' "$out" | tail -n 1)
  p=$(printf '%s\n' "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
  f=$(printf '%s\n' "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
  if [ -z "$p" ]; then
    echo "$1: no summary line (exit $rc)"; printf '%s\n' "$out" | tail -n 20
    total_f=$((total_f + 1)); status=1; return
  fi
  if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ]; then
    printf '%s\n' "$out" | grep -v '^[0-9]* passed, [0-9]* failed$'
    status=1
  fi
  echo "$1: $last"
  # a test that skipped part of its work says so on a line starting "note:"
  printf '%s\n' "$out" | awk -v t="$1" '/^note:/ && !seen[$0]++ { print "  " t ": " $0 }'
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "$1: exit status $rc despite no failed test"; f=1
  fi
  total_p=$((total_p + p)); total_f=$((total_f + f))
}

for t in "$B"/tests/test_*; do
  [ -x "$t" ] || continue
  run_one "$(basename "$t")" "${MGOPT_TEST_RUNNER:+$MGOPT_TEST_RUNNER }\"$t\""
done
for c in "$@"; do
  label=${c#"${MGOPT_TEST_RUNNER:-}" }  # name the program, not its runner
  label=${label%% *}
  run_one "$(basename "$label")" "$c"
done
echo "$total_p passed, $total_f failed"
[ "$status" -eq 0 ] && [ "$total_f" -eq 0 ]
