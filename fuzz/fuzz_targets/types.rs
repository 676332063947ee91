//! libFuzzer target `types`: the body and its property are `mcp_fuzz::types`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz::types(data));
