// Go pitfall: a dashboard that keeps its preview per step, `step.Preview = nil` when a
// tool call starts a new step. But a preview is replaced by the `text` that follows it,
// whenever that comes, and by nothing else: the deltas streamed before a tool call are
// still the run's preview until a text replaces them (and when the run ends with none,
// they are what was said). This dashboard shows only the deltas since the last tool
// call. Otherwise the conforming Go reader, with what a dashboard computes.
package main

import "stella-broken/reader"

func main() {
	reader.Client{
		Name: "step-preview-dashboard-go", Profiles: []string{"reader", "dashboard"},
		Setup: func(r *reader.Reader) {
			r.Shown = func(tag string, texts, preview *[]string) {
				if tag == "tool_start" {
					*preview = nil
				}
			}
		},
	}.Main()
}
