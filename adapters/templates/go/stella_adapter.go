// A stella-conform adapter (report mode) around a trivial stella reader.
//
// Written by `stella-conform init go`.  Build and grade it as it is, then make it yours:
//
//	go build -o stella-adapter .
//	stella-conform smoke --mode report -- ./stella-adapter
//	stella-conform run --mode report -- ./stella-adapter
//
// The lines marked `EDIT` are the ones to change: call your own parser where the trivial
// reader is called, and report what it did.  Everything else speaks the adapter protocol
// (docs/adapter-protocol.md) and can stay as it is.  Go 1.19 or newer, standard library only.
package main

import (
	"bufio"
	"bytes"
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

func main() {
	// "knows": the types your parser recognizes (today's stella's, or an older one's too), so
	// the kit grades it on streams of any stella by what it knows, not by what that stella wrote
	emit(message{"kind": "hello", "protocol": 1, "client": client, "profiles": []string{"reader"},
		"modes": []string{"report"}, "knows": knownTypes()})
	reader := newTrivialReader() // EDIT: your parser, fed one physical line at a time
	in := bufio.NewReader(os.Stdin)
	for number := 1; ; number++ {
		raw, err := in.ReadBytes('\n') // one line as soon as it arrives
		if len(raw) > 0 {
			for _, o := range reader.push(number, raw) { // EDIT: hand the line to your parser
				emit(o)
			}
		}
		if err != nil || reader.rejected != nil {
			break
		}
	}
	for _, o := range reader.finish() { // EDIT: tell your parser the stream ended
		emit(o)
	}
	emit(reader.summary()) // EDIT: what your parser read (verdict, counts, final text)
	if reader.rejected != nil {
		os.Exit(1)
	}
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
	pending, rejected *problem // pending: corrupt; the torn last line if nothing follows
	known, unknown    int
	unknownTypes      map[string]bool
	texts             []string
	turns             int
	lastKnown         string
	completed         bool
}

func newTrivialReader() *trivialReader {
	return &trivialReader{unknownTypes: map[string]bool{}}
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

func (r *trivialReader) push(n int, raw []byte) []message {
	content := bytes.TrimSuffix(raw, []byte("\n"))
	if len(bytes.Trim(content, " \t\r\n")) == 0 {
		return []message{line(n, "blank")}
	}
	if r.pending != nil { // rule 6: a corrupt line with more after it is an error
		return r.reject(r.pending.line, "corrupt line: "+r.pending.reason)
	}
	value, err := parseLine(content) // rule 1: each line is one JSON document
	if err != nil {
		r.pending = &problem{n, err.Error()}
		return []message{{"kind": "pending", "line": n}}
	}
	event, ok := object(value)
	if !ok {
		return r.reject(n, "line is JSON but not an object")
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
		return []message{o}
	}
	if alias, ok := aliases[tag]; ok {
		_, hasName := event[alias[0]]
		legacy, hasLegacy := event[alias[1]]
		if !hasName && hasLegacy {
			event[alias[0]] = legacy
		}
	}
	if why := misfit(tag, shape, event); why != "" { // rule 4: must fit; rule 5: extras ignored
		return r.reject(n, why)
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
	o := line(n, "known")
	o["type"] = tag
	return []message{o}
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

func (r *trivialReader) finish() []message {
	if r.pending == nil || r.rejected != nil {
		return nil
	}
	o := line(r.pending.line, "torn") // rule 6: the cut-off final line is dropped
	o["reason"] = r.pending.reason
	return []message{o}
}

func (r *trivialReader) reject(n int, reason string) []message {
	r.rejected = &problem{n, reason}
	o := line(n, "reject")
	o["reason"] = reason
	return []message{o}
}

func (r *trivialReader) summary() message {
	types := []string{}
	for t := range r.unknownTypes {
		types = append(types, t)
	}
	sort.Strings(types)
	texts := append([]string{}, r.texts...) // [] rather than null when there are none
	s := message{"kind": "summary", "verdict": "accept", "rejected_line": nil,
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
