#!/bin/sh
# tests/tool/test_tool.sh — the command-line tool end to end: its file I/O (a mapped
# input, large weights written through the kernel's file-to-file copy, writing
# over its own input), --repeat, its errors, and the README's pass table against
# --list-passes. usage: test_tool.sh PATH/TO/mgopt
# Prints "N passed, N failed" last, like the unit tests.
mgopt=${1:-build/mgopt}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
check() { # check DESCRIPTION COMMAND...: passes when the command succeeds
  d=$1
  shift
  if "$@" > "$work/last.out" 2>&1; then ok; else bad "$d"; sed 's/^/  /' "$work/last.out" | tail -n 5; fi
}
refuse() { # refuse DESCRIPTION PATTERN COMMAND...: the command must fail, saying PATTERN
  d=$1
  pat=$2
  shift 2
  if "$@" > "$work/last.out" 2>&1; then bad "$d (succeeded)"
  elif grep -q "$pat" "$work/last.out"; then ok
  else bad "$d (no '$pat' in the message)"; sed 's/^/  /' "$work/last.out" | tail -n 5; fi
}

# A model with weights large enough for every output path: a 96 KB and a
# 300 KB tensor (written from the mapped input by file-to-file copy), a 20 KB
# one (past the writer's 4 KB borrow size but inside the tool's write buffer)
# and small ones. Made by mgopt from .mil text.
awk 'function vals(n, s,   i) { for (i = 0; i < n; i++) printf "%s%g", (i ? ", " : ""), ((i * s) % 97) / 8 }
BEGIN {
  print "main(%x: (24576, fp32)) {"
  printf "  %%a: (24576, fp32)* = const(val=["; vals(24576, 7); print "])"
  printf "  %%b: (76800, fp32)* = const(val=["; vals(76800, 13); print "])"
  printf "  %%c: (5000, fp32)* = const(val=["; vals(5000, 3); print "])"
  print "  %y: (24576, fp32) = add(x=%x, y=%a)"
  print "  %z: (76800, fp32) = mul(x=%b, y=%b)"
  print "  %w: (5000, fp32) = sub(x=%c, y=%c)"
  print "} -> (%y, %z, %w)"
}' > "$work/big.mil"
check "write a model with large weights" "$mgopt" "$work/big.mil" -o "$work/big.onnx" -p none
check "read it back (mapped input)" "$mgopt" "$work/big.onnx" -o "$work/big2.onnx" -p none
check "print both" sh -c "'$mgopt' '$work/big.onnx' -o '$work/a.mil' -p none && '$mgopt' '$work/big2.onnx' -o '$work/b.mil' -p none"
check "the re-written model holds the same program" cmp "$work/a.mil" "$work/b.mil"
check "and the same bytes" cmp "$work/big.onnx" "$work/big2.onnx"
check "the program is the one written" sh -c "grep -v '^#' '$work/big.mil' | cmp - '$work/a.mil'"

# Writing over the input: the output must be what a separate file gets
check "optimize into a new file" "$mgopt" "$work/big.onnx" -o "$work/sep.onnx" -p default
cp "$work/big.onnx" "$work/inplace.onnx"
check "optimize a file onto itself" "$mgopt" "$work/inplace.onnx" -o "$work/inplace.onnx" -p default
check "in place equals separate" cmp "$work/sep.onnx" "$work/inplace.onnx"

# An existing output is replaced whole: the model goes to a temporary file in
# its directory, renamed over the target when fully written. A longer old file
# leaves nothing behind, the new file keeps the old one's mode, and a hard
# link to the old file keeps the old contents (the name now names a new file)
head -c 2000000 /dev/urandom > "$work/over.onnx"
chmod 600 "$work/over.onnx"
ln "$work/over.onnx" "$work/over-link.onnx"
check "optimize onto a longer existing file" "$mgopt" "$work/big.onnx" -o "$work/over.onnx" -p default
check "no old bytes remain" cmp "$work/sep.onnx" "$work/over.onnx"
check "the replaced file's mode is kept" sh -c "[ \"\$(stat -c %a '$work/over.onnx')\" = 600 ]"
check "a hard link keeps the old file" sh -c "! [ '$work/over.onnx' -ef '$work/over-link.onnx' ] && [ \$(wc -c < '$work/over-link.onnx') = 2000000 ]"
check "a new file gets the umask's mode" sh -c "umask 027 && '$mgopt' '$work/big.onnx' -o '$work/um.onnx' -p none && [ \"\$(stat -c %a '$work/um.onnx')\" = 640 ] && '$mgopt' '$work/big.onnx' -o '$work/um.mil' -p none && [ \"\$(stat -c %a '$work/um.mil')\" = 640 ]"
ln -s /dev/null "$work/null.onnx"
check "a device is written as it is (no temporary renamed over it)" sh -c "'$mgopt' '$work/big.onnx' -o '$work/null.onnx' -p none && [ -L '$work/null.onnx' ]"
printf 'short' > "$work/short.onnx"
check "optimize onto a shorter existing file" "$mgopt" "$work/big.onnx" -o "$work/short.onnx" -p default
check "it grew to the model" cmp "$work/sep.onnx" "$work/short.onnx"

# --repeat does the same job each time and reports the median
check "--repeat 3" "$mgopt" "$work/big.onnx" -o "$work/rep.onnx" -p default --repeat 3
cp "$work/last.out" "$work/rep.out"
check "--repeat prints the median" grep -q "3 runs in this process: median" "$work/rep.out"
check "--repeat output is the single run's" cmp "$work/sep.onnx" "$work/rep.onnx"
refuse "--repeat 0" "repeat needs" "$mgopt" "$work/big.onnx" -o "$work/rep.onnx" --repeat 0

# External data from the tool, then read back through the mapped input
check "--external" "$mgopt" "$work/big.onnx" -o "$work/ext.onnx" -p none --external 65536
check "side file written" test -s "$work/ext.onnx.data"
check "external model reads back" "$mgopt" "$work/ext.onnx" -o "$work/ext.mil" -p none
check "same program through external data" cmp "$work/a.mil" "$work/ext.mil"

# Errors: a message, an exit status, no crash
refuse "missing input" "^mgopt: cannot open $work/none.onnx: No such file or directory\$" "$mgopt" "$work/none.onnx" -o "$work/o.onnx"
refuse "missing .mil input" "^mgopt: cannot read $work/none.mil: No such file or directory\$" "$mgopt" "$work/none.mil" -o "$work/o.onnx"
mkdir "$work/dir.onnx"
refuse "a directory" "^mgopt: cannot read $work/dir.onnx: Is a directory\$" "$mgopt" "$work/dir.onnx" -o "$work/o.onnx"
printf 'hello, not a model\n' > "$work/text.onnx"
refuse "a text file" "^$work/text.onnx: not an ONNX model (byte 0: 0x68 starts no ModelProto field)\$" "$mgopt" "$work/text.onnx" -o "$work/o.onnx"
for f in none.onnx dir.onnx text.onnx; do # exit status 1, nothing written
  "$mgopt" "$work/$f" -o "$work/o.onnx" > /dev/null 2>&1
  [ $? = 1 ] && ok || bad "$f: exit status is not 1"
done
head -c 1000 "$work/big.onnx" > "$work/trunc.onnx"
refuse "truncated model" "byte" "$mgopt" "$work/trunc.onnx" -o "$work/o.onnx"
: > "$work/empty.onnx"
refuse "empty file" "graph" "$mgopt" "$work/empty.onnx" -o "$work/o.onnx"
refuse "output directory missing" "^mgopt: cannot open $work/no/such/dir/o.onnx for writing: No such file or directory\$" \
  "$mgopt" "$work/big.onnx" -o "$work/no/such/dir/o.onnx"
refuse "output directory missing (--external)" "^mgopt: cannot open $work/no/such/dir/o.onnx.data for writing: No such file or directory\$" \
  "$mgopt" "$work/big.onnx" -o "$work/no/such/dir/o.onnx" --external 1000
refuse "output directory missing (.mil)" "^mgopt: cannot write $work/no/such/dir/o.mil: No such file or directory\$" \
  "$mgopt" "$work/big.onnx" -o "$work/no/such/dir/o.mil"
[ -e "$work/o.onnx" ] && bad "a failed run left an output file" || ok
mkdir "$work/ro"
chmod 555 "$work/ro"
if [ -w "$work/ro" ]; then : # root writes anyway: nothing to test
else
  refuse "read-only directory" "^mgopt: cannot open $work/ro/o.onnx for writing: Permission denied\$" \
    "$mgopt" "$work/big.onnx" -o "$work/ro/o.onnx"
  refuse "read-only directory (.mil)" "^mgopt: cannot write $work/ro/o.mil: Permission denied\$" \
    "$mgopt" "$work/big.onnx" -o "$work/ro/o.mil"
fi
chmod 755 "$work/ro"

# A write that fails part way (past a file-size limit: EFBIG; SIGXFSZ is
# ignored by the tool) changes nothing: the input written over stays
# byte-identical, a new output and its .data file do not appear, and no
# temporary file is left in the directory
mkdir "$work/lim"
cp "$work/big.onnx" "$work/lim/m.onnx"
printf 'old data' > "$work/lim/m.onnx.data"
cp "$work/lim/m.onnx" "$work/m.orig"
lim() { (ulimit -f 200 && "$mgopt" "$@") > "$work/lim.out" 2>&1; }
lim "$work/lim/m.onnx" -o "$work/lim/m.onnx" -p none
[ $? = 1 ] && ok || bad "in place past the size limit: exit status is not 1"
check "with the reason" grep -qx "mgopt: cannot write $work/lim/m.onnx: File too large" "$work/lim.out"
check "the input written over is untouched" cmp "$work/m.orig" "$work/lim/m.onnx"
lim "$work/lim/m.onnx" -o "$work/lim/m.onnx" -p none --external 1000
[ $? = 1 ] && ok || bad "in place with --external past the size limit: exit status is not 1"
check "the input and its old .data file are untouched" sh -c "cmp '$work/m.orig' '$work/lim/m.onnx' && [ \"\$(cat '$work/lim/m.onnx.data')\" = 'old data' ]"
lim "$work/lim/m.onnx" -o "$work/lim/n.onnx" -p none
[ $? = 1 ] && ok || bad "a new file past the size limit: exit status is not 1"
lim "$work/lim/m.onnx" -o "$work/lim/e.onnx" -p none --external 1000
[ $? = 1 ] && ok || bad "a new file with --external past the size limit: exit status is not 1"
check "--external names the file" grep -qx "mgopt: cannot write $work/lim/e.onnx.data: File too large" "$work/lim.out"
lim "$work/lim/m.onnx" -o "$work/lim/n.mil" -p none
[ $? = 1 ] && ok || bad "a .mil past the size limit: exit status is not 1"
check "no partial output and no temporary left" sh -c "[ \"\$(ls -A '$work/lim' | tr '\n' ' ')\" = 'm.onnx m.onnx.data ' ]"
check "in place with --external succeeds without the limit" "$mgopt" "$work/lim/m.onnx" -o "$work/lim/m.onnx" -p none --external 1000
check "and reads back" sh -c "'$mgopt' '$work/lim/m.onnx' -o '$work/lim.mil' -p none && cmp '$work/a.mil' '$work/lim.mil' && [ \$(ls -A '$work/lim' | wc -l) = 2 ]"

# A failing pass is skipped with a warning; --strict stops at it
check "a failing pass is skipped" "$mgopt" "$work/a.mil" -o "$work/skip.mil" \
  -p 'image_input_preprocess{nhwc_inputs="nosuch"},dead_code_elimination'
cp "$work/last.out" "$work/skip.out"
check "with a warning" grep -q "warning: common::image_input_preprocess failed and was skipped" "$work/skip.out"
refuse "--strict stops at it" "nosuch" "$mgopt" "$work/a.mil" -o "$work/strict.mil" --strict \
  -p 'image_input_preprocess{nhwc_inputs="nosuch"},dead_code_elimination'

# Option values outside a pass's declared values are refused before any work:
# exit 2, the column and the allowed values, nothing written
badopt() { # badopt PIPELINE MESSAGE
  rm -f "$work/bo.onnx"
  "$mgopt" "$work/big.onnx" -o "$work/bo.onnx" -p "$1" > "$work/bo.out" 2>&1
  [ $? = 2 ] && ok || bad "$1: exit status is not 2"
  grep -qF "$2" "$work/bo.out" && ok || { bad "$1: no '$2' in the message"; sed 's/^/  /' "$work/bo.out"; }
  [ -e "$work/bo.onnx" ] && bad "$1: an output was written" || ok
}
badopt 'linear_quantize_weights{dtype=int9}' "column 31: bad value 'int9' for option 'dtype' of common::linear_quantize_weights (allowed: int8, uint8, int4, uint4)"
badopt 'palettize_weights{nbits=9}' "column 25: bad value '9' for option 'nbits' of common::palettize_weights (allowed: 0, 1, 2, 3, 4, 6, 8)"
badopt 'prune_weights{target_sparsity=1.5}' "column 31: bad value '1.5' for option 'target_sparsity' of common::prune_weights (allowed: -1, 0..1)"
printf '[linear_quantize_weights]\nglobal dtype = int9\n' > "$work/bad.cfg"
refuse "--compress-config: a bad value, at its line and column" \
  "^mgopt: $work/bad.cfg:2:16: bad value 'int9' for option 'dtype' of common::linear_quantize_weights (allowed: int8, uint8, int4, uint4)\$" \
  "$mgopt" "$work/big.onnx" -o "$work/bo.onnx" -p linear_quantize_weights --compress-config "$work/bad.cfg"
printf '[prune_weights]\nop_type add   mode=magnitude  target_sparsity=2, weight_threshold=0\n' > "$work/bad.cfg"
refuse "--compress-config: options separated by blanks" "^mgopt: $work/bad.cfg:2:47: bad value '2' for option 'target_sparsity'" \
  "$mgopt" "$work/big.onnx" -o "$work/bo.onnx" -p prune_weights --compress-config "$work/bad.cfg"
"$mgopt" "$work/big.onnx" -o "$work/bo.onnx" -p prune_weights --compress-config "$work/bad.cfg" > /dev/null 2>&1
[ $? = 2 ] && ok || bad "--compress-config: a bad value is exit status 2"
[ -e "$work/bo.onnx" ] && bad "--compress-config: an output was written" || ok
printf '[prune_weights]\nop_type add   mode=magnitude  target_sparsity=0.5 weight_threshold=0\nop_name "a b" skip\n' > "$work/good.cfg"
check "--compress-config: good values pass" "$mgopt" "$work/big.onnx" -o "$work/bo.onnx" -p prune_weights --compress-config "$work/good.cfg"

# The README's pass table is the registry's: `make pass-table` prints it from --list-passes
root=$(cd "$(dirname "$0")/../.." && pwd)
sh "$root/tests/tool/pass_table.sh" "$mgopt" > "$work/pass_table.md"
awk '/^\| pass \| family \| what it does \|$/ { on = 1 } on && !/^\|/ { exit } on' "$root/README.md" \
  > "$work/readme_table.md"
check "README's pass table = --list-passes (make pass-table prints it)" \
  diff "$work/readme_table.md" "$work/pass_table.md"

# mgopt test: conformance-style folders (tests/fixtures/conformance, made by
# tools/mkfixtures_conformance.py) through the pipeline and the evaluator
conf="$root/tests/fixtures/conformance"
for pl in none default; do
  check "mgopt test passes (-p $pl)" "$mgopt" test "$conf/pass" -p "$pl"
  check "one line per test and the counts (-p $pl)" sh -c "'$mgopt' test '$conf/pass' -p $pl > '$work/conf.out' && grep -c '^PASS test_' '$work/conf.out' | grep -qx 5 && tail -n 1 '$work/conf.out' | grep -qx 'test: 5 passed, 0 failed, 0 skipped'"
done
refuse "a wrong stored output fails" "^FAIL test_exp_wrong_output: test_data_set_0: output 0 ('y'): element 2" \
  "$mgopt" test "$conf"
check "the failure is counted, the skip named" sh -c "'$mgopt' test '$conf' | grep -q '^SKIP test_det: no kernel for onnx::Det' && '$mgopt' test '$conf' | grep -q '^test: 5 passed, 1 failed, 1 skipped\$'"
refuse "test needs a folder" "is not a folder" "$mgopt" test "$conf/pass/test_add_relu/model.onnx"
check "a Loop over constants with sequences, an If and CastLike (dynamo's as_strided) folds to constant indices" sh -c "'$mgopt' '$conf/pass/test_as_strided_loop/model.onnx' -o '$work/asl.mil' && ! grep -q 'Loop\|Sequence\|If\|CastLike' '$work/asl.mil' && grep -q '= gather(' '$work/asl.mil' && [ \$(grep -c ' = ' '$work/asl.mil') -le 4 ]"

# print_ir writes the program at its place in the pipeline and changes nothing
printf '%s\n' 'main(%x: (2, fp32)) {' '  %y: (2, fp32) = relu(x=%x)' '  %z: (2, fp32) = relu(x=%y)' '} -> (%z)' > "$work/pir.mil"
check "print_ir writes before and after a pass" sh -c "'$mgopt' '$work/pir.mil' -o '$work/pir.out.mil' -p 'print_ir{file=$work/pir0.mil},merge_consecutive_relus,print_ir{file=$work/pir1.mil}' && cmp '$work/pir.mil' '$work/pir0.mil' && cmp '$work/pir.out.mil' '$work/pir1.mil' && grep -c relu '$work/pir1.mil' | grep -qx 1"
refuse "print_ir without a file stops a strict pipeline" "no file given" "$mgopt" "$work/pir.mil" -o "$work/pir.out.mil" --strict -p print_ir
refuse "print_ir names the path it cannot write" "cannot open '$work/none/x.mil'" \
  "$mgopt" "$work/pir.mil" -o "$work/pir.out.mil" --strict -p "print_ir{file=$work/none/x.mil}"
# shorten_names on ONNX: internal values and initializers take short names, nodes
# none; the graph's inputs and outputs keep theirs, and the program is the same
printf '%s\n' 'main(%image: (2, fp32)) {' '  %"model/block_1/weights:0": (2, fp32)* = const(val=[1, 2])' \
  '  %"model/block_1/Add:0": (2, fp32) = add(x=%image, y=%"model/block_1/weights:0", name="model/block_1/Add")' \
  '  %scores: (2, fp32) = relu(x=%"model/block_1/Add:0", name="model/head/Relu")' '} -> (%scores)' > "$work/sn.mil"
check "shorten_names writes an ONNX model" sh -c "'$mgopt' '$work/sn.mil' -o '$work/sn0.onnx' -p none && '$mgopt' '$work/sn0.onnx' -o '$work/sn1.onnx' -p shorten_names"
check "its names are gone from the file, the interface's stay" sh -c "! grep -q 'model/' '$work/sn1.onnx' && grep -q 'model/block_1' '$work/sn0.onnx' && grep -q image '$work/sn1.onnx' && grep -q scores '$work/sn1.onnx'"
check "and it is smaller" sh -c "[ \$(wc -c < '$work/sn1.onnx') -lt \$(wc -c < '$work/sn0.onnx') ]"
check "the same program under the new names" sh -c "'$mgopt' '$work/sn1.onnx' -o '$work/sn1.mil' -p none && grep -q '%a: (2, fp32)\* = const(val=\[1, 2\])' '$work/sn1.mil' && grep -q '%b: (2, fp32) = add(x=%image, y=%a)' '$work/sn1.mil' && grep -q '%scores: (2, fp32) = relu(x=%b)' '$work/sn1.mil'"

# --compress-config: per-weight options of the compression passes (README)
cat > "$work/q.mil" <<'EOF2'
main(%x: (1, 4, fp32), %i: (1, 2, 3, 3, fp32)) {
  %w: (3, 4, fp32)* = const(val=[[-2, -10, 6, -3], [0, 0, 0, 0], [1, 2, 3, 4]])
  %y: (1, 3, fp32) = linear(x=%x, weight=%w)
  %w2: (3, 4, fp32)* = const(val=[[-2, -10, 6, -3], [0, 0, 0, 0], [1, 2, 3, 4]])
  %y2: (1, 3, fp32) = linear(x=%x, weight=%w2)
  %c: (3, 2, 1, 2, fp32)* = const(val=[[[[1, 2]], [[3, 4]]], [[[-1, 0.5]], [[0.25, 0]]], [[[8, -8]], [[4, 2]]]])
  %o: (1, 3, 3, 2, fp32) = conv(x=%i, weight=%c)
} -> (%y, %y2, %o)
EOF2
cat > "$work/q.cfg" <<'EOF2'
# int8 per channel, conv weights int4 linear per tensor, w2 left alone
[linear_quantize_weights]
global dtype=int8 weight_threshold=0
op_type conv dtype=int4, mode=linear, granularity=per_tensor, weight_threshold=0
op_name "w2" skip   # by the const's name
EOF2
check "--compress-config" "$mgopt" "$work/q.mil" -o "$work/q_out.mil" -p linear_quantize_weights --compress-config "$work/q.cfg" --strict
check "global rule: w per channel int8" grep -q '%w_quantized_scale: (3, 1, fp32)' "$work/q_out.mil"
check "op_type rule: conv weight int4 with an offset" grep -q '%c_quantized_offset: (1, 1, 1, 1, int4)' "$work/q_out.mil"
check "op_name skip: w2 stays" grep -q '%w2: (3, 4, fp32)\* = const' "$work/q_out.mil"
check "without the config: the pipeline's options for every weight" sh -c "'$mgopt' '$work/q.mil' -o '$work/q2.mil' -p 'linear_quantize_weights{weight_threshold=0}' && grep -q w2_quantized '$work/q2.mil' && grep -q c_quantized '$work/q2.mil'"
printf 'op_type conv dtype=int3\n' > "$work/bad.cfg"
refuse "a bad option value in the config (a rule for every pass: checked when it runs)" "bad value 'int3' for 'dtype' in \"dtype=int3\" (allowed: int8, uint8, int4, uint4)" \
  "$mgopt" "$work/q.mil" -o "$work/q3.mil" -p 'linear_quantize_weights{weight_threshold=0}' --compress-config "$work/bad.cfg" --strict
printf 'layer conv dtype=int4\n' > "$work/bad2.cfg"
refuse "a bad rule in the config" "bad2.cfg:1: a rule starts with" \
  "$mgopt" "$work/q.mil" -o "$work/q3.mil" --compress-config "$work/bad2.cfg"
# pruned weights in ONNX: a sparse_initializer when smaller (here 1 of 64 kept), read back dense
cat > "$work/sp.mil" <<'EOF2'
main(%x: (1, 16, fp32)) {
  %w: (4, 16, fp32)* = const(val=[[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 7.5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]])
  %y: (1, 4, fp32) = linear(x=%x, weight=%w)
} -> (%y)
EOF2
check "a pruned weight is written as a sparse_initializer" sh -c "'$mgopt' '$work/sp.mil' -o '$work/sp.onnx' -p 'prune_weights{weight_threshold=0}' --strict && '$mgopt' '$work/sp.mil' -o '$work/sd.onnx' -p none && [ \$(wc -c < '$work/sp.onnx') -lt \$(wc -c < '$work/sd.onnx') ]"
check "a sparse_initializer reads back dense" sh -c "'$mgopt' '$work/sp.onnx' -o '$work/sp_back.mil' -p none --strict && grep -q '\[0, 0, 7.5, 0, 0,' '$work/sp_back.mil'"

# subgraph initializers stay in their subgraph (no growth under -p none); a
# declared output shape the graph contradicts is kept, with a warning
sub="$root/tests/fixtures/subgraph"
check "-p none keeps a model with subgraph initializers from growing" sh -c "'$mgopt' '$sub/subgraph_inits.onnx' -o '$work/si.onnx' -p none && [ \$(wc -c < '$work/si.onnx') -le \$(wc -c < '$sub/subgraph_inits.onnx') ]"
check "a contradicted output declaration: the tool names the output and both shapes" sh -c "'$mgopt' '$sub/declared_output.onnx' -o '$work/do.onnx' -p none 2>&1 | grep -q \"warning: output 'y' is declared fp32 \\[1,seqlen\\] but the graph computes \\[1,1,?\\]\""

# No pipeline grows a file: a table read by a Gather and, transposed, by a
# MatMulInteger (tied embeddings) keeps its Transpose under -p default
# instead of being stored twice; an output larger than its input anyway
# (folds within the 1 KB allowance) is named on stderr with the folds
fx=$(dirname "$0")/../fixtures/interface
check "tied embeddings: -p default" "$mgopt" "$fx/tied_embedding.onnx" -o "$work/te.onnx" -p default
check "tied embeddings: not larger" sh -c "[ \$(wc -c < '$work/te.onnx') -le \$(wc -c < '$fx/tied_embedding.onnx') ]"
check "tied embeddings: no size warning" sh -c "! '$mgopt' '$fx/tied_embedding.onnx' -o '$work/te.onnx' -p default 2>&1 | grep -q 'larger than'"
cat > "$work/tile.mil" <<'EOF2'
main(%x: (200, fp32)) {
  %v: (2, fp32)* = const(val=[1.5, 2.25])
  %reps: (1, int32)* = const(val=[100])
  %t: (200, fp32) = tile(x=%v, reps=%reps)
  %y: (200, fp32) = add(x=%x, y=%t)
} -> (%y)
EOF2
check "a model that grows within the allowance" sh -c "'$mgopt' '$work/tile.mil' -o '$work/tile.onnx' -p none && '$mgopt' '$work/tile.onnx' -o '$work/tile2.onnx' -p default 2> '$work/tile.err'"
check "the growth is named: the op and the bytes" grep -q "warning: .*tile2.onnx is [0-9]* bytes larger than .*tile.onnx (largest folds: tile t folded to 800 bytes)" "$work/tile.err"

# The interface stays: every pipeline of the default set keeps main's inputs
# and outputs (names, order, dtypes, dims); an initializer that is also a
# graph input (IR 4 on) stays an input with its default, unless
# --constant-inputs; before IR 4 every initializer is an input, and constant
for pl in default default_fp16 cleanup fp16 quantization default_palettization; do
  for m in interface initializer_inputs tied_embedding; do
    check "$m under -p $pl: the interface stays" sh -c "'$mgopt' --print-interface '$fx/$m.onnx' > '$work/if.a' &&
      '$mgopt' '$fx/$m.onnx' -o '$work/if.onnx' -p $pl 2>/dev/null && '$mgopt' --print-interface '$work/if.onnx' > '$work/if.b' &&
      cmp '$work/if.a' '$work/if.b'"
  done
done
check "an unread input, an input passed through, a constant output, one value under two names, fp16 and bool outputs" \
  sh -c "'$mgopt' --print-interface '$fx/interface.onnx' | tr '\n' ';' | grep -qx 'input x fp32 \[n, 4\];input unused int32 \[3\];input mask bool \[n\];output y fp32 \[n, 4\];output x_out fp32 \[n, 4\];output twice_c fp32 \[4\];output y_again fp32 \[n, 4\];output y16 fp16 \[n, 4\];output not_mask bool \[n\];'"
check "initializer inputs: the tool says how many and how to fold them" sh -c "'$mgopt' '$fx/initializer_inputs.onnx' -o '$work/ii.onnx' 2>&1 | grep -q 'note: 7 initializers are also graph inputs (overridable); they stay inputs; --constant-inputs folds them'"
check "initializer inputs: kept as inputs with their defaults" sh -c "'$mgopt' '$work/ii.onnx' -o '$work/ii.mil' -p none && grep -q '^main(%x: (batch, 4, fp32), %ids: (2, int64), %fc1.weight: (8, 4, fp32), %fc1.bias: (8, fp32), %fc2.weight: (8, 3, fp32), %fc2.bias: (3, fp32), %embed.weight: (10, 3, fp32), %scale: (1, fp32), %two: (1, fp32))' '$work/ii.mil' && '$mgopt' '$work/ii.onnx' -o '$work/ii2.onnx' --constant-inputs -p none && '$mgopt' '$work/ii2.onnx' -o '$work/ii2.mil' -p none --constant-inputs && grep -q '%fc2.bias: (3, fp32)\* = const(val=' '$work/ii2.mil'"
check "initializer inputs: not folded" sh -c "grep -q 'mul(x=%scale, y=%two' '$work/ii.mil'"
check "initializer inputs: a Gemm whose weight is an input stays one Gemm" sh -c "grep -q '= linear(x=%x, weight=%fc1.weight, bias=%fc1.bias' '$work/ii.mil'"
check "--constant-inputs: folded" sh -c "'$mgopt' '$fx/initializer_inputs.onnx' -o '$work/ci.onnx' --constant-inputs && '$mgopt' '$work/ci.onnx' -o '$work/ci.mil' -p none && grep -q '%s: (1, fp32)\* = const(val=\[3\])' '$work/ci.mil' && ! grep -q '%two' '$work/ci.mil'"
check "IR 3: every initializer is a constant, no note" sh -c "'$mgopt' --print-interface '$fx/initializer_inputs_ir3.onnx' | tr '\n' ';' | grep -qx 'input x fp32 \[batch, 4\];input ids int64 \[2\];output y fp32 \[batch, 3\];output e fp32 \[2, 3\];output s fp32 \[1\];' &&
  ! '$mgopt' '$fx/initializer_inputs_ir3.onnx' -o '$work/ir3.onnx' 2>&1 | grep -q note"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
