// Go pitfall: a byte order mark trimmed from every line, not only the stream's first:
// `line = bytes.TrimPrefix(line, []byte("\uFEFF"))` inside the bufio loop (a BOM "can
// appear" in input from Windows tools, so the loop forgives it wherever it is). A BOM
// is at most the stream's first bytes (the registered reading utf8-bom); on any later
// line U+FEFF is not JSON's whitespace, the line is corrupt, and a stream holding one
// before its last line must be rejected. This reader parses the rest, and a line of
// only U+FEFF is blank to it. Otherwise the conforming Go reader.
package main

import (
	"bytes"
	"io"

	"stella-broken/reader"
)

var bom = []byte("\uFEFF")

func trimmedLines(in io.Reader, each func(n int, line []byte) bool) error {
	return reader.SplitLF(in, func(n int, line []byte) bool {
		return each(n, bytes.TrimPrefix(line, bom))
	})
}

func main() {
	reader.Client{Name: "bom-trimming-reader-go", Profiles: []string{"reader"}, Split: trimmedLines}.Main()
}
