//! Every format of the parser registry on its own: the first line names the
//! format (`ibstat`), the rest is its output (see `parse::fuzz_format`).
#![no_main]
libfuzzer_sys::fuzz_target!(|text: &str| fabricscope::parse::fuzz_format(text));
