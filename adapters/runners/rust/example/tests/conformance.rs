//! The stella conformance checks in `cargo test`: one test per check.

fn main() {
    // The client graded: the repository's reference client (set STELLA_CONFORM_CLIENT to
    // grade another build with the same test).
    let client = ["python3", "../../../python/reference_client.py"];
    stella_conform_runner::main(stella_conform_runner::Options::new(client).examples(3));
}
