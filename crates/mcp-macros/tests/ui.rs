//! Compile-time behaviour of the macros: what compiles (`ui/pass`), and the message of each
//! misuse, pointing at the offending token (`ui/fail`, with the expected `.stderr`).
//!
//! After changing a message: `TRYBUILD=overwrite cargo test -p mcp-macros --test ui`, then
//! review the `.stderr` diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
