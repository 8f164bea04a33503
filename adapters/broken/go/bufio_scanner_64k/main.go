// Go pitfall: lines read with bufio.Scanner, as its documentation's first example does.
// A Scanner holds at most bufio.MaxScanTokenSize (64 KiB) per token: on a longer line
// Scan returns false and Err() is bufio.ErrTooLong ("token too long"), so a valid stream
// with one long event (a large tool output, a long text) is reported as an error at that
// line. Otherwise the conforming Go reader.
package main

import (
	"bufio"
	"io"

	"stella-broken/reader"
)

func scanLines(in io.Reader, each func(n int, line []byte) bool) error {
	scanner := bufio.NewScanner(in) // the default buffer: lines up to 64 KiB
	for n := 1; scanner.Scan(); n++ {
		if !each(n, scanner.Bytes()) {
			return nil
		}
	}
	return scanner.Err()
}

func main() {
	reader.Client{Name: "scanner-reader-go", Profiles: []string{"reader"}, Split: scanLines}.Main()
}
