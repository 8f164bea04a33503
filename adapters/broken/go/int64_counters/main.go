// Go pitfall: token counts and durations decoded into int64 struct fields, the type Go
// code reaches for by default (an InputTokens int64 field tagged "input_tokens"). The wire
// schema's counts are u64: a valid count above 2^63 - 1 does not fit an int64
// (json.Unmarshal: "cannot unmarshal number ... of type int64") and the valid stream is
// rejected; and -1 fits it, so a count the schema refuses is taken (the sign of a count
// is never looked at). Otherwise the conforming Go reader.
package main

import (
	"encoding/json"
	"strings"

	"stella-broken/reader"
)

type usage struct {
	Step              int64 `json:"step"`
	InputTokens       int64 `json:"input_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
	CachedInputTokens int64 `json:"cached_input_tokens"`
	DurationMs        int64 `json:"duration_ms"`
	Retries           int64 `json:"retries"`
	ToolCalls         int64 `json:"tool_calls"`
}

var counts = map[string][]string{
	"step_usage": {"step", "input_tokens", "output_tokens", "cached_input_tokens",
		"duration_ms", "retries", "tool_calls"},
	"tool_result": {"duration_ms"},
}

func fit(tag string, raw []byte, event map[string]interface{}, why string) string {
	names, ok := counts[tag]
	if !ok {
		return why
	}
	var u usage
	if err := json.Unmarshal(raw, &u); err != nil {
		return err.Error()
	}
	// the counts are int64s now; the rest of the body is read as the template reads it
	read := map[string]interface{}{}
	for k, v := range event {
		read[k] = v
	}
	for _, name := range names {
		if n, isNumber := read[name].(json.Number); isNumber {
			read[name] = json.Number(strings.TrimPrefix(string(n), "-"))
		}
	}
	return reader.Misfit(tag, read)
}

func main() {
	reader.Client{
		Name: "int64-reader-go", Profiles: []string{"reader"},
		Setup: func(r *reader.Reader) { r.Fit = fit },
	}.Main()
}
