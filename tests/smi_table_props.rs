//! Properties of the `nvidia-smi` summary table parser: a generated table
//! reads back; a table cut anywhere (after a line, or every row at a
//! column) never yields a value it does not show whole, and a block that
//! lost rows or cells is marked partial; no text makes it panic.

// Test helpers fail loudly on bad fixtures, like the tests they serve.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

use fabricscope::parse::lines_of;
use fabricscope::parse::smi_table::parse;
use proptest::prelude::*;

/// What a generated GPU prints.
#[derive(Debug, Clone)]
struct Gpu {
    name: &'static str,
    bus: String,
    /// `None` prints `N/A`.
    ecc: Option<u64>,
    /// Fan, temperature, power and utilisation print `ERR!`.
    err: bool,
    temp: u32,
}

fn gpu() -> impl Strategy<Value = Gpu> {
    (
        prop::sample::select(vec!["NVIDIA H200", "NVIDIA A100-SXM4-80GB", "Tesla T4"]),
        0u8..=255,
        prop::option::of(0u64..5000),
        prop::bool::weighted(0.3),
        20u32..95,
    )
        .prop_map(|(name, bus, ecc, err, temp)| Gpu {
            name,
            bus: format!("00000000:{bus:02X}:00.0"),
            ecc,
            err,
            temp,
        })
}

/// The name as the table prints it: cut to `...` past its column's width.
fn shown(name: &str, new: bool) -> String {
    let room = if new { 30 } else { 18 };
    if name.len() <= room {
        name.to_owned()
    } else {
        format!("{}...", &name[..room - 3])
    }
}

/// The table as drivers 550+ (`new`) or ≤ 535 print it.
fn render(gpus: &[Gpu], new: bool) -> String {
    let w: &[usize] = if new { &[41, 24, 22] } else { &[31, 22, 22] };
    let sep = |c: char, ends: char| {
        let cells: Vec<String> = w.iter().map(|n| c.to_string().repeat(*n)).collect();
        format!(
            "{ends}{}{}",
            cells.join("+"),
            if ends == '|' && c == '=' { '|' } else { '+' }
        )
    };
    let total = w.iter().sum::<usize>() + 2;
    let mut s = format!("+{}+\n", "-".repeat(total));
    let banner = "| NVIDIA-SMI 580.95.05      Driver Version: 580.95.05      CUDA Version: 13.0";
    s += &format!("{banner:<width$}|\n", width = total + 1);
    s += &sep('-', if new { '+' } else { '|' });
    s += "\n";
    if new {
        s += "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n";
        s += "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n";
        s += "|                                         |                        |               MIG M. |\n";
    } else {
        s += "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n";
        s += "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n";
        s += "|                               |                      |               MIG M. |\n";
    }
    s += &sep('=', '|');
    s += "\n";
    for (i, g) in gpus.iter().enumerate() {
        let ecc = g.ecc.map_or_else(|| "N/A".to_owned(), |e| e.to_string());
        let (fan, temp, pw, cap, util) = if g.err {
            ("ERR!", "ERR!".to_owned(), "ERR!", "ERR!", "ERR!")
        } else {
            ("N/A", format!("{}C", g.temp), "77W", "700W", "0%")
        };
        let c1 = format!("{i:>4}  {:<w$} On  ", shown(g.name, new), w = w[0] - 11);
        let c2 = format!(" {} Off ", g.bus);
        s += &format!(
            "|{c1:<a$}|{c2:>b$}|{ecc:>c$} |\n",
            a = w[0],
            b = w[1],
            c = w[2] - 1
        );
        let c1 = format!(" {fan:<4}  {temp:>4}   P0   {pw:>5} / {cap:>5} ");
        let c2 = "0MiB / 143771MiB ";
        let c3 = format!("{util:>8}      Default ");
        s += &format!(
            "|{c1:>a$}|{c2:>b$}|{c3:>c$}|\n",
            a = w[0],
            b = w[1],
            c = w[2]
        );
        s += &format!(
            "|{}|{}|{:>c$} |\n",
            " ".repeat(w[0]),
            " ".repeat(w[1]),
            "Disabled",
            c = w[2] - 1
        );
        s += &sep('-', '+');
        s += "\n";
    }
    s
}

proptest! {
    #[test]
    fn a_rendered_table_reads_back(gpus in prop::collection::vec(gpu(), 1..9), new in any::<bool>()) {
        let text = render(&gpus, new);
        let p = parse(&lines_of(&text));
        prop_assert!(p.warnings.is_empty(), "{:?}\n{text}", p.warnings);
        prop_assert_eq!(p.value.gpus.len(), gpus.len());
        for (i, (read, g)) in p.value.gpus.iter().zip(&gpus).enumerate() {
            prop_assert_eq!(read.index as usize, i);
            prop_assert_eq!(read.name.clone(), shown(g.name, new));
            prop_assert_eq!(read.bus_id.as_deref(), Some(g.bus.as_str()));
            prop_assert_eq!(read.volatile_uncorrected_ecc_count, g.ecc);
            prop_assert_eq!(read.has_err(), g.err, "{:?}", read.err_fields);
            prop_assert_eq!(read.temperature_c, (!g.err).then_some(g.temp));
            prop_assert!(read.partial.is_none());
        }
    }

    /// Cut after any line: every block that lost a row is partial, and
    /// every value read is the one printed.
    #[test]
    fn a_table_cut_after_any_line_marks_what_it_lost(
        gpus in prop::collection::vec(gpu(), 1..5),
        new in any::<bool>(),
        keep in 0usize..40,
    ) {
        let text = render(&gpus, new);
        let cut: String = text.lines().take(keep).map(|l| format!("{l}\n")).collect();
        let p = parse(&lines_of(&cut));
        prop_assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        for read in &p.value.gpus {
            let g = &gpus[read.index as usize];
            let rows_kept = keep.saturating_sub(7 + 4 * read.index as usize);
            prop_assert_eq!(read.partial.is_some(), rows_kept < 3, "{} rows kept", rows_kept);
            if let Some(e) = read.volatile_uncorrected_ecc_count {
                prop_assert_eq!(Some(e), g.ecc);
            }
        }
    }

    /// Every row cut at one column: a count is read only where its cell
    /// is whole, and a block whose rows lost their end is partial.
    #[test]
    fn a_table_cut_at_any_column_reads_only_whole_cells(
        gpus in prop::collection::vec(gpu(), 1..5),
        new in any::<bool>(),
        width in 1usize..95,
    ) {
        let text = render(&gpus, new);
        let cut: String = text.lines().map(|l| format!("{}\n", l.get(..width).unwrap_or(l))).collect();
        let p = parse(&lines_of(&cut));
        let full = text.lines().map(str::len).max().unwrap();
        for read in &p.value.gpus {
            let g = &gpus[read.index as usize];
            prop_assert_eq!(read.partial.is_some(), width < full, "width {}", width);
            if let Some(e) = read.volatile_uncorrected_ecc_count {
                prop_assert_eq!(Some(e), g.ecc);
            }
            if read.bus_id.is_some() {
                prop_assert_eq!(read.bus_id.as_deref(), Some(g.bus.as_str()));
            }
            if let Some(t) = read.temperature_c {
                prop_assert_eq!(Some(t), (!g.err).then_some(g.temp));
            }
        }
    }

    #[test]
    fn never_panics(text in "[|+= \\-0-9A-Za-z:/%!.\n]{0,400}") {
        let _ = parse(&lines_of(&text));
    }
}
