// Go pitfall: a dashboard that remembers the message its deltas opened, `current :=
// len(messages)` at the first text_delta, writes each `text` into it, and never resets
// it. A later step's text that streamed no preview is written into that old message
// instead of adding its own: the transcript loses a text. (Resetting `current = -1` when
// the text arrives is the fix.) Otherwise the conforming Go reader, with what a dashboard
// computes.
package main

import "stella-broken/reader"

func main() {
	reader.Client{
		Name: "message-pointer-dashboard-go", Profiles: []string{"reader", "dashboard"},
		Setup: func(r *reader.Reader) {
			current := -1
			r.Shown = func(tag string, texts, preview *[]string) {
				switch {
				case tag == "text_delta" && current < 0:
					current = len(*texts)
				case tag == "text" && current >= 0 && current < len(*texts)-1:
					last := len(*texts) - 1
					(*texts)[current] = (*texts)[last]
					*texts = (*texts)[:last]
				}
			}
		},
	}.Main()
}
