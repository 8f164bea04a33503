#!/bin/sh
# A stella stream client in POSIX sh around jq, for exit-code mode:
#   stella-conform run -- sh adapters/shell/jq_client.sh
#   stella-conform run -- sh adapters/shell/jq_client.sh {stream}
# Exit 0 accepts, 1 rejects. jq's own failures also exit 1 (see README.md).
here=$(dirname "$0")
# jq's raw input repairs bytes that are not UTF-8 to U+FFFD, and jq 1.6 also turns a
# character split by its 4 KiB read blocks into U+FFFD, so jq cannot tell a bad line from a
# good one; and jq 1.6's lexer takes a raw U+001F in a string. So one sed over the stream
# (line by line, every byte kept: a shell `read` loop would drop NUL bytes) hands each line
# to jq marked 1, or 0 when it is not JSON text: bytes that are not UTF-8 (`.` matches no
# such byte in a UTF-8 locale), or a control character JSON never holds raw (only tab, CR
# and LF may stand between its tokens, and none inside a string). jq's parser also skips
# a byte order mark before any text it parses: past the first line, where a BOM is not
# the stream's, a line that starts with one is marked 0 too.
mark() {
  LC_ALL=C.UTF-8 sed -u '/[\x00-\x08\x0b\x0c\x0e-\x1f]/{s/^/0/;b};2,${/^\xef\xbb\xbf/{s/^/0/;b}};s/^.*$/1&/;t;s/^/0/' "$@"
}
mark "$@" | jq -nR -f "$here/reader.jq"
[ $? -eq 0 ] || exit 1
