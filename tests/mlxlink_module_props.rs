//! Properties of `mlxlink -m`'s Module Info readings on generated outputs,
//! printed the way mlxlink prints them (`getStringFromVector`: three
//! decimals, none for a whole number; the module's range after a space in
//! `[low..high]`): every value and range is read back as printed, ML004
//! names a module exactly when one of its readings is outside its printed
//! range, and an output cut at any byte loses no line and names nothing the
//! whole output does not.

// Test helpers: a failing case should fail loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

use fabricscope::model::mlxlink::{ModuleQuantity, ModuleRange};
use fabricscope::{analyze, read_all, AnalyzeOptions, ReadOptions, SectionData};
use proptest::prelude::*;

/// A value as mlxlink prints a float of a lane (`%.3f`, `%.0f` when whole),
/// and the number that text stands for.
fn printed(thousandths: i32) -> (String, f64) {
    let text = if thousandths % 1000 == 0 {
        format!("{}", thousandths / 1000)
    } else {
        let sign = if thousandths < 0 { "-" } else { "" };
        let a = thousandths.unsigned_abs();
        format!("{sign}{}.{:03}", a / 1000, a % 1000)
    };
    let value = text.parse().unwrap();
    (text, value)
}

/// One output: an Active port and a Module Info of four lanes of Rx power
/// (thousandths of dBm) against a [-10.41..6] range, the rest in range.
fn output(rx: &[i32]) -> (String, Vec<f64>) {
    let (texts, values): (Vec<String>, Vec<f64>) = rx.iter().map(|t| printed(*t)).unzip();
    let text = format!(
        "$ mlxlink -d mlx5_1 -m\n\nOperational Info\n----------------\nState                              : Active\nPhysical state                     : LinkUp\n\nModule Info\n-----------\nTemperature [C]                    : 46 [-5..75]\nVoltage [mV]                       : 3290.5 [2970..3630]\nBias Current [mA]                  : 8.100,8.200,8.050,8.300 [2..15]\nRx Power Current [dBm]             : {} [-10.41..6]\nTx Power Current [dBm]             : 1.100,1.200,1.050,1.300 [-8.508..5]\nIdentifier                         : OSFP\n",
        texts.join(",")
    );
    (text, values)
}

fn ml004_count(text: &str) -> usize {
    let doc = read_all(text, &ReadOptions::default()).unwrap();
    analyze(&[doc], &AnalyzeOptions::default())
        .findings
        .iter()
        .filter(|f| f.rule == "ML004")
        .count()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn readings_are_read_as_printed_and_judged_against_their_range(
        rx in proptest::collection::vec(prop_oneof![-45_000i32..-9_000, -11_000i32..8_000], 4),
    ) {
        let (text, values) = output(&rx);
        let doc = fabricscope::read(&text, &ReadOptions::default()).unwrap();
        let SectionData::Mlxlink(m) = &doc.sections[0].data else {
            panic!("{:?}", doc.sections[0].kind);
        };
        let reading = m.module.iter().find(|r| r.quantity == ModuleQuantity::RxPower).unwrap();
        let read: Vec<f64> = reading.values.iter().map(|v| v.unwrap()).collect();
        prop_assert_eq!(&read, &values);
        prop_assert_eq!(reading.range, Some(ModuleRange { low: -10.41, high: 6.0 }));
        let outside = values.iter().any(|v| *v < -10.41 || *v > 6.0);
        prop_assert_eq!(ml004_count(&text), usize::from(outside), "{}", text);
    }

    #[test]
    fn a_cut_output_loses_no_line_and_names_nothing_new(
        rx in proptest::collection::vec(-45_000i32..8_000, 4),
        cut in any::<prop::sample::Index>(),
    ) {
        let (text, _) = output(&rx);
        let whole = ml004_count(&text);
        let part = &text[..cut.index(text.len())];
        let doc = read_all(part, &ReadOptions::default()).unwrap();
        prop_assert!(doc.unaccounted_lines(part).is_empty(), "{}", part);
        prop_assert!(ml004_count(part) <= whole, "{}", part);
    }
}
