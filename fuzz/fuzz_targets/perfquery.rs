//! The perfquery parser on its own, and its renderer on what it read.
#![no_main]
libfuzzer_sys::fuzz_target!(|text: &str| {
    let parsed = fabricscope::parse::perfquery::parse(&fabricscope::parse::lines_of(text));
    let _ = fabricscope::parse::perfquery::render(&parsed.value);
});
