#!/bin/sh
# tests/install/compare_installs.sh A B — two install trees (e.g. `cmake --install`'s
# and `make install`'s) hold the same files, with the same content except the two
# CMake files each build writes its own way (mgoptTargets.cmake, mgoptConfigVersion.cmake).
A=$1; B=$2
pass=0; fail=0
la=$(cd "$A" && find . -type f | sort); lb=$(cd "$B" && find . -type f | sort)
if [ -n "$la" ] && [ "$la" = "$lb" ]; then pass=$((pass + 1)); else
  fail=$((fail + 1)); echo "FAIL: the file lists differ:"; printf '%s\n' "$la" > "$A.list"
  printf '%s\n' "$lb" | diff "$A.list" - ; fi
for f in $la; do
  case $f in
    */mgoptTargets.cmake|*/mgoptConfigVersion.cmake|./bin/mgopt) continue ;;
  esac
  if cmp -s "$A/$f" "$B/$f"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $f differs"; fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
