//! A conforming stella stream reader with serde (an enum tagged on `type` with a
//! catch-all, the wire schema's bodies, legacy spellings as aliases) and the adapter
//! protocol around it, for the broken Rust clients in `src/bin`: each swaps exactly one
//! piece (how lines are read, how a known body is decoded, how values are found) for the
//! pitfall it models.

use serde::{Deserialize, Deserializer};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io::{self, BufRead, Write};

/// Rule 4: each known type's body, as the wire schema has it; rule 5: unknown fields are
/// ignored (serde's default).
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Known {
    Stage { name: String, scope: Scope },
    Text {
        #[serde(alias = "delta")]
        text: String,
    },
    TextDelta {
        #[serde(alias = "text")]
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
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    Turn,
    Run,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetMode {
    Off,
    Observed,
    Enforced,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Read,
    Created,
    Modified,
    Deleted,
}

#[allow(dead_code)]
#[derive(Deserialize)]
pub struct ToolCall {
    call_id: String,
    name: String,
    input: Value,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolOutput {
    Ok { content: String },
    Error { message: String },
}

#[allow(dead_code)]
#[derive(Deserialize)]
struct Stamp {
    #[serde(default)]
    ts: Option<u64>,
}

fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// What a known type's body decodes to: the event, or why it does not fit; `None` when
/// the reader reads the line as an unrecognized event after all.
pub type Decode = fn(&Value) -> Option<Result<Known, String>>;

/// The conforming decode: the type is known, so the body must fit.
pub fn decode_known(value: &Value) -> Option<Result<Known, String>> {
    Some(Known::deserialize(value).map_err(|e| e.to_string()))
}

const KNOWN_TYPES: &[&str] = &[
    "stage", "text", "text_delta", "reasoning", "tool_start", "tool_result", "step_usage",
    "turn_complete", "run_complete", "error", "budget_tick", "file_change",
];

pub struct Reader {
    pub decode: Decode,
    pending: Option<(usize, String)>,
    rejected: Option<usize>,
    why: String,
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
    pub fn new(decode: Decode) -> Reader {
        Reader {
            decode,
            pending: None,
            rejected: None,
            why: String::new(),
            known: 0,
            unknown: 0,
            unknown_types: BTreeSet::new(),
            texts: Vec::new(),
            turns: 0,
            completed: false,
            ended_on_error: false,
        }
    }

    pub fn rejected(&self) -> bool {
        self.rejected.is_some()
    }

    /// Observations for one physical line (bytes, with its newline if it had one).
    pub fn push(&mut self, number: usize, raw: &[u8]) -> Vec<Value> {
        if self.rejected.is_some() {
            return vec![];
        }
        let content = raw.strip_suffix(b"\n").unwrap_or(raw);
        if content.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n')) {
            return vec![line(number, "blank")];
        }
        if let Some((at, why)) = self.pending.take() {
            return self.reject(at, format!("corrupt line: {}", why));
        }
        match serde_json::from_slice::<Value>(content) {
            Ok(value) => self.value(number, value),
            Err(error) => {
                self.pending = Some((number, error.to_string()));
                vec![json!({"kind": "pending", "line": number})]
            }
        }
    }

    /// One parsed JSON value, the event of line `number`.
    pub fn value(&mut self, number: usize, value: Value) -> Vec<Value> {
        let tag = match value.as_object() {
            Some(object) => object.get("type").and_then(Value::as_str).map(str::to_owned),
            None => return self.reject(number, "line is JSON but not an object".to_string()),
        };
        let archived = tag.as_deref() == Some("stage") && value.get("scope").is_none();
        let known = match &tag {
            Some(t) if KNOWN_TYPES.contains(&t.as_str()) && !archived => (self.decode)(&value),
            _ => None,
        };
        let known = known.map(|result| {
            result.and_then(|event| {
                Stamp::deserialize(&value).map(|_| event).map_err(|e| e.to_string())
            })
        });
        let tag_text = tag.clone().unwrap_or_default();
        match known {
            None => {
                self.unknown += 1;
                if let Some(tag) = &tag {
                    self.unknown_types.insert(tag.clone());
                }
                let mut observation = line(number, "unknown");
                observation["type"] = json!(tag);
                vec![observation]
            }
            Some(Err(error)) => self.reject(number, format!("{}: {}", tag_text, error)),
            Some(Ok(event)) => {
                self.known += 1;
                self.ended_on_error = matches!(event, Known::Error { .. });
                match event {
                    Known::Text { text } => self.texts.push(text),
                    Known::TurnComplete { .. } => self.turns += 1,
                    Known::RunComplete { .. } => self.completed = true,
                    _ => {}
                }
                let mut observation = line(number, "known");
                observation["type"] = json!(tag_text);
                vec![observation]
            }
        }
    }

    pub fn finish(&mut self) -> Vec<Value> {
        match (self.pending.take(), self.rejected) {
            (Some((number, why)), None) => {
                let mut observation = line(number, "torn");
                observation["reason"] = json!(why);
                vec![observation]
            }
            _ => vec![],
        }
    }

    pub fn reject(&mut self, number: usize, reason: String) -> Vec<Value> {
        self.rejected = Some(number);
        self.why = reason.clone();
        let mut observation = line(number, "reject");
        observation["reason"] = json!(reason);
        vec![observation]
    }

    pub fn summary(&self) -> Value {
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

// ---------------------------------------------------------------------------------------
// Lines and the adapter protocol.

/// How a client reads a stream: line by line (feeding `push`), or whole.
pub enum Read {
    /// Hands each physical line to `each` until it returns false.
    Lines(fn(&mut dyn BufRead, &mut dyn FnMut(usize, &[u8]) -> bool) -> Result<(), (usize, String)>),
    /// Reads the whole stream itself (the client reports a summary only).
    Whole(fn(&[u8], &mut Reader)),
}

/// The conforming line reader: `read_until(b'\n')`, each line as soon as it has arrived.
pub fn read_until_lines(
    input: &mut dyn BufRead,
    each: &mut dyn FnMut(usize, &[u8]) -> bool,
) -> Result<(), (usize, String)> {
    let mut raw = Vec::new();
    let mut number = 0;
    loop {
        raw.clear();
        match input.read_until(b'\n', &mut raw) {
            Ok(0) => return Ok(()),
            Ok(_) => number += 1,
            Err(error) => return Err((number + 1, error.to_string())),
        }
        if !each(number, &raw) {
            return Ok(());
        }
    }
}

pub struct Client {
    pub name: &'static str,
    pub read: Read,
    pub decode: Decode,
}

fn emit(mut message: Value, id: Option<&Value>) {
    if let (Some(id), Some(object)) = (id, message.as_object_mut()) {
        object.insert("id".to_string(), id.clone());
    }
    let mut out = io::stdout().lock();
    let _ = writeln!(out, "{}", message).and_then(|_| out.flush());
}

impl Client {
    /// One stream read by this client; its messages go to `out`.
    pub fn read(&self, input: &mut dyn BufRead, out: &mut dyn FnMut(Value)) -> Reader {
        let mut reader = Reader::new(self.decode);
        match self.read {
            Read::Whole(whole) => {
                let mut data = Vec::new();
                let _ = input.read_to_end(&mut data);
                whole(&data, &mut reader);
            }
            Read::Lines(lines) => {
                let result = lines(input, &mut |number, raw| {
                    for observation in reader.push(number, raw) {
                        out(observation);
                    }
                    !reader.rejected()
                });
                if let Err((number, why)) = result {
                    if !reader.rejected() {
                        for observation in reader.reject(number, why) {
                            out(observation);
                        }
                    }
                }
                for observation in reader.finish() {
                    out(observation);
                }
            }
        }
        reader
    }

    /// Runs the client in the mode the kit chose (exit when none).
    pub fn main(&self) {
        let mode = std::env::var("STELLA_CONFORM_MODE").unwrap_or_default();
        let stdin = io::stdin();
        let mut input = stdin.lock();
        let mut hello = json!({"kind": "hello", "protocol": 1, "profiles": ["reader"],
            "client": {"name": self.name, "version": "1.0", "language": "rust"}});
        if let Read::Whole(_) = self.read {
            hello["summary_only"] = json!(true);
        }
        match mode.as_str() {
            "report" => {
                emit(hello, None);
                let reader = self.read(&mut input, &mut |m| emit(m, None));
                emit(reader.summary(), None);
                std::process::exit(if reader.rejected() { 1 } else { 0 });
            }
            "persistent" => {
                emit(hello, None);
                let mut frame = Vec::new();
                loop {
                    frame.clear();
                    match input.read_until(b'\n', &mut frame) {
                        Ok(0) | Err(_) => std::process::exit(0),
                        Ok(_) => {}
                    }
                    let message: Value = match serde_json::from_slice(&frame) {
                        Ok(message) => message,
                        Err(_) => continue,
                    };
                    match message["kind"].as_str() {
                        Some("case") => {}
                        Some("shutdown") => std::process::exit(0),
                        _ => continue,
                    }
                    let id = message["id"].clone();
                    let stream = message["stream"].as_str().and_then(base64_decode);
                    let stream = stream.unwrap_or_default();
                    let reader = self.read(&mut &stream[..], &mut |m| emit(m, Some(&id)));
                    emit(reader.summary(), Some(&id));
                }
            }
            _ => {
                let reader = self.read(&mut input, &mut |_| {});
                if let Some(number) = reader.rejected {
                    eprintln!("{}: line {}: {}", self.name, number, reader.why);
                    std::process::exit(1);
                }
            }
        }
    }
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

/// The line of a byte offset (1-based).
pub fn line_at(data: &[u8], offset: usize) -> usize {
    1 + data[..offset.min(data.len())].iter().filter(|&&b| b == b'\n').count()
}
