#!/bin/sh
# A stella stream client in POSIX sh around jq, for exit-code mode:
#   stella-conform run -- sh adapters/shell/jq_client.sh
#   stella-conform run -- sh adapters/shell/jq_client.sh {stream}
# Exit 0 accepts, 1 rejects. jq's own failures also exit 1 (see README.md).
here=$(dirname "$0")
if [ "$#" -gt 0 ]; then
  jq -nR -f "$here/reader.jq" < "$1"
else
  jq -nR -f "$here/reader.jq"
fi
[ $? -eq 0 ] || exit 1
