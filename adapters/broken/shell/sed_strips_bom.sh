#!/bin/sh
# BROKEN (on purpose): the jq client behind `sed 's/^\xEF\xBB\xBF//'`, the usual answer
# to "remove a UTF-8 BOM with sed", with the address that limits it to the first line
# (`1s/...`) left out. A BOM is at most the stream's first bytes (the registered reading
# utf8-bom); on a later line U+FEFF is not JSON's whitespace, the line is corrupt, and a
# stream holding one before its last line must be rejected. Stripped from every line,
# such a line reaches jq as valid JSON and the stream is accepted.
# adapters/shell/jq_client.sh is the fixed client (it leaves every line as it is).
here=$(dirname "$0")
LC_ALL=C sed -u 's/^\xEF\xBB\xBF//' "$@" | sh "$here/../../shell/jq_client.sh"
[ $? -eq 0 ] || exit 1
