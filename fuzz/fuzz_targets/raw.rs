//! libFuzzer target `raw`: the body and its property are `mcp_fuzz::raw`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz::raw(data));
