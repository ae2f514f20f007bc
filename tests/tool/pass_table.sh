#!/bin/sh
# tests/tool/pass_table.sh — prints the README's pass table (Markdown) from
# `mgopt --list-passes`: name, family and description of every pass, in registry
# order. usage: pass_table.sh PATH/TO/mgopt (`make pass-table` runs it).
mgopt=${1:-build/mgopt}
"$mgopt" --list-passes > /dev/null || exit 1
echo '| pass | family | what it does |'
echo '| --- | --- | --- |'
# pass lines: two spaces, the name, " [family] ", the description; option lines are indented further
"$mgopt" --list-passes | awk '
  /^passes:$/ { on = 1; next }
  /^[^ ]/ { on = 0 }
  on && /^  [^ ]/ {
    line = substr($0, 3)
    i = index(line, " [")
    rest = substr(line, i + 2)
    j = index(rest, "] ")
    name = substr(line, 1, i - 1); sub(/ +$/, "", name)
    desc = substr(rest, j + 2); gsub(/\|/, "\\|", desc)
    printf "| `%s` | %s | %s |\n", name, substr(rest, 1, j - 1), desc
  }'
