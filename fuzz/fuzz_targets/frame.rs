//! libFuzzer target `frame`: the body and its property are `mcp_fuzz::frame`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz::frame(data));
