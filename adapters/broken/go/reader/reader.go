// Package reader is a conforming stella stream reader in Go (standard library only) and
// the adapter protocol around it, for the broken Go clients beside it: each main package
// swaps exactly one piece (how lines are split, how values are decoded, how a text is
// read, how an event is recorded) for the pitfall it models.
//
// Its rules are not a copy: what a line must be (parseLine), the known types' bodies
// (known, misfit), the legacy spellings (aliases) and archived shapes (archived) are those
// of `stella-conform init go`'s template, adapters/templates/go/stella_adapter.go, which
// adapters/broken/builds.py compiles into this package (as template.go) with it.  A fix
// to the template's reading is a fix here; only the piece each client swaps differs.
package reader

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"os"
	"sort"
	"strconv"
)

// Message is one adapter-protocol message.
type Message = map[string]interface{}

// Reader reads one stream, one physical line at a time.
type Reader struct {
	// TextOf reads the string of a text or text_delta event that fits (aliases resolved
	// in event); a client may read it its own way from the line's bytes.
	TextOf func(raw []byte, tag string, event map[string]interface{}) string
	// OnEvent sees every real event, known (tag) or not (""), with its line's bytes.
	OnEvent func(n int, raw []byte, tag string)
	// Fit decides whether a known event's body fits, given the template's answer (why:
	// "" when it fits); a client may decode the line's bytes its own way.
	Fit func(tag string, raw []byte, event map[string]interface{}, why string) string
	// UsageOf reads a step_usage event's token counts and duration (the keys of the
	// summary's usage); a client may read them its own way from the line's bytes.
	UsageOf func(raw []byte, event map[string]interface{}) map[string]*big.Int
	// Shown sees each known event that fits once the reader has folded it in, with the
	// texts and the preview it shows: a client may show them its own way.
	Shown func(tag string, texts, preview *[]string)

	pending, rejected *problem
	known, unknown    int
	unknownTypes      map[string]bool
	texts, preview    []string
	stages            map[string][]string
	turns             int
	lastKnown         string
	completed         bool
	elapsed           *big.Int
	lastTs            *uint64
	usage             map[string]*big.Int
}

// New is a conforming reader.
func New() *Reader {
	return &Reader{unknownTypes: map[string]bool{}, stages: map[string][]string{"turn": {}, "run": {}},
		TextOf: func(raw []byte, tag string, event map[string]interface{}) string {
			if tag == "text" {
				return event["text"].(string)
			}
			return event["delta"].(string)
		}}
}

// Misfit is the template's answer for a known type's body ("" when it fits).
func Misfit(tag string, event map[string]interface{}) string {
	return misfit(tag, known[tag], event)
}

// Rejected reports whether the reader stopped on a rejection.
func (r *Reader) Rejected() bool { return r.rejected != nil }

// Push reads one physical line (its content, without the newline).
func (r *Reader) Push(n int, raw []byte) []Message {
	if r.rejected != nil {
		return nil
	}
	content := bytes.TrimSuffix(raw, []byte("\r"))
	if len(bytes.Trim(content, " \t\r\n")) == 0 {
		return []Message{line(n, "blank")}
	}
	if r.pending != nil { // rule 6: a corrupt line with more after it is an error
		return r.Reject(r.pending.line, "corrupt line: "+r.pending.reason)
	}
	value, err := parseLine(content) // rule 1, the template's own
	if err != nil {
		r.pending = &problem{n, err.Error()}
		return []Message{{"kind": "pending", "line": n}}
	}
	return r.Value(n, value, content)
}

// Value reads one parsed JSON value, the event of line n (raw: its bytes).
func (r *Reader) Value(n int, value interface{}, raw []byte) []Message {
	event, ok := object(value)
	if !ok {
		return r.Reject(n, "line is JSON but not an object")
	}
	tag, isTag := event["type"].(string) // rule 2: the type string alone decides
	shape, isKnown := known[tag]
	if field, old := archived[tag]; isKnown && old {
		_, present := event[field]
		isKnown = present
	}
	if !isTag || !isKnown {
		r.unknown++ // rule 3: unrecognized events are counted, nothing more
		o := line(n, "unknown")
		o["type"] = nil
		if isTag {
			r.unknownTypes[tag] = true
			o["type"] = tag
		}
		r.clock(event["ts"])
		if r.OnEvent != nil {
			r.OnEvent(n, raw, "")
		}
		return []Message{o}
	}
	if alias, ok := aliases[tag]; ok {
		_, hasName := event[alias[0]]
		legacy, hasLegacy := event[alias[1]]
		if !hasName && hasLegacy {
			event[alias[0]] = legacy
		}
	}
	why := misfit(tag, shape, event) // rule 4: must fit; rule 5: extras ignored
	if r.Fit != nil {
		why = r.Fit(tag, raw, event, why)
	}
	if why != "" {
		return r.Reject(n, why)
	}
	r.fold(tag, event, raw)
	if r.Shown != nil {
		r.Shown(tag, &r.texts, &r.preview)
	}
	if r.OnEvent != nil {
		r.OnEvent(n, raw, tag)
	}
	o := line(n, "known")
	o["type"] = tag
	return []Message{o}
}

func (r *Reader) clock(v interface{}) {
	n, ok := v.(json.Number)
	if !ok {
		return
	}
	ts, err := strconv.ParseUint(string(n), 10, 64)
	if err != nil {
		return
	}
	if r.lastTs == nil {
		r.elapsed = big.NewInt(0)
	} else if ts > *r.lastTs { // a clock going backwards adds nothing
		step := new(big.Int).SetUint64(ts)
		r.elapsed.Add(r.elapsed, step.Sub(step, new(big.Int).SetUint64(*r.lastTs)))
	}
	r.lastTs = &ts
}

func (r *Reader) fold(tag string, event map[string]interface{}, raw []byte) {
	r.known++
	r.lastKnown = tag
	r.clock(event["ts"])
	switch tag {
	case "text":
		r.texts = append(r.texts, r.TextOf(raw, tag, event))
		r.preview = nil // the text replaces the preview, never appends to it
	case "text_delta":
		r.preview = append(r.preview, r.TextOf(raw, tag, event))
	case "stage":
		scope := event["scope"].(string)
		r.stages[scope] = append(r.stages[scope], event["name"].(string))
	case "turn_complete":
		r.turns++
	case "run_complete":
		r.completed = true
	case "step_usage":
		if r.usage == nil {
			r.usage = map[string]*big.Int{"input_tokens": {}, "output_tokens": {}, "duration_ms": {}}
		}
		var counts map[string]*big.Int
		if r.UsageOf != nil {
			counts = r.UsageOf(raw, event)
		}
		for key, sum := range r.usage {
			n, ok := counts[key]
			if !ok {
				n, _ = new(big.Int).SetString(string(event[key].(json.Number)), 10)
			}
			sum.Add(sum, n)
		}
	}
}

// Finish ends the stream: a corrupt line still pending was the last one (rule 6).
func (r *Reader) Finish() []Message {
	if r.pending == nil || r.rejected != nil {
		return nil
	}
	o := line(r.pending.line, "torn")
	o["reason"] = r.pending.reason
	r.pending = nil
	return []Message{o}
}

// Reject fails the stream loudly at line n.
func (r *Reader) Reject(n int, reason string) []Message {
	r.rejected = &problem{n, reason}
	o := line(n, "reject")
	o["reason"] = reason
	return []Message{o}
}

// Why is the rejection's line and reason.
func (r *Reader) Why() (int, string) { return r.rejected.line, r.rejected.reason }

func longText(t string) interface{} {
	if len(t) <= 64*1024 || os.Getenv("STELLA_CONFORM_DIGESTS") != "sha256" {
		return t
	}
	sum := sha256.Sum256([]byte(t))
	return map[string]string{"sha256": hex.EncodeToString(sum[:])}
}

// Summary is what the reader reconstructed.
func (r *Reader) Summary() Message {
	types := []string{}
	for t := range r.unknownTypes {
		types = append(types, t)
	}
	sort.Strings(types)
	texts := []interface{}{}
	for _, t := range r.texts {
		texts = append(texts, longText(t))
	}
	s := Message{"kind": "summary", "verdict": "accept", "rejected_line": nil,
		"known_events": r.known, "unrecognized_events": r.unknown, "unrecognized_types": types,
		"final_text": nil, "texts": texts, "turns_completed": r.turns, "terminator": nil,
		"stages": r.stages, "elapsed_ms": nil, "preview": nil, "usage": nil}
	if r.rejected != nil {
		s["verdict"], s["rejected_line"] = "reject", r.rejected.line
	}
	if len(r.texts) > 0 {
		s["final_text"] = longText(r.texts[len(r.texts)-1])
	}
	if len(r.preview) > 0 {
		joined := ""
		for _, p := range r.preview {
			joined += p
		}
		s["preview"] = longText(joined)
	}
	if r.completed {
		s["terminator"] = "run_complete"
	} else if r.lastKnown == "error" {
		s["terminator"] = "error"
	}
	if r.elapsed != nil {
		s["elapsed_ms"] = json.Number(r.elapsed.String())
	}
	if r.usage != nil {
		usage := Message{}
		for key, sum := range r.usage {
			usage[key] = json.Number(sum.String())
		}
		s["usage"] = usage
	}
	return s
}

// ---------------------------------------------------------------------------------------
// Lines and the adapter protocol.

// Splitter hands each physical line (without its "\n") to each, in order, until each
// returns false; an error is a line it could not read (the reader rejects there).
type Splitter func(in io.Reader, each func(n int, line []byte) bool) error

// SplitLF splits at "\n" only, lines of any length, each handed over as soon as it ends.
func SplitLF(in io.Reader, each func(n int, line []byte) bool) error {
	buffered := bufio.NewReader(in)
	for n := 1; ; n++ {
		raw, err := buffered.ReadBytes('\n')
		if len(raw) > 0 && !each(n, bytes.TrimSuffix(raw, []byte("\n"))) {
			return nil
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// Client is one broken client: its name, what it claims, and the piece it swaps.
type Client struct {
	Name     string
	Profiles []string
	// Split splits the stream into lines (SplitLF when nil).
	Split Splitter
	// Setup adjusts each new reader (a text hook, say).
	Setup func(r *Reader)
	// Whole reads a whole stream itself (a client that does not read line by line: it
	// claims summary_only and writes no line observations).
	Whole func(data []byte, r *Reader)
}

func (c Client) reader() *Reader {
	r := New()
	if c.Setup != nil {
		c.Setup(r)
	}
	return r
}

// Read is one stream read by this client: its messages go to out.
func (c Client) Read(in io.Reader, out func(Message)) *Reader {
	r := c.reader()
	if c.Whole != nil {
		data, _ := io.ReadAll(in)
		c.Whole(data, r)
		return r
	}
	split := c.Split
	if split == nil {
		split = SplitLF
	}
	last := 0
	err := split(in, func(n int, raw []byte) bool {
		last = n
		for _, m := range r.Push(n, raw) {
			out(m)
		}
		return !r.Rejected()
	})
	if err != nil && !r.Rejected() {
		for _, m := range r.Reject(last+1, err.Error()) {
			out(m)
		}
	}
	for _, m := range r.Finish() {
		out(m)
	}
	return r
}

func (c Client) hello() {
	h := Message{"kind": "hello", "protocol": 1, "profiles": c.Profiles,
		"client": map[string]string{"name": c.Name, "version": "1.0", "language": "go"}}
	if c.Whole != nil {
		h["summary_only"] = true
	}
	emit(h)
}

// Main runs the client in the mode the kit chose (exit when none).
func (c Client) Main() {
	switch os.Getenv("STELLA_CONFORM_MODE") {
	case "report":
		c.hello()
		r := c.Read(os.Stdin, emit)
		emit(r.Summary())
		if r.Rejected() {
			os.Exit(1)
		}
	case "persistent":
		c.hello()
		frames := bufio.NewReader(os.Stdin)
		for {
			frame, err := frames.ReadBytes('\n')
			if len(frame) > 0 {
				var msg struct {
					Kind, ID, Stream string
				}
				if json.Unmarshal(frame, &msg) == nil && msg.Kind == "shutdown" {
					os.Exit(0)
				}
				if msg.Kind == "case" {
					data, _ := base64.StdEncoding.DecodeString(msg.Stream)
					withID := func(m Message) { m["id"] = msg.ID; emit(m) }
					r := c.Read(bytes.NewReader(data), withID)
					withID(r.Summary())
				}
			}
			if err != nil {
				os.Exit(0)
			}
		}
	default:
		in := io.Reader(os.Stdin)
		if len(os.Args) > 1 {
			file, err := os.Open(os.Args[1])
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			in = file
		}
		r := c.Read(in, func(Message) {})
		if r.Rejected() {
			n, why := r.Why()
			fmt.Fprintf(os.Stderr, "%s: line %d: %s\n", c.Name, n, why)
			os.Exit(1)
		}
	}
}
