//! The report for people: a verdict line, then findings grouped by host,
//! worst host first and worst finding first, each with its evidence, the
//! limit it was judged against and what to do.

use super::Report;
use crate::rules::{Finding, Severity};
use std::fmt::Write as _;

/// How to print.
#[derive(Debug, Clone, Copy)]
pub struct TextOptions {
    /// ANSI colours (the CLI sets this on a terminal unless `NO_COLOR` is set).
    pub color: bool,
    /// Print evidence, thresholds and remediations, not just the messages.
    pub verbose: bool,
    /// Above this many `info` findings they are summed up per rule instead of
    /// listed (a fleet's congestion counters would drown the rest).
    pub max_info: usize,
}

impl Default for TextOptions {
    fn default() -> Self {
        Self {
            color: false,
            verbose: true,
            max_info: 50,
        }
    }
}

struct Paint(bool);

impl Paint {
    fn wrap(&self, code: &str, text: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn severity(&self, s: Severity) -> String {
        let code = match s {
            Severity::Critical => "1;35",
            Severity::Error => "1;31",
            Severity::Warning => "1;33",
            Severity::Info => "36",
        };
        self.wrap(code, &format!("{:<8}", s.name()))
    }

    fn dim(&self, text: &str) -> String {
        self.wrap("2", text)
    }

    fn bold(&self, text: &str) -> String {
        self.wrap("1", text)
    }
}

/// Renders the report as text.
#[must_use]
pub fn render(report: &Report, options: &TextOptions) -> String {
    let p = Paint(options.color);
    let mut s = String::new();
    let head = match report.status {
        Some(sev) if sev >= Severity::Warning => p.severity(sev).trim_end().to_owned(),
        _ => p.wrap("1;32", "healthy"),
    };
    let rest = report
        .verdict
        .split_once(": ")
        .map_or(report.verdict.as_str(), |(_, r)| r);
    let _ = writeln!(s, "{head}: {rest}");

    // Hosts, worst first, then by name; findings are already worst first.
    // Findings without a host name are grouped by the file they came from,
    // so two anonymous dumps are not shown as one machine.
    let hide_info = report.summary.info > options.max_info;
    let mut hosts: Vec<(Option<String>, Vec<&Finding>)> = Vec::new();
    for f in &report.findings {
        if hide_info && f.severity == Severity::Info {
            continue;
        }
        let host = f.subject.host.clone().or_else(|| {
            f.evidence
                .iter()
                .find_map(|e| e.source.as_ref())
                .map(|src| format!("(host not named: {src})"))
        });
        match hosts.iter_mut().find(|(h, _)| *h == host) {
            Some((_, list)) => list.push(f),
            None => hosts.push((host, vec![f])),
        }
    }
    hosts.sort_by(|(ha, fa), (hb, fb)| {
        let worst = |fs: &Vec<&Finding>| fs.iter().map(|f| f.severity).max();
        worst(fb).cmp(&worst(fa)).then_with(|| ha.cmp(hb))
    });
    for (host, findings) in &hosts {
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "{}",
            p.bold(&format!(
                "== {}",
                host.as_deref().unwrap_or("(host not named)")
            ))
        );
        for f in findings {
            // Messages usually start with their subject; do not say it twice.
            let subject = f.subject.describe();
            let line = if f.message.starts_with(&subject) {
                f.message.clone()
            } else {
                format!("{subject}: {}", f.message)
            };
            let _ = writeln!(s, "  {} {} {line}", p.severity(f.severity), f.rule);
            if options.verbose {
                for e in &f.evidence {
                    let place = match &e.source {
                        Some(src) => format!("{src} {}", e.span),
                        None => e.span.to_string(),
                    };
                    let _ = writeln!(
                        s,
                        "           {} {} {}",
                        p.dim("evidence:"),
                        e.text,
                        p.dim(&format!("({place})"))
                    );
                }
                if let Some(t) = &f.threshold {
                    let _ = writeln!(
                        s,
                        "           {} {} {}",
                        p.dim("limit:"),
                        t.value,
                        p.dim(&format!("({})", t.source))
                    );
                }
                if !f.remediation.is_empty() {
                    let _ = writeln!(s, "           {} {}", p.dim("fix:"), f.remediation);
                }
            }
        }
    }
    if hide_info {
        let mut per_rule: Vec<(&str, usize)> = Vec::new();
        for f in report
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Info)
        {
            match per_rule.iter_mut().find(|(r, _)| *r == f.rule) {
                Some((_, n)) => *n += 1,
                None => per_rule.push((f.rule, 1)),
            }
        }
        let list: Vec<String> = per_rule.iter().map(|(r, n)| format!("{r} ×{n}")).collect();
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "{}",
            p.dim(&format!(
                "{} info findings not listed: {} (--format json lists them)",
                report.summary.info,
                list.join(", ")
            ))
        );
    }
    if !report.skipped_inputs.is_empty() {
        let _ = writeln!(s);
        let _ = writeln!(s, "{}", p.bold("== inputs skipped"));
        const SHOWN: usize = 10;
        for i in report.skipped_inputs.iter().take(SHOWN) {
            let _ = writeln!(s, "  {}: {}", i.input, i.reason);
        }
        if report.skipped_inputs.len() > SHOWN {
            let _ = writeln!(
                s,
                "  … and {} more (use --format json for the full list)",
                report.skipped_inputs.len() - SHOWN
            );
        }
    }
    if !report.skipped_rules.is_empty() {
        let _ = writeln!(s);
        let ids: Vec<&str> = report.skipped_rules.iter().map(|r| r.rule).collect();
        let _ = writeln!(
            s,
            "{}",
            p.dim(&format!(
                "not checked for lack of data: {} (use --format json for the reasons)",
                ids.join(" ")
            ))
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::{analyze, AnalyzeOptions};

    fn report(text: &str) -> Report {
        let doc = crate::input::read_all(text, &crate::ReadOptions::default()).unwrap();
        analyze(&[doc], &AnalyzeOptions::default())
    }

    #[test]
    fn verdict_first_then_hosts_worst_first() {
        let text = "n1: CA 'mlx5_0'\nn1: \tCA type: MT4129\nn1: \tPort 1:\nn1: \t\tState: Active\nn1: \t\tPhysical state: LinkUp\nn1: \t\tBase lid: 0\nn1: \t\tSM lid: 1\nn1: \t\tLink layer: InfiniBand\nn2: CA 'mlx5_0'\nn2: \tCA type: MT4129\nn2: \tPort 1:\nn2: \t\tState: Down\nn2: \t\tPhysical state: Polling\nn2: \t\tLink layer: InfiniBand\n";
        let out = render(
            &report(text),
            &TextOptions {
                color: false,
                ..TextOptions::default()
            },
        );
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("critical: "), "{out}");
        let n2 = out.find("== n2").unwrap();
        let n1 = out.find("== n1").unwrap();
        assert!(n2 < n1, "{out}");
        assert!(
            out.contains("evidence: ibstat: State: Down, Physical state: Polling (lines 11–14)"),
            "{out}"
        );
        assert!(!out.contains('\x1b'));
    }

    #[test]
    fn colour_only_when_asked() {
        let text = "CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\n";
        let out = render(
            &report(text),
            &TextOptions {
                color: true,
                verbose: false,
                ..TextOptions::default()
            },
        );
        assert!(out.contains("\x1b[1;35m"));
    }

    #[test]
    fn many_info_findings_are_summed_up_per_rule() {
        // Six ports alike but one, whose four counters stand out while
        // staying under their limits: four FL004 findings at info.
        let mut text = String::new();
        for lid in 1..=6 {
            let n = if lid == 6 { 9 } else { 0 };
            text.push_str(&format!(
                "# Port counters: Lid {lid} port 1 (CapMask: 0x5A00)\nPortSelect:......................1\nSymbolErrorCounter:..............{n}\nLinkErrorRecoveryCounter:........{n}\nLinkDownedCounter:...............{n}\nPortRcvErrors:...................{n}\n"
            ));
        }
        let r = report(&text);
        assert_eq!(r.summary.info, 4, "{r:#?}");
        let listed = render(&r, &TextOptions::default());
        assert_eq!(listed.matches("FL004").count(), 4, "{listed}");
        let summed = render(
            &r,
            &TextOptions {
                max_info: 3,
                ..TextOptions::default()
            },
        );
        assert!(
            summed.contains("4 info findings not listed: FL004 ×4"),
            "{summed}"
        );
        assert!(!summed.contains("PortRcvErrors 9"), "{summed}");
    }
}
