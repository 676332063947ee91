//! libFuzzer target `template`: the body and its property are `mcp_fuzz::template`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz::template(data));
