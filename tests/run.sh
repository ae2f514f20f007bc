#!/bin/sh
# tests/run.sh — runs every test program and suite, sums their "N passed, N failed" lines.
B=${1:-build}
total_p=0; total_f=0; status=0
for t in "$B"/tests/test_*; do
  [ -x "$t" ] || continue
  out=$("$t" 2>&1); rc=$?
  last=$(printf '%s\n' "$out" | tail -n 1)
  p=$(printf '%s\n' "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
  f=$(printf '%s\n' "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
  if [ -z "$p" ]; then
    echo "$(basename "$t"): no summary line (exit $rc)"; printf '%s\n' "$out" | tail -n 20
    total_f=$((total_f + 1)); status=1; continue
  fi
  if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ]; then
    printf '%s\n' "$out" | grep -v '^[0-9]* passed, [0-9]* failed$'
    status=1
  fi
  echo "$(basename "$t"): $last"
  total_p=$((total_p + p)); total_f=$((total_f + f))
done
echo "$total_p passed, $total_f failed"
[ "$status" -eq 0 ] && [ "$total_f" -eq 0 ]
