//! Statistics over whatever the input layer reads: rates, BER, outliers.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let options = fabricscope::ReadOptions::default();
    if let Ok(doc) = fabricscope::read_bytes(data, &options) {
        let stats = fabricscope::stats::StatsOptions::default().with_interval(2.0);
        let _ = fabricscope::stats::measure(&doc, &stats);
    }
});
