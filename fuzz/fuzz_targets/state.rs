//! libFuzzer target `state`: the body and its property are `mcp_fuzz::state`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz::state(data));
