// Go pitfall: a known body decoded into a struct (a Text string field tagged "text"),
// and a missing field told by Go's zero value: if ev.Text == "". encoding/json leaves a
// field absent from the object at its zero value, so "absent" and "" look the same, and
// this reader rejects a valid {"type":"text","text":""} (an empty answer, an empty
// preview fragment) as a body without its text. Otherwise the conforming Go reader.
package main

import (
	"encoding/json"

	"stella-broken/reader"
)

type body struct {
	Text  string `json:"text"`
	Delta string `json:"delta"`
}

func fit(tag string, raw []byte, event map[string]interface{}, why string) string {
	if why != "" || (tag != "text" && tag != "text_delta" && tag != "reasoning") {
		return why
	}
	var b body
	if err := json.Unmarshal(raw, &b); err != nil {
		return err.Error()
	}
	if b.Text == "" && b.Delta == "" { // the zero value: "not there"
		return tag + ": missing required field"
	}
	return ""
}

func main() {
	reader.Client{
		Name: "zero-value-reader-go", Profiles: []string{"reader"},
		Setup: func(r *reader.Reader) { r.Fit = fit },
	}.Main()
}
