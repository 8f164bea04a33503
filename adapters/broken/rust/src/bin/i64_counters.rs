//! serde pitfall: a step's counts decoded into `i64` struct fields, the integer type Rust
//! code reaches for when a count "could be negative in some API". The wire schema's
//! counts are u64: a valid count above 2^63 - 1 does not fit an `i64` (serde_json:
//! "invalid value: integer `18446744073709551615`, expected i64") and the valid stream is
//! rejected; and -1 fits it, so a count the schema refuses is taken (its sign is never
//! looked at). Otherwise the conforming serde reader.

#![allow(dead_code)] // the template's own report loop and reader are compiled in, unused

include!("../template.rs"); // the template's rules and protocol (builds.py copies it in)
include!("../reader.rs"); // the reader with hooks, and the adapter protocol around it

#[derive(Deserialize)]
struct Counts {
    step: i64,
    input_tokens: i64,
    output_tokens: i64,
    cached_input_tokens: i64,
    duration_ms: i64,
    retries: i64,
    tool_calls: i64,
}

fn decode(value: &Value) -> Option<Result<Event, String>> {
    if value.get("type").and_then(Value::as_str) != Some("step_usage") {
        return decode_known(value);
    }
    let counts = match Counts::deserialize(value) {
        Ok(counts) => counts,
        Err(error) => return Some(Err(error.to_string())),
    };
    // the counts are i64s now; the rest of the body is read as the template reads it
    let mut read = value.clone();
    for (name, count) in [
        ("step", counts.step),
        ("input_tokens", counts.input_tokens),
        ("output_tokens", counts.output_tokens),
        ("cached_input_tokens", counts.cached_input_tokens),
        ("duration_ms", counts.duration_ms),
        ("retries", counts.retries),
        ("tool_calls", counts.tool_calls),
    ] {
        read[name] = json!(count.unsigned_abs());
    }
    decode_known(&read)
}

fn main() {
    Client { name: "i64-reader-rust", read: Read::Lines(read_until_lines), decode }.main();
}
