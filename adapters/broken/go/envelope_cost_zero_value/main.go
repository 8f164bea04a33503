// Go pitfall: the envelope decoded with encoding/json into a struct whose cost is a plain
// float64 (CostUSD float64 `json:"cost_usd"`). A key absent from the document leaves its
// field at Go's zero value, so the pre-flight error envelope ("no API key found"), which
// has no cost_usd, reads as a run that cost $0.00, where stella reported no cost at all.
// The fields this reader knows may be null are pointers (*string: nil for null or absent);
// the cost, present in every envelope its author had seen, is not. Otherwise a conforming
// envelope reader: the schema_version gate, the failure shapes, files_touched one level
// in, the events by the stream rules (the conforming Go reader beside it), exact token
// sums (the events decoded with UseNumber).
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"stella-broken/reader"
)

const name = "envelope-cost-zero-value-go"

// envelope is what this reader takes from a turn envelope's keys.
type envelope struct {
	Status  *string `json:"status"`
	Text    *string `json:"text"`
	Model   *string `json:"model"`
	Reason  *string `json:"reason"`
	CostUSD float64 `json:"cost_usd"` // absent: 0, Go's zero value
}

var queries = []string{"stats", "usage report", "inspect", "calibration", "memory list",
	"context list", "context validate"}

func isQuery(command string) bool {
	words := []string{}
	for _, w := range strings.Fields(command) {
		if !strings.HasPrefix(w, "-") {
			words = append(words, w)
		}
	}
	if len(words) > 0 && words[0] == "stella" {
		words = words[1:]
	}
	text := strings.Join(words, " ")
	for _, q := range queries {
		if text == q || strings.HasPrefix(text, q+" ") {
			return true
		}
	}
	return false
}

// parse is the document as one JSON value, its numbers exact (json.Number).
func parse(data []byte) (interface{}, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("not UTF-8")
	}
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.UseNumber()
	var value interface{}
	if err := decoder.Decode(&value); err != nil {
		return nil, err
	}
	if _, err := decoder.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return value, nil
}

func filesTouched(doc map[string]interface{}) (interface{}, error) {
	value := doc["files_touched"] // absent or null: none
	if value == nil {
		return nil, nil
	}
	payload, ok := value.(map[string]interface{})
	if !ok {
		return nil, errors.New("files_touched is not an object")
	}
	records := payload["files_touched"]
	if records == nil {
		return nil, nil
	}
	list, ok := records.([]interface{})
	if !ok {
		return nil, errors.New("files_touched.files_touched is not an array")
	}
	paths := []string{}
	for _, record := range list {
		r, ok := record.(map[string]interface{})
		path, isString := r["path"].(string)
		if !ok || !isString {
			return nil, errors.New("a files_touched record has no path")
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// events reads the events array by the stream rules, each event a line of its own.
func events(doc map[string]interface{}, out reader.Message) error {
	value := doc["events"]
	out["unrecognized_events"], out["input_tokens"], out["output_tokens"] = nil, nil, nil
	if value == nil {
		return nil
	}
	list, ok := value.([]interface{})
	if !ok {
		return errors.New("events is not an array")
	}
	r := reader.New()
	for i, event := range list {
		raw, err := json.Marshal(event)
		if err != nil {
			return err
		}
		r.Push(i+1, raw)
		if r.Rejected() {
			_, why := r.Why()
			return fmt.Errorf("events[%d]: %s", i, why)
		}
	}
	r.Finish()
	summary := r.Summary()
	out["unrecognized_events"] = summary["unrecognized_events"]
	out["input_tokens"], out["output_tokens"] = 0, 0
	if usage, ok := summary["usage"].(reader.Message); ok {
		out["input_tokens"], out["output_tokens"] = usage["input_tokens"], usage["output_tokens"]
	}
	return nil
}

func read(data []byte, command string) (reader.Message, error) {
	value, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("not a JSON document: %v", err)
	}
	doc, ok := value.(map[string]interface{})
	if !ok {
		return nil, errors.New("the envelope is not an object")
	}
	if version, ok := doc["schema_version"].(json.Number); !ok || version.String() != "1" {
		return nil, fmt.Errorf("unsupported schema_version %v; this script knows 1", doc["schema_version"])
	}
	out := reader.Message{}
	if isQuery(command) {
		rows, has := doc["rows"]
		list, isList := rows.([]interface{})
		if has && !isList {
			return nil, errors.New("rows is not an array")
		}
		out["rows"] = nil
		if isList {
			out["rows"] = len(list)
		}
		return out, nil
	}
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, err
	}
	if env.Status == nil {
		return nil, errors.New("status is missing")
	}
	out["status"], out["text"], out["model"], out["stop_reason"] = *env.Status, env.Text, env.Model, env.Reason
	out["cost_usd"] = env.CostUSD
	if out["files_touched"], err = filesTouched(doc); err != nil {
		return nil, err
	}
	if err := events(doc, out); err != nil {
		return nil, err
	}
	return out, nil
}

func summarize(data []byte, command string) reader.Message {
	fields, err := read(data, command)
	if err != nil {
		return reader.Message{"kind": "summary", "verdict": "reject", "error": err.Error()}
	}
	fields["kind"], fields["verdict"] = "summary", "accept"
	return fields
}

func emit(m reader.Message) {
	line, _ := json.Marshal(m)
	os.Stdout.Write(append(line, '\n'))
}

func main() {
	command := os.Getenv("STELLA_CONFORM_COMMAND")
	if command == "" {
		command = "stella run --output-format json"
	}
	mode := os.Getenv("STELLA_CONFORM_MODE")
	hello := reader.Message{"kind": "hello", "protocol": 1, "profiles": []string{"envelope"},
		"client": map[string]string{"name": name, "version": "1.0", "language": "go"}}
	if mode == "persistent" {
		emit(hello)
		frames := bufio.NewReader(os.Stdin)
		for {
			frame, err := frames.ReadBytes('\n')
			var msg struct {
				Kind, ID, Stream string
				Env              map[string]string
			}
			if len(frame) > 0 && json.Unmarshal(frame, &msg) == nil {
				if msg.Kind == "shutdown" {
					os.Exit(0)
				}
				if msg.Kind == "case" {
					data, _ := base64.StdEncoding.DecodeString(msg.Stream)
					ran := command
					if c, ok := msg.Env["STELLA_CONFORM_COMMAND"]; ok {
						ran = c
					}
					summary := summarize(data, ran)
					summary["id"] = msg.ID
					emit(summary)
				}
			}
			if err != nil {
				os.Exit(0)
			}
		}
	}
	if mode == "report" {
		emit(hello) // before reading: the kit sends the document after the hello
	}
	in := io.Reader(os.Stdin)
	if len(os.Args) > 1 {
		file, err := os.Open(os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		in = file
	}
	data, _ := io.ReadAll(in)
	summary := summarize(data, command)
	if mode == "report" {
		emit(summary)
	} else if summary["verdict"] == "reject" {
		fmt.Fprintf(os.Stderr, "%s: %s\n", name, summary["error"])
	}
	if summary["verdict"] == "reject" {
		os.Exit(1)
	}
}
