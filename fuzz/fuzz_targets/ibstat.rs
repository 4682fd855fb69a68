//! The ibstat parser on its own.
#![no_main]
libfuzzer_sys::fuzz_target!(|text: &str| {
    let _ = fabricscope::parse::ibstat::parse(&fabricscope::parse::lines_of(text));
});
