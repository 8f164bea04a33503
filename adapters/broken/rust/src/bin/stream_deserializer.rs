//! serde_json pitfall: the stream read with `Deserializer::from_slice(..).into_iter()`,
//! serde_json's StreamDeserializer, which its documentation offers for a stream of JSON
//! values "separated by whitespace". It reads values, not lines: two events on one line
//! (a lost newline) are read as two events, and one event written over several lines as
//! one, where rule 1 makes each such line a corrupt line. (It tells a torn last value by
//! `is_eof()` and names a line by where its value starts.) Otherwise the conforming
//! serde reader, fed the values; it reads the whole stream, so it reports a summary only.

#![allow(dead_code)] // the template's own report loop and reader are compiled in, unused

include!("../template.rs"); // the template's rules and protocol (builds.py copies it in)
include!("../reader.rs"); // the reader with hooks, and the adapter protocol around it

fn values(data: &[u8], reader: &mut StreamReader) {
    let mut stream = serde_json::Deserializer::from_slice(data).into_iter::<Value>();
    let mut offset = 0;
    while !reader.rejected() {
        let next = stream.next();
        let start = offset + data[offset..].iter().take_while(|b| b" \t\r\n".contains(b)).count();
        match next {
            None => return,
            Some(Ok(value)) => {
                offset = stream.byte_offset();
                reader.value(line_at(data, start), value);
            }
            Some(Err(error)) if error.is_eof() => return, // the torn last value: dropped
            Some(Err(error)) => {
                // the line the failing value starts on (serde_json's own line number is
                // where it stopped: past a raw newline in a string, the next line)
                reader.reject(line_at(data, start), format!("corrupt line: {}", error));
            }
        }
    }
}

fn main() {
    Client { name: "stream-reader-rust", read: Read::Whole(values), decode: decode_known }.main();
}
