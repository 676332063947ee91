//! libFuzzer target `args`: the body and its property are `mcp_fuzz::args`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz::args(data));
