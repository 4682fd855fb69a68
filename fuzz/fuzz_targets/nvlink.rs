//! The `nvidia-smi nvlink` parser on its own, and rendering what it read.
#![no_main]
libfuzzer_sys::fuzz_target!(|text: &str| {
    let parsed = fabricscope::parse::nvlink::parse(&fabricscope::parse::lines_of(text));
    let _ = fabricscope::parse::nvlink::render(&parsed.value);
});
