#!/bin/sh
# tests/valgrind.sh — the whole test suite under valgrind memcheck: every
# BUILD_DIR/tests/test_* program (unit, golden, fuzz corpus replays), the compile
# tests, the examples, the differential tester (2 programs per pass) and the
# tool tests (the tool itself under memcheck). usage: valgrind.sh BUILD_DIR
# (built by `make test-valgrind`, which calls this).
# Each valgrind process writes its report to BUILD_DIR/valgrind/PID.log, so a
# report is seen even where a test expects a failing exit status; any
# non-empty report, leak (definite or indirect) or failed test fails the run.
B=${1:-build-vg}
logs=$B/valgrind
rm -rf "$logs"
mkdir -p "$logs" || exit 1
logs=$(cd "$logs" && pwd)
VG="valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 --log-file=$logs/%p.log"
# the tool tests take the tool's path: give them one that runs it under memcheck
printf '#!/bin/sh\nexec %s "%s" "$@"\n' "$VG" "$(cd "$B" && pwd)/mgopt" > "$B/mgopt-valgrind"
chmod +x "$B/mgopt-valgrind"
set --
for t in "$B"/compile/test_*; do
  case $t in
    *.o | *.d) continue ;;
    # clang++ writes DWARF 5 forms that valgrind's reader (3.19) gives up on;
    # the same program built by g++ (test_cxx) runs under memcheck
    */test_clangxx) echo "note: test_clangxx is not run under valgrind (its debug info)"; continue ;;
  esac
  [ -x "$t" ] && set -- "$@" "$VG $t"
done
MGOPT_TEST_RUNNER="$VG" sh tests/run.sh "$B" "$@" \
  "$VG $B/difftest -n 2 --seed 1 --out $B --summary" \
  "tests/tool/test_tool.sh $B/mgopt-valgrind"
st=$?
for e in "$B"/examples/*; do
  case $e in *.out) continue ;; esac
  [ -x "$e" ] || continue
  $VG "$e" > "$e.out" 2>&1
  rc=$?
  if [ $rc -eq 0 ] || [ $rc -eq 77 ]; then echo "example $(basename "$e"): ok"
  else echo "example $(basename "$e"): FAILED (exit $rc)"; tail -n 20 "$e.out"; st=1; fi
done
n=0
for l in "$logs"/*.log; do
  [ -s "$l" ] || continue
  n=$((n + 1))
  echo "valgrind report $l:"
  head -n 40 "$l"
done
echo "valgrind: $(ls "$logs" | wc -l) processes checked, $n with a report"
[ $st -eq 0 ] && [ $n -eq 0 ]
