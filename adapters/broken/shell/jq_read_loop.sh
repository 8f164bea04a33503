#!/bin/sh
# BROKEN (on purpose): the jq client behind a `while IFS= read -r line` loop in
# front of jq 1.6 - the loop the contract shows for scripts, and jq's raw input.
#   * `read` drops NUL bytes (dash and bash alike), so the corrupt line
#     {"type":"text","text":"a<NUL>b"} reaches jq as the valid line "ab";
#   * jq 1.6's lexer takes a raw U+001F in a string (its bound is off by one: U+0000 to
#     U+001E are refused), so {"type":"text","text":"a<US>b"} parses.
# Both streams must be rejected (a raw control character is not JSON); this client
# accepts them, and R6.corrupt-line-not-last fails.  adapters/shell/jq_client.sh is the
# fixed client: one sed over the stream, which keeps every byte, marks such lines.
here=$(dirname "$0")
mark() {
  while IFS= read -r line || [ -n "$line" ]; do
    if printf '%s' "$line" | iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1; then
      printf '1%s\n' "$line"
    else
      printf '0%s\n' "$line"
    fi
  done
}
mark | jq -nR -f "$here/../../shell/reader.jq"
[ $? -eq 0 ] || exit 1
