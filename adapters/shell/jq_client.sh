#!/bin/sh
# A stella stream client in POSIX sh around jq, for exit-code mode:
#   stella-conform run -- sh adapters/shell/jq_client.sh
#   stella-conform run -- sh adapters/shell/jq_client.sh {stream}
# Exit 0 accepts, 1 rejects. jq's own failures also exit 1 (see README.md).
here=$(dirname "$0")
# jq's raw input repairs bytes that are not UTF-8 to U+FFFD, and jq 1.6 also turns a
# character split by its 4 KiB read blocks into U+FFFD, so jq cannot tell a bad line from a
# good one: each line is checked here (iconv) and handed to jq marked 1 (UTF-8) or 0 (not).
mark() {
  while IFS= read -r line || [ -n "$line" ]; do
    if printf '%s' "$line" | iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1; then
      printf '1%s\n' "$line"
    else
      printf '0%s\n' "$line"
    fi
  done
}
if [ "$#" -gt 0 ]; then
  mark < "$1" | jq -nR -f "$here/reader.jq"
else
  mark | jq -nR -f "$here/reader.jq"
fi
[ $? -eq 0 ] || exit 1
