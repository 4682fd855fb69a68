//! The whole engine: input layer, statistics and every rule over one paste.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(doc) = fabricscope::read_bytes(data, &fabricscope::ReadOptions::default()) {
        let _ = fabricscope::analyze(&[doc], &fabricscope::AnalyzeOptions::default());
    }
});
