//! serde pitfall: the known event types and a fallback for the others as one
//! `#[serde(untagged)]` enum, `enum Line { Known(Event), Other(serde_json::Value) }`.
//! serde tries each variant in order and keeps the first that deserializes: a known type
//! whose body does not fit fails `Known`, and `Other` takes any JSON value, so the bad
//! body is read as an unrecognized event instead of an error (rule 4 turned into rule 3:
//! silent data loss). Otherwise the conforming serde reader.

use serde::Deserialize;
use serde_json::Value;
use stella_broken::{read_until_lines, Client, Known, Read};

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(untagged)]
enum Line {
    Known(Known),
    Other(Value),
}

fn decode(value: &Value) -> Option<Result<Known, String>> {
    match Line::deserialize(value) {
        Ok(Line::Known(event)) => Some(Ok(event)),
        Ok(Line::Other(_)) => None, // "not one of ours": counted as unrecognized
        Err(error) => Some(Err(error.to_string())),
    }
}

fn main() {
    Client { name: "untagged-reader-rust", read: Read::Lines(read_until_lines), decode }.main();
}
