// The conforming serde reader of the broken Rust clients in `src/bin`, with the hooks each
// swaps one piece of (how lines are read, how a known body is decoded), and the adapter
// protocol around it.  Each client `include!`s this file after `template.rs`, which is
// `stella-conform init rust`'s template, adapters/templates/rust/stella_adapter.rs, copied
// in by adapters/broken/builds.py: the known types' bodies (`Event`, with the legacy
// spellings as aliases), `Stamp`, `KNOWN` and the protocol's `emit`, `line` and
// `base64_decode` are the template's own, so a fix to its reading is a fix here.

/// What a known type's body decodes to: the event, or why it does not fit; `None` when
/// the reader reads the line as an unrecognized event after all.
type Decode = fn(&Value) -> Option<Result<Event, String>>;

/// The conforming decode (the template's): the type is known, so the body must fit.
fn decode_known(value: &Value) -> Option<Result<Event, String>> {
    Some(Event::deserialize(value).map_err(|e| e.to_string()))
}

/// The template's reader (its state, `finish`, `reject` and `summary`) with its pieces as
/// hooks: fed a line or a parsed value at a time, a known body decoded by `decode`.
struct StreamReader {
    decode: Decode,
    state: Reader,
    why: String,
}

impl StreamReader {
    fn new(decode: Decode) -> StreamReader {
        StreamReader { decode, state: Reader::default(), why: String::new() }
    }

    fn rejected(&self) -> bool {
        self.state.rejected.is_some()
    }

    /// Observations for one physical line (bytes, with its newline if it had one).
    fn push(&mut self, number: usize, raw: &[u8]) -> Vec<Value> {
        if self.rejected() {
            return vec![];
        }
        let content = raw.strip_suffix(b"\n").unwrap_or(raw);
        if content.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n')) {
            return vec![line(number, "blank")];
        }
        if let Some((at, why)) = self.state.pending.take() {
            return self.reject(at, format!("corrupt line: {}", why));
        }
        match serde_json::from_slice::<Value>(content) {
            Ok(value) => self.value(number, value),
            Err(error) => {
                self.state.pending = Some((number, error.to_string()));
                vec![json!({"kind": "pending", "line": number})]
            }
        }
    }

    /// One parsed JSON value, the event of line `number`.
    fn value(&mut self, number: usize, value: Value) -> Vec<Value> {
        let tag = match value.as_object() {
            Some(object) => object.get("type").and_then(Value::as_str).map(str::to_owned),
            None => return self.reject(number, "line is JSON but not an object".to_string()),
        };
        let archived = tag.as_deref() == Some("stage") && value.get("scope").is_none();
        let known = match &tag {
            Some(t) if KNOWN.contains(&t.as_str()) && !archived => (self.decode)(&value),
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
                self.state.unknown += 1;
                if let Some(tag) = &tag {
                    self.state.unknown_types.insert(tag.clone());
                }
                let mut observation = line(number, "unknown");
                observation["type"] = json!(tag);
                vec![observation]
            }
            Some(Err(error)) => self.reject(number, format!("{}: {}", tag_text, error)),
            Some(Ok(event)) => {
                self.state.known += 1;
                self.state.ended_on_error = matches!(event, Event::Error { .. });
                match event {
                    Event::Text { text } => self.state.texts.push(text),
                    Event::TurnComplete { .. } => self.state.turns += 1,
                    Event::RunComplete { .. } => self.state.completed = true,
                    _ => {}
                }
                let mut observation = line(number, "known");
                observation["type"] = json!(tag_text);
                vec![observation]
            }
        }
    }

    fn finish(&mut self) -> Vec<Value> {
        self.state.finish()
    }

    fn reject(&mut self, number: usize, reason: String) -> Vec<Value> {
        self.why = reason.clone();
        self.state.reject(number, reason)
    }

    fn summary(&self) -> Value {
        self.state.summary()
    }
}

// ---------------------------------------------------------------------------------------
// Lines and the adapter protocol.

/// How a client reads a stream: line by line (feeding `push`), or whole.
enum Read {
    /// Hands each physical line to `each` until it returns false.
    Lines(fn(&mut dyn BufRead, &mut dyn FnMut(usize, &[u8]) -> bool) -> Result<(), (usize, String)>),
    /// Reads the whole stream itself (the client reports a summary only).
    Whole(fn(&[u8], &mut StreamReader)),
}

/// The conforming line reader: `read_until(b'\n')`, each line as soon as it has arrived.
fn read_until_lines(
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

struct Client {
    name: &'static str,
    read: Read,
    decode: Decode,
}

impl Client {
    /// One stream read by this client; its messages go to `out`.
    fn read(&self, input: &mut dyn BufRead, out: &mut dyn FnMut(Value)) -> StreamReader {
        let mut reader = StreamReader::new(self.decode);
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
    fn main(&self) {
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
                if let Some(number) = reader.state.rejected {
                    eprintln!("{}: line {}: {}", self.name, number, reader.why);
                    std::process::exit(1);
                }
            }
        }
    }
}

/// The line of a byte offset (1-based).
fn line_at(data: &[u8], offset: usize) -> usize {
    1 + data[..offset.min(data.len())].iter().filter(|&&b| b == b'\n').count()
}
