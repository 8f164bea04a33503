// Go pitfall: a recorder that stores each event as json.Marshal of what json.Unmarshal
// read into an interface{}. encoding/json reads every number into a float64 unless told
// otherwise (Decoder.UseNumber): an integer above 2^53 is stored rounded
// (9007199254740993 becomes 9007199254740992), and a number beyond a float64 (1e400) is
// an error, so that event is skipped. Otherwise the conforming Go reader; the recording
// goes to stdout, exit 1 on a stream it rejects.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"stella-broken/reader"
)

func record(n int, raw []byte, tag string) {
	var event interface{}
	if err := json.Unmarshal(raw, &event); err != nil {
		fmt.Fprintf(os.Stderr, "recorder: skipping line %d: %v\n", n, err)
		return
	}
	out, _ := json.Marshal(event)
	os.Stdout.Write(append(out, '\n'))
}

func main() {
	reader.Client{
		Name: "float64-recorder-go", Profiles: []string{"recorder"},
		Setup: func(r *reader.Reader) { r.OnEvent = record },
	}.Main()
}
