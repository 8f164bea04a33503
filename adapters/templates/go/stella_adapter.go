// A stella-conform adapter (report and persistent modes) around a trivial stella reader.
//
// Written by `stella-conform init go`.  Build and grade it as it is, then make it yours:
//
//	go build -o stella-adapter .
//	stella-conform smoke --mode report -- ./stella-adapter
//	stella-conform run -- ./stella-adapter
//
// The lines marked `EDIT` are the ones to change.  readStream is handed the raw bytes of one
// stella stream as an io.Reader: call your own parser on it there, as your program calls it
// on os.Stdin or on the pipe from stella, so that your parser's own line splitting (a
// bufio.Scanner and its line limit, say), decoding and buffering are what the kit grades;
// then tell report what it made of each line and return what it read.  Everything else
// speaks the adapter protocol (docs/adapter-protocol.md) and can stay as it is.  Go 1.19 or
// newer, standard library only.
//
// An adapter grades your parser as it reads the bytes it is handed here.  Grade the program
// your users run as well, unmodified, by its exit status:
// `stella-conform run --mode exit -- your-cli ARGS` (the stream on its stdin).
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"unicode/utf8"
)

var client = map[string]string{"name": "my-stella-client", "version": "0.1", "language": "go"} // EDIT: yours

type message = map[string]interface{}

// readStream reads one stella stream: stream holds its raw bytes (os.Stdin itself in report
// mode, a case's bytes in persistent mode).  For each physical line, call
// report.line(number, outcome, type, reason) as soon as your parser has read it (or
// report.pending(number) for a line that does not parse, until the next line tells whether
// it was the torn last one); return the summary (docs/adapter-protocol.md: the summary, field
// by field), whose "verdict" is "accept" or "reject".  In report mode the kit writes line
// k+1 only after the answer for line k, so answer each line as it arrives, never after
// reading ahead.
func readStream(stream io.Reader, report *reporter) message {
	return newTrivialReader(report).read(stream) // EDIT: your parser, reading stream itself
}

func main() {
	// "knows": the types your parser recognizes (today's stella's, or an older one's too), so
	// the kit grades it on streams of any stella by what it knows, not by what that stella wrote
	emit(message{"kind": "hello", "protocol": 1, "client": client, "profiles": []string{"reader"},
		"modes": []string{"report", "persistent"}, "knows": knownTypes()}) // EDIT: the types yours knows
	if os.Getenv("STELLA_CONFORM_MODE") == "persistent" {
		os.Exit(serveCases(os.Stdin))
	}
	summary := readStream(os.Stdin, &reporter{}) // report mode: the stream is stdin
	summary["kind"] = "summary"
	emit(summary)
	if summary["verdict"] == "reject" {
		os.Exit(1)
	}
}

// serveCases is persistent mode: one case per stdin line,
// {"kind":"case","id":..,"stream":<base64>}, each answered with observations and a summary
// that carry its id.
func serveCases(stdin io.Reader) int {
	in := bufio.NewReader(stdin)
	for {
		raw, err := in.ReadBytes('\n')
		var m struct {
			Kind   string          `json:"kind"`
			ID     json.RawMessage `json:"id"`
			Stream *string         `json:"stream"`
		}
		if json.Unmarshal(raw, &m) == nil {
			if m.Kind == "shutdown" {
				return 0
			}
			if m.Kind == "case" {
				stream, bad := []byte(nil), m.Stream == nil
				if !bad {
					stream, err = base64.StdEncoding.DecodeString(*m.Stream)
					bad = err != nil
				}
				if bad {
					fmt.Fprintln(os.Stderr, "stella-adapter: a case without a base64 stream")
					return 2
				}
				report := &reporter{id: m.ID}
				summary := readStream(bytes.NewReader(stream), report)
				summary["kind"] = "summary"
				report.emit(summary)
				continue
			}
		}
		if err != nil {
			return 0 // the end of stdin
		}
	}
}

// reporter writes what the parser made of each line to the kit at once (with the case's id
// in persistent mode).
type reporter struct{ id json.RawMessage }

func (r *reporter) line(n int, outcome string, typ interface{}, reason string) {
	m := line(n, outcome)
	if outcome == "known" || outcome == "unknown" {
		m["type"] = typ // a string, or nil when the line had no string type
	}
	if reason != "" {
		m["reason"] = reason
	}
	r.emit(m)
}

func (r *reporter) pending(n int) { r.emit(message{"kind": "pending", "line": n}) }

func (r *reporter) emit(m message) {
	if r.id != nil {
		m["id"] = r.id
	}
	emit(m)
}

func emit(m message) {
	out, _ := json.Marshal(m)
	os.Stdout.Write(append(out, '\n')) // unbuffered: the kit waits for each answer (lockstep)
}

// ---------------------------------------------------------------------------------------
// The trivial reader: the six rules of stella's stream contract, and nothing more.
// Replace it with your parser; keep what it reports.

type fits func(v interface{}) bool

func uint(top uint64) fits {
	return func(v interface{}) bool {
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		u, err := strconv.ParseUint(string(n), 10, 64)
		return err == nil && u <= top
	}
}

func isString(v interface{}) bool { _, ok := v.(string); return ok }
func isNumber(v interface{}) bool { _, ok := v.(json.Number); return ok }
func isBool(v interface{}) bool   { _, ok := v.(bool); return ok }

func oneOf(names ...string) fits {
	return func(v interface{}) bool {
		s, ok := v.(string)
		for _, name := range names {
			if ok && s == name {
				return true
			}
		}
		return false
	}
}

func orNull(f fits) fits { return func(v interface{}) bool { return v == nil || f(v) } }

func object(v interface{}) (map[string]interface{}, bool) {
	m, ok := v.(map[string]interface{})
	return m, ok
}

func toolCall(v interface{}) bool {
	m, ok := object(v)
	_, hasInput := m["input"]
	return ok && isString(m["call_id"]) && isString(m["name"]) && hasInput
}

func toolOutput(v interface{}) bool {
	m, _ := object(v)
	okPart, isOk := object(m["ok"])
	errPart, isErr := object(m["error"])
	return (isOk && isString(okPart["content"])) || (isErr && isString(errPart["message"]))
}

const u64, u32 = math.MaxUint64, math.MaxUint32

type shape struct{ required, optional map[string]fits }

// Rule 4: each known type's required fields, then its optional ones.
var known = map[string]shape{
	"stage":      {map[string]fits{"name": isString, "scope": oneOf("turn", "run")}, nil},
	"text":       {map[string]fits{"text": isString}, nil},
	"text_delta": {map[string]fits{"delta": isString}, nil},
	"reasoning":  {map[string]fits{"delta": isString}, nil},
	"tool_start": {map[string]fits{"call": toolCall}, nil},
	"tool_result": {map[string]fits{"call_id": isString, "output": toolOutput, "duration_ms": uint(u64)},
		map[string]fits{"speculated": isBool}},
	"step_usage": {map[string]fits{"step": uint(u64), "model": isString, "input_tokens": uint(u64),
		"output_tokens": uint(u64), "cached_input_tokens": uint(u64), "cost_usd": isNumber,
		"duration_ms": uint(u64), "retries": uint(u32), "tool_calls": uint(u64)},
		map[string]fits{"provider": isString, "reasoning_tokens": orNull(uint(u64)),
			"output_text": orNull(isString), "complete": isBool}},
	"turn_complete": {map[string]fits{"model": isString, "cost_usd": isNumber}, nil},
	"run_complete":  {map[string]fits{"model": isString, "cost_usd": isNumber}, nil},
	"error":         {map[string]fits{"message": isString, "retryable": isBool}, nil},
	"budget_tick": {map[string]fits{"spent_usd": isNumber, "mode": oneOf("off", "observed", "enforced")},
		map[string]fits{"limit_usd": orNull(isNumber), "session_spent_usd": orNull(isNumber),
			"session_limit_usd": orNull(isNumber), "deadline_remaining_ms": orNull(uint(u64))}},
	"file_change": {map[string]fits{"path": isString, "kind": oneOf("read", "created", "modified", "deleted")},
		map[string]fits{"added": uint(u32), "removed": uint(u32), "diff": orNull(isString)}},
}

var aliases = map[string][2]string{"text": {"text", "delta"}, "text_delta": {"delta", "text"}}
var archived = map[string]string{"stage": "scope"} // a stage from before `scope` existed

type problem struct {
	line   int
	reason string
}

type trivialReader struct {
	report            *reporter
	pending, rejected *problem // pending: corrupt; the torn last line if nothing follows
	known, unknown    int
	unknownTypes      map[string]bool
	texts             []string
	turns             int
	lastKnown         string
	completed         bool
}

func newTrivialReader(report *reporter) *trivialReader {
	return &trivialReader{report: report, unknownTypes: map[string]bool{}}
}

// read reads the whole stream, one physical line at a time as soon as it has arrived (split
// at LF only, on bytes, however long the line: a CR or U+2028 inside a line is no line end),
// and returns what it read.
func (r *trivialReader) read(stream io.Reader) message {
	in := bufio.NewReader(stream)
	for number := 1; ; number++ {
		raw, err := in.ReadBytes('\n')
		if len(raw) > 0 {
			r.push(number, raw)
		}
		if err != nil || r.rejected != nil {
			break // the end of the stream, or the first error, which ends it
		}
	}
	r.finish()
	return r.summary()
}

func parseLine(content []byte) (interface{}, error) {
	if !utf8.Valid(content) {
		return nil, fmt.Errorf("not UTF-8")
	}
	decoder := json.NewDecoder(bytes.NewReader(content))
	decoder.UseNumber() // integers checked exactly, beyond float64
	var value interface{}
	if err := decoder.Decode(&value); err != nil {
		return nil, err
	}
	if _, err := decoder.Token(); err != io.EOF {
		return nil, fmt.Errorf("more than one JSON value on the line")
	}
	return value, nil
}

func line(n int, outcome string) message {
	return message{"kind": "line", "line": n, "outcome": outcome}
}

func (r *trivialReader) push(n int, raw []byte) {
	content := bytes.TrimSuffix(raw, []byte("\n"))
	if len(bytes.Trim(content, " \t\r\n")) == 0 {
		r.report.line(n, "blank", nil, "")
		return
	}
	if r.pending != nil { // rule 6: a corrupt line with more after it is an error
		r.reject(r.pending.line, "corrupt line: "+r.pending.reason)
		return
	}
	value, err := parseLine(content) // rule 1: each line is one JSON document
	if err != nil {
		r.pending = &problem{n, err.Error()}
		r.report.pending(n)
		return
	}
	event, ok := object(value)
	if !ok {
		r.reject(n, "line is JSON but not an object")
		return
	}
	tag, isTag := event["type"].(string) // rule 2: the type string alone decides
	shape, isKnown := known[tag]
	if field, old := archived[tag]; isKnown && old {
		_, present := event[field]
		isKnown = present
	}
	if !isTag || !isKnown {
		r.unknown++         // rule 3: unrecognized events are counted, nothing more
		var typ interface{} // no string type: null
		if isTag {
			r.unknownTypes[tag] = true
			typ = tag
		}
		r.report.line(n, "unknown", typ, "")
		return
	}
	if alias, ok := aliases[tag]; ok {
		_, hasName := event[alias[0]]
		legacy, hasLegacy := event[alias[1]]
		if !hasName && hasLegacy {
			event[alias[0]] = legacy
		}
	}
	if why := misfit(tag, shape, event); why != "" { // rule 4: must fit; rule 5: extras ignored
		r.reject(n, why)
		return
	}
	r.known++
	r.lastKnown = tag
	if tag == "text" {
		r.texts = append(r.texts, event["text"].(string))
	}
	r.completed = r.completed || tag == "run_complete"
	if tag == "turn_complete" {
		r.turns++
	}
	r.report.line(n, "known", tag, "")
}

func misfit(tag string, s shape, event map[string]interface{}) string {
	for field, ok := range s.required {
		value, present := event[field]
		if !present {
			return fmt.Sprintf("%s: missing required field '%s'", tag, field)
		}
		if !ok(value) {
			return fmt.Sprintf("%s: field '%s' has the wrong shape", tag, field)
		}
	}
	for field, ok := range s.optional {
		if value, present := event[field]; present && !ok(value) {
			return fmt.Sprintf("%s: field '%s' has the wrong shape", tag, field)
		}
	}
	if ts, present := event["ts"]; present && ts != nil && !uint(u64)(ts) { // null: no ts
		return fmt.Sprintf("%s: ts must be an integer >= 0", tag)
	}
	return ""
}

func (r *trivialReader) finish() {
	if r.pending != nil && r.rejected == nil { // rule 6: the cut-off final line is dropped
		r.report.line(r.pending.line, "torn", nil, r.pending.reason)
	}
}

func (r *trivialReader) reject(n int, reason string) {
	r.rejected = &problem{n, reason}
	r.report.line(n, "reject", nil, reason)
}

func (r *trivialReader) summary() message {
	types := []string{}
	for t := range r.unknownTypes {
		types = append(types, t)
	}
	sort.Strings(types)
	texts := append([]string{}, r.texts...) // [] rather than null when there are none
	s := message{"verdict": "accept", "rejected_line": nil,
		"known_events": r.known, "unrecognized_events": r.unknown, "unrecognized_types": types,
		"final_text": nil, "texts": texts, "turns_completed": r.turns, "terminator": nil}
	if r.rejected != nil {
		s["verdict"], s["rejected_line"] = "reject", r.rejected.line
	}
	if len(r.texts) > 0 {
		s["final_text"] = r.texts[len(r.texts)-1]
	}
	if r.completed {
		s["terminator"] = "run_complete"
	} else if r.lastKnown == "error" {
		s["terminator"] = "error"
	}
	return s
}

// knownTypes lists the types of the known table, sorted (what the hello claims).
func knownTypes() []string {
	names := make([]string, 0, len(known))
	for name := range known {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
