//! The whole input layer: bytes in, sections out, never a panic, and nothing
//! silently lost: every non-blank line of a text input is accounted for by a
//! section, an unrecognised range, a framing line or a tool message.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let options = fabricscope::ReadOptions::default();
    let _ = fabricscope::read_bytes(data, &options);
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(doc) = fabricscope::read_all(text, &options) {
            let lost = doc.unaccounted_lines(text);
            assert!(lost.is_empty(), "lines {lost:?} are accounted for nowhere");
        }
    }
});
