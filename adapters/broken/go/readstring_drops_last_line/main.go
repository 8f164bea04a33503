// Go pitfall: lines read with bufio.Reader.ReadString('\n'), the loop stopping at the
// first error: `line, err := r.ReadString('\n'); if err != nil { break }`. At the end of
// a stream whose last line has no newline, ReadString returns that line *and* io.EOF,
// and the loop drops it: a complete last event is never read, and a last line whose body
// does not fit is never rejected (the stream is accepted, in exit mode too). The fix is
// to use the line before looking at err (`if len(line) > 0 { ... }; if err != nil
// { break }`). Otherwise the conforming Go reader.
package main

import (
	"bufio"
	"io"
	"strings"

	"stella-broken/reader"
)

func readStrings(in io.Reader, each func(n int, line []byte) bool) error {
	r := bufio.NewReader(in)
	for n := 1; ; n++ {
		line, err := r.ReadString('\n')
		if err != nil {
			break
		}
		if !each(n, []byte(strings.TrimSuffix(line, "\n"))) {
			return nil
		}
	}
	return nil
}

func main() {
	reader.Client{Name: "readstring-reader-go", Profiles: []string{"reader"}, Split: readStrings}.Main()
}
