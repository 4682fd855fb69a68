//! The ibv_devinfo parser on its own.
#![no_main]
libfuzzer_sys::fuzz_target!(|text: &str| {
    let _ = fabricscope::parse::ibv_devinfo::parse(&fabricscope::parse::lines_of(text));
});
