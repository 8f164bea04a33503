#!/bin/sh
# BROKEN (on purpose): the jq client behind the `while IFS= read -r line` loop of every
# shell tutorial, without its `|| [ -n "$line" ]`. `read` returns non-zero at the end of
# the input even when it read a last line that has no newline, so the loop body never
# sees that line: a stream cut off on a line whose body does not fit is accepted, where
# it must be rejected (exit mode sees nothing else of the last line). `read` also drops
# NUL bytes, so a corrupt line {"type":"text","text":"a<NUL>b"} reaches jq as a valid
# one, and R6.corrupt-line-not-last fails too. adapters/shell/jq_client.sh is the fixed
# client: one sed over the stream keeps every line and every byte.
here=$(dirname "$0")
lines() {
  while IFS= read -r line; do
    printf '%s\n' "$line"
  done
}
lines | LC_ALL=C.UTF-8 sed -u '/[\x00-\x08\x0b\x0c\x0e-\x1f]/{s/^/0/;b};s/^.*$/1&/;t;s/^/0/' |
  jq -nR -f "$here/../../shell/reader.jq"
[ $? -eq 0 ] || exit 1
