//! libFuzzer target `schema`: the body and its property are `mcp_fuzz::schema`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_fuzz::schema(data));
