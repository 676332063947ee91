//! libFuzzer target `sse`: the body and its property are `mcp_fuzz::sse`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz::sse(data));
