// Go pitfall: a dashboard that reads the text of text and text_delta events into a
// struct with json.Unmarshal. encoding/json matches object keys to struct fields without
// regard to case ("preferring an exact match but also accepting a case-insensitive
// match"), and a later key overwrites an earlier one: an unknown field "Text" after
// "text" becomes the text the dashboard shows. Otherwise the conforming Go reader, with
// what a dashboard computes.
package main

import (
	"encoding/json"

	"stella-broken/reader"
)

type texts struct {
	Text  *string `json:"text"`
	Delta *string `json:"delta"`
}

func textOf(raw []byte, tag string, event map[string]interface{}) string {
	var t texts
	if json.Unmarshal(raw, &t) != nil || (t.Text == nil && t.Delta == nil) {
		if tag == "text" {
			return event["text"].(string)
		}
		return event["delta"].(string)
	}
	first, second := t.Text, t.Delta // the self-describing name first, the legacy one after
	if tag == "text_delta" {
		first, second = t.Delta, t.Text
	}
	if first != nil {
		return *first
	}
	return *second
}

func main() {
	reader.Client{
		Name: "struct-dashboard-go", Profiles: []string{"reader", "dashboard"},
		Setup: func(r *reader.Reader) { r.TextOf = textOf },
	}.Main()
}
