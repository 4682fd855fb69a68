//! The ibstatus parser on its own.
#![no_main]
libfuzzer_sys::fuzz_target!(|text: &str| {
    let _ = fabricscope::parse::ibstatus::parse(&fabricscope::parse::lines_of(text));
});
