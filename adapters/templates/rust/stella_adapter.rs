//! A stella-conform adapter (report and persistent modes) around a serde stella reader.
//!
//! Written by `stella-conform init rust`.  Build and grade it as it is, then make it yours:
//!
//!     cargo build --release
//!     stella-conform smoke --mode report -- ./target/release/stella-adapter
//!     stella-conform run -- ./target/release/stella-adapter
//!
//! The lines marked `EDIT` are the ones to change.  `read_stream` is handed the raw bytes of
//! one stella stream as a `BufRead`: call your own parser on it there, as your program calls
//! it on stdin or on the pipe from stella, so that your parser's own line splitting, decoding
//! and buffering are what the kit grades; then tell `report` what it made of each line and
//! return what it read.  Everything else speaks the adapter protocol
//! (docs/adapter-protocol.md) and can stay as it is.  Rust 1.63 or newer; serde and
//! serde_json are the only dependencies.
//!
//! An adapter grades your parser as it reads the bytes it is handed here.  Grade the program
//! your users run as well, unmodified, by its exit status:
//! `stella-conform run --mode exit -- your-cli ARGS` (the stream on its stdin).
//!
//! Three things a natural Rust reader gets wrong, done right here:
//! - the stream is read with `read_until(b'\n')`, one line as soon as it has arrived.  Never
//!   `lines()`, which ends the whole stream at the first line that is not UTF-8, and never
//!   a peek at the next line (`lines().peekable()`): in report mode the kit writes line
//!   k+1 only after the answer for line k, so a reader that waits for it deadlocks.
//! - a line that does not parse (a torn last line, cut inside a UTF-8 character or
//!   anywhere else) is held back: it is the torn tail if nothing but blank lines follows,
//!   and an error if another line arrives.
//! - the event enum is tagged on `type` with a catch-all (`#[serde(other)]`), so a type
//!   the reader does not know is counted, not an error; a missing or non-string `type` is
//!   one too.

use serde::{Deserialize, Deserializer};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io::{self, BufRead, Write};

const CLIENT_NAME: &str = "my-stella-client"; // EDIT: yours
const CLIENT_VERSION: &str = "0.1"; // EDIT: yours

/// Read one stella stream: `stream` holds its raw bytes (stdin itself in report mode, a
/// case's bytes in persistent mode).  For each physical line, call `report.line(..)` as soon
/// as your parser has read it (or `report.pending(number)` for a line that does not parse,
/// until the next line tells whether it was the torn last one); return the summary
/// (docs/adapter-protocol.md: the summary, field by field), whose `verdict` is `"accept"` or
/// `"reject"`.  In report mode the kit writes line k+1 only after the answer for line k, so
/// answer each line as it arrives, never after reading ahead.
fn read_stream(stream: &mut dyn BufRead, report: &Report) -> Value {
    Reader::default().read(stream, report) // EDIT: your parser, reading `stream` itself
}

fn main() {
    let persistent = matches!(std::env::var("STELLA_CONFORM_MODE").as_deref(), Ok("persistent"));
    emit(
        // `knows`: the types your parser recognizes (today's stella's, or an older one's too),
        // so the kit grades it on streams of any stella by what it knows, not by what it wrote
        json!({"kind": "hello", "protocol": 1, "profiles": ["reader"],
               "client": {"name": CLIENT_NAME, "version": CLIENT_VERSION, "language": "rust"},
               "modes": ["report", "persistent"], "knows": KNOWN}), // EDIT: what yours knows
        None,
    );
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let status = if persistent {
        serve_cases(&mut input)
    } else {
        let report = Report { id: None };
        let mut summary = read_stream(&mut input, &report); // report mode: the stream is stdin
        let rejected = summary["verdict"] == "reject";
        summary["kind"] = json!("summary");
        emit(summary, None);
        i32::from(rejected)
    };
    std::process::exit(status);
}

/// Persistent mode: one case per stdin line, `{"kind":"case","id":..,"stream":<base64>}`,
/// each answered with observations and a summary that carry its id.
fn serve_cases(input: &mut impl BufRead) -> i32 {
    let mut raw = Vec::new();
    loop {
        raw.clear();
        match input.read_until(b'\n', &mut raw) {
            Ok(0) | Err(_) => return 0,
            Ok(_) => {}
        }
        let message: Value = match serde_json::from_slice(&raw) {
            Ok(message) => message,
            Err(_) => continue, // not a message of this protocol: ignored
        };
        match message["kind"].as_str() {
            Some("case") => {}
            Some("shutdown") => return 0,
            _ => continue,
        }
        let stream = match message["stream"].as_str().and_then(base64_decode) {
            Some(stream) => stream,
            None => {
                eprintln!("stella-adapter: a case without a base64 stream");
                return 2;
            }
        };
        let report = Report { id: Some(message["id"].clone()) };
        let mut summary = read_stream(&mut stream.as_slice(), &report);
        summary["kind"] = json!("summary");
        report.emit(summary);
    }
}

/// What the parser made of each line, written to the kit at once (with the case's id in
/// persistent mode).
struct Report {
    id: Option<Value>,
}

// `line` and `pending` are for your parser: the serde reader hands over whole observations
#[allow(dead_code)]
impl Report {
    /// A line's `outcome` (`known`, `unknown`, `blank`, `torn` or `reject`), with its `type`
    /// (known and unknown lines: a string, or null when the line had none) and a `reason`.
    fn line(&self, number: usize, outcome: &str, tag: Option<&str>, reason: Option<&str>) {
        let mut message = line(number, outcome);
        if outcome == "known" || outcome == "unknown" {
            message["type"] = json!(tag);
        }
        if let Some(reason) = reason {
            message["reason"] = json!(reason);
        }
        self.emit(message);
    }

    fn pending(&self, number: usize) {
        self.emit(json!({"kind": "pending", "line": number}));
    }

    fn emit(&self, message: Value) {
        emit(message, self.id.as_ref());
    }
}

/// One message on one line, flushed at once: in report mode the kit writes the next line
/// only after this answer (lockstep).
fn emit(mut message: Value, id: Option<&Value>) {
    if let (Some(id), Some(object)) = (id, message.as_object_mut()) {
        object.insert("id".to_string(), id.clone());
    }
    let mut out = io::stdout().lock();
    let _ = writeln!(out, "{}", message).and_then(|_| out.flush());
}

fn base64_decode(text: &str) -> Option<Vec<u8>> {
    fn value(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let bytes = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i);
        }
        let keep = match chunk.len() {
            4 => 3,
            3 => 2,
            2 => 1,
            _ => return None,
        };
        out.extend_from_slice(&n.to_be_bytes()[1..1 + keep]);
    }
    Some(out)
}

// ---------------------------------------------------------------------------------------
// The serde reader: the six rules of stella's stream contract, and nothing more.
// Replace it with your parser; keep what it reports.

/// The types `Event` knows, as the hello claims them (one name per variant but `Unknown`).
const KNOWN: [&str; 12] = [
    "stage", "text", "text_delta", "reasoning", "tool_start", "tool_result", "step_usage",
    "turn_complete", "run_complete", "error", "budget_tick", "file_change",
];

/// Rule 4: each known type's body, as the wire schema has it.  Rule 5: unknown fields are
/// ignored (serde's default).  Rule 3: any other type is `Unknown`.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    Stage { name: String, scope: Scope },
    Text {
        #[serde(alias = "delta")] // the legacy spelling
        text: String,
    },
    TextDelta {
        #[serde(alias = "text")] // the legacy spelling
        delta: String,
    },
    Reasoning { delta: String },
    ToolStart { call: ToolCall },
    ToolResult {
        call_id: String,
        output: ToolOutput,
        duration_ms: u64,
        #[serde(default, deserialize_with = "present")]
        speculated: Option<bool>,
    },
    StepUsage {
        step: u64,
        model: String,
        input_tokens: u64,
        output_tokens: u64,
        cached_input_tokens: u64,
        cost_usd: f64,
        duration_ms: u64,
        retries: u32,
        tool_calls: u64,
        #[serde(default, deserialize_with = "present")]
        provider: Option<String>,
        #[serde(default)]
        reasoning_tokens: Option<u64>,
        #[serde(default)]
        output_text: Option<String>,
        #[serde(default, deserialize_with = "present")]
        complete: Option<bool>,
    },
    TurnComplete { model: String, cost_usd: f64 },
    RunComplete { model: String, cost_usd: f64 },
    Error { message: String, retryable: bool },
    BudgetTick {
        spent_usd: f64,
        mode: BudgetMode,
        #[serde(default)]
        limit_usd: Option<f64>,
        #[serde(default)]
        session_spent_usd: Option<f64>,
        #[serde(default)]
        session_limit_usd: Option<f64>,
        #[serde(default)]
        deadline_remaining_ms: Option<u64>,
    },
    FileChange {
        path: String,
        kind: ChangeKind,
        #[serde(default, deserialize_with = "present")]
        added: Option<u32>,
        #[serde(default, deserialize_with = "present")]
        removed: Option<u32>,
        #[serde(default)]
        diff: Option<String>,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Scope {
    Turn,
    Run,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum BudgetMode {
    Off,
    Observed,
    Enforced,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum ChangeKind {
    Read,
    Created,
    Modified,
    Deleted,
}

#[allow(dead_code)]
#[derive(Deserialize)]
struct ToolCall {
    call_id: String,
    name: String,
    input: Value, // any JSON value, but present
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum ToolOutput {
    Ok { content: String },
    Error { message: String },
}

/// `ts`, on every known event: optional, null as good as absent, else an integer >= 0.
#[allow(dead_code)]
#[derive(Deserialize)]
struct Stamp {
    #[serde(default)]
    ts: Option<u64>,
}

/// An optional field that may be left out, but is never null when it is there.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

#[derive(Default)]
struct Reader {
    /// A line that did not parse: the torn last line, unless another line follows.
    pending: Option<(usize, String)>,
    rejected: Option<usize>,
    known: u64,
    unknown: u64,
    unknown_types: BTreeSet<String>,
    texts: Vec<String>,
    turns: u64,
    completed: bool,
    ended_on_error: bool,
}

fn line(number: usize, outcome: &str) -> Value {
    json!({"kind": "line", "line": number, "outcome": outcome})
}

impl Reader {
    /// The whole stream, one physical line at a time as soon as it has arrived (split at LF
    /// only, on bytes: a CR or U+2028 inside a line is no line end), each line's observations
    /// told to `report` at once; what it read.
    fn read(mut self, stream: &mut dyn BufRead, report: &Report) -> Value {
        let mut raw = Vec::new();
        let mut number = 0;
        loop {
            raw.clear();
            match stream.read_until(b'\n', &mut raw) {
                Ok(0) | Err(_) => break, // the end of the stream
                Ok(_) => number += 1,
            }
            for observation in self.push(number, &raw) {
                report.emit(observation);
            }
            if self.rejected.is_some() {
                break; // the first error ends the stream
            }
        }
        for observation in self.finish() {
            report.emit(observation);
        }
        self.summary()
    }

    /// Observations for one physical line (bytes, with its newline if it had one).
    fn push(&mut self, number: usize, raw: &[u8]) -> Vec<Value> {
        let content = raw.strip_suffix(b"\n").unwrap_or(raw);
        if content.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n')) {
            return vec![line(number, "blank")];
        }
        if let Some((at, why)) = self.pending.take() {
            // rule 6: a corrupt line with more after it is an error
            return self.reject(at, format!("corrupt line: {}", why));
        }
        // rule 1: each line is one JSON document (from_slice checks the UTF-8 too)
        let value: Value = match serde_json::from_slice(content) {
            Ok(value) => value,
            Err(error) => {
                self.pending = Some((number, error.to_string()));
                return vec![json!({"kind": "pending", "line": number})];
            }
        };
        let tag = match value.as_object() {
            Some(object) => object.get("type").and_then(Value::as_str).map(str::to_owned),
            None => return self.reject(number, "line is JSON but not an object".to_string()),
        };
        // rule 2: the type string alone decides; no string type, or a stage from before
        // `scope` existed, is an unrecognized event
        let archived = tag.as_deref() == Some("stage") && value.get("scope").is_none();
        let event = match &tag {
            Some(_) if !archived => Event::deserialize(&value),
            _ => Ok(Event::Unknown),
        };
        let tag_text = tag.clone().unwrap_or_default();
        let event = event.and_then(|event| match event {
            Event::Unknown => Ok(event), // an unrecognized event's fields are never read
            _ => Stamp::deserialize(&value).map(|_| event),
        });
        match event {
            Err(error) => self.reject(number, format!("{}: {}", tag_text, error)), // rule 4
            Ok(Event::Unknown) => {
                self.unknown += 1; // rule 3: unrecognized events are counted, nothing more
                if let Some(tag) = &tag {
                    self.unknown_types.insert(tag.clone());
                }
                let mut observation = line(number, "unknown");
                observation["type"] = json!(tag);
                vec![observation]
            }
            Ok(event) => {
                self.known += 1;
                self.ended_on_error = matches!(event, Event::Error { .. });
                match event {
                    Event::Text { text } => self.texts.push(text),
                    Event::TurnComplete { .. } => self.turns += 1,
                    Event::RunComplete { .. } => self.completed = true,
                    _ => {}
                }
                let mut observation = line(number, "known");
                observation["type"] = json!(tag_text);
                vec![observation]
            }
        }
    }

    fn finish(&mut self) -> Vec<Value> {
        match (&self.pending, self.rejected) {
            (Some((number, why)), None) => {
                // rule 6: the cut-off final line is dropped
                let mut observation = line(*number, "torn");
                observation["reason"] = json!(why);
                vec![observation]
            }
            _ => vec![],
        }
    }

    fn reject(&mut self, number: usize, reason: String) -> Vec<Value> {
        self.rejected = Some(number);
        let mut observation = line(number, "reject");
        observation["reason"] = json!(reason);
        vec![observation]
    }

    fn summary(&self) -> Value {
        let terminator = if self.completed {
            Some("run_complete")
        } else if self.ended_on_error {
            Some("error")
        } else {
            None
        };
        json!({
            "kind": "summary",
            "verdict": if self.rejected.is_some() { "reject" } else { "accept" },
            "rejected_line": self.rejected,
            "known_events": self.known,
            "unrecognized_events": self.unknown,
            "unrecognized_types": self.unknown_types,
            "final_text": self.texts.last(),
            "texts": self.texts,
            "turns_completed": self.turns,
            "terminator": terminator,
        })
    }
}
