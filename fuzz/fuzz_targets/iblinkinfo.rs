//! The iblinkinfo parser on its own.
#![no_main]
libfuzzer_sys::fuzz_target!(|text: &str| {
    let _ = fabricscope::parse::iblinkinfo::parse(&fabricscope::parse::lines_of(text));
});
