// Go pitfall: the stream read with json.NewDecoder and Decode in a loop, the standard
// library's way to read "a stream of JSON values". A Decoder reads values, not lines:
// two events on one line (a lost newline) are read as two events, and one event written
// over several lines as one, where rule 1 makes each such line a corrupt line. (It tells
// a torn last value by io.ErrUnexpectedEOF, names lines by its input offset, and checks
// the bytes are UTF-8 first, as encoding/json would replace what is not.) Otherwise the
// conforming Go reader, fed the decoded values; it reads the whole stream, so it reports
// a summary only.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"

	"stella-broken/reader"
)

func lineAt(data []byte, offset int64) int {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	return 1 + bytes.Count(data[:offset], []byte("\n"))
}

// notUTF8 is where the first line that is not UTF-8 starts, and whether lines follow it.
func notUTF8(data []byte) (start int, followed bool, found bool) {
	for offset := 0; offset < len(data); {
		end := bytes.IndexByte(data[offset:], '\n')
		if end < 0 {
			end = len(data) - offset
		}
		if !utf8.Valid(data[offset : offset+end]) {
			after := data[offset+end:]
			return offset, len(bytes.Trim(after, " \t\r\n")) > 0, true
		}
		offset += end + 1
	}
	return 0, false, false
}

func decodeValues(data []byte, r *reader.Reader) {
	if start, followed, found := notUTF8(data); found {
		decodeValues(data[:start], r)
		if !r.Rejected() && followed {
			r.Reject(lineAt(data, int64(start)), "corrupt line: not UTF-8")
		}
		return // a last line that is not UTF-8 is the torn one: dropped
	}
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.UseNumber()
	for !r.Rejected() {
		before := decoder.InputOffset()
		var value interface{}
		err := decoder.Decode(&value)
		if err == io.EOF {
			return
		}
		rest := bytes.TrimLeft(data[before:], " \t\r\n")
		start := int64(len(data) - len(rest))
		var syntax *json.SyntaxError
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF):
			r.Push(lineAt(data, start), data[start:]) // the torn last value
			r.Finish()
			return
		case errors.As(err, &syntax):
			r.Reject(lineAt(data, syntax.Offset-1), "corrupt line: "+err.Error())
		case err != nil:
			r.Reject(lineAt(data, start), err.Error())
		default:
			raw := data[start:decoder.InputOffset()]
			r.Value(lineAt(data, start), value, raw)
		}
	}
}

func main() {
	reader.Client{Name: "decoder-reader-go", Profiles: []string{"reader"}, Whole: decodeValues}.Main()
}
