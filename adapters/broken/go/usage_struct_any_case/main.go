// Go pitfall: a dashboard that decodes each step_usage event into a struct with
// json.Unmarshal to sum its token counts and durations. encoding/json matches object keys
// to struct fields without regard to case ("preferring an exact match but also accepting
// a case-insensitive match"), and a later key overwrites an earlier one: an unknown field
// "Input_Tokens" or "INPUT_TOKENS" after "input_tokens" is the count the dashboard adds
// up. stella (serde) matches keys exactly and ignores the twin. Otherwise the conforming
// Go reader, with what a dashboard computes.
package main

import (
	"bytes"
	"encoding/json"
	"math/big"

	"stella-broken/reader"
)

type usage struct {
	InputTokens  *json.Number `json:"input_tokens"`
	OutputTokens *json.Number `json:"output_tokens"`
	DurationMs   *json.Number `json:"duration_ms"`
}

func usageOf(raw []byte, event map[string]interface{}) map[string]*big.Int {
	var u usage
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	if decoder.Decode(&u) != nil {
		return nil
	}
	counts := map[string]*big.Int{}
	for key, n := range map[string]*json.Number{
		"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens, "duration_ms": u.DurationMs,
	} {
		if n == nil {
			continue
		}
		if v, ok := new(big.Int).SetString(string(*n), 10); ok {
			counts[key] = v
		}
	}
	return counts
}

func main() {
	reader.Client{
		Name: "usage-struct-dashboard-go", Profiles: []string{"reader", "dashboard"},
		Setup: func(r *reader.Reader) { r.UsageOf = usageOf },
	}.Main()
}
