// Go pitfall: a dashboard that reads its input in 4 KiB blocks (bufio's default size)
// and ranges over each block as a string, `for _, c := range string(buf[:n])`, building
// lines rune by rune. A character whose bytes straddle two blocks is not a rune of
// either: range yields utf8.RuneError (U+FFFD) for each of its bytes, and the text the
// dashboard shows is not the text stella wrote. The fix is to split the bytes into lines
// first (bufio.Reader.ReadBytes) and decode whole lines. Otherwise the conforming Go
// reader, with what a dashboard computes.
package main

import (
	"io"

	"stella-broken/reader"
)

const block = 4096

func runeLines(in io.Reader, each func(n int, line []byte) bool) error {
	buf := make([]byte, block)
	var line []rune
	n := 1
	for {
		got, err := io.ReadFull(in, buf)
		for _, c := range string(buf[:got]) {
			if c != '\n' {
				line = append(line, c)
				continue
			}
			if !each(n, []byte(string(line))) {
				return nil
			}
			line, n = line[:0], n+1
		}
		if err != nil { // io.EOF or io.ErrUnexpectedEOF: the stream ended
			break
		}
	}
	if len(line) > 0 {
		each(n, []byte(string(line)))
	}
	return nil
}

func main() {
	reader.Client{Name: "rune-dashboard-go", Profiles: []string{"reader", "dashboard"}, Split: runeLines}.Main()
}
