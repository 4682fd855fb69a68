//! The GPU topology and telemetry parsers on their own.
#![no_main]
libfuzzer_sys::fuzz_target!(|text: &str| {
    fabricscope::parse::run_gpu_parsers(&fabricscope::parse::lines_of(text));
});
