//! Rust pitfall: the stream read with `BufRead::lines()`, the standard library's line
//! iterator. `lines()` yields `io::Result<String>`: a line that is not UTF-8 is an
//! `Err(InvalidData)`, and `let line = line?` ends the whole stream there. A process
//! killed in the middle of a multi-byte character leaves exactly such a torn last line,
//! so a crashed run's stream, valid up to its last line, is reported as an error (stella's
//! own reader has this bug). Otherwise the conforming serde reader.

#![allow(dead_code)] // the template's own report loop and reader are compiled in, unused

include!("../template.rs"); // the template's rules and protocol (builds.py copies it in)
include!("../reader.rs"); // the reader with hooks, and the adapter protocol around it

fn lines(
    input: &mut dyn BufRead,
    each: &mut dyn FnMut(usize, &[u8]) -> bool,
) -> Result<(), (usize, String)> {
    for (index, line) in input.lines().enumerate() {
        let line = line.map_err(|error| (index + 1, error.to_string()))?;
        if !each(index + 1, line.as_bytes()) {
            break;
        }
    }
    Ok(())
}

fn main() {
    Client { name: "lines-reader-rust", read: Read::Lines(lines), decode: decode_known }.main();
}
