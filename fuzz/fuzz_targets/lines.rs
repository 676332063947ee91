//! libFuzzer target `lines`: the body and its property are `mcp_fuzz::lines`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz::lines(data));
