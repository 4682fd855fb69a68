//! The whole input layer: bytes in, sections out, never a panic.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = fabricscope::read_bytes(data, &fabricscope::ReadOptions::default());
});
