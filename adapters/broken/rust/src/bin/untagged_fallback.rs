//! serde pitfall: the known event types and a fallback for the others as one
//! `#[serde(untagged)]` enum, `enum Line { Known(Event), Other(serde_json::Value) }`.
//! serde tries each variant in order and keeps the first that deserializes: a known type
//! whose body does not fit fails `Known`, and `Other` takes any JSON value, so the bad
//! body is read as an unrecognized event instead of an error (rule 4 turned into rule 3:
//! silent data loss). Otherwise the conforming serde reader.

#![allow(dead_code)] // the template's own report loop and reader are compiled in, unused

include!("../template.rs"); // the template's rules and protocol (builds.py copies it in)
include!("../reader.rs"); // the reader with hooks, and the adapter protocol around it

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(untagged)]
enum Line {
    Known(Event),
    Other(Value),
}

fn decode(value: &Value) -> Option<Result<Event, String>> {
    match Line::deserialize(value) {
        Ok(Line::Known(event)) => Some(Ok(event)),
        Ok(Line::Other(_)) => None, // "not one of ours": counted as unrecognized
        Err(error) => Some(Err(error.to_string())),
    }
}

fn main() {
    Client { name: "untagged-reader-rust", read: Read::Lines(read_until_lines), decode }.main();
}
