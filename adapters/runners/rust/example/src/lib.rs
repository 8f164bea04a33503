//! A client crate would be here; `tests/conformance.rs` grades its command.
