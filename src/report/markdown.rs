//! The fleet summary and incidents as Markdown tables, for tickets and wikis.

use super::hosts::{self, HostList};
use super::Report;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Escapes what would break a table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// Verdict, per-rule counts, per-host table and one row per incident.
///
/// ```
/// use fabricscope::report::markdown;
/// let paste = "$ ibstat\nCA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\n";
/// let doc = fabricscope::read(paste, &Default::default()).unwrap();
/// let report = fabricscope::analyze(&[doc], &Default::default());
/// let ticket = markdown::render(&report);
/// assert!(ticket.contains("IB001"));
/// assert!(ticket.lines().any(|l| l.starts_with('|')));
/// ```
#[must_use]
pub fn render(report: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "**{}**\n", cell(&report.verdict));
    if report.incidents.is_empty() {
        return s;
    }
    let mut per_rule: BTreeMap<&str, (usize, HostList)> = BTreeMap::new();
    for f in &report.findings {
        let e = per_rule.entry(f.rule).or_default();
        e.0 += 1;
        if let Some(h) = f.subject.host.as_deref() {
            e.1.add(h);
        }
    }
    let _ = writeln!(s, "| rule | findings | hosts |\n|---|---:|---|");
    for (rule, (n, hosts)) in &per_rule {
        let (list, _) = hosts.join(Some(hosts::NAMED));
        let _ = writeln!(s, "| {rule} | {n} | {} |", cell(&list));
    }
    let mut hosts: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (n, i) in report.incidents.iter().enumerate() {
        hosts
            .entry(i.subject.host.as_deref().unwrap_or("(not named)"))
            .or_default()
            .push(n);
    }
    let mut rows: Vec<(&str, &Vec<usize>)> = hosts.iter().map(|(h, l)| (*h, l)).collect();
    rows.sort_by_key(|(h, l)| {
        let worst = l
            .iter()
            .filter_map(|&n| report.incidents.get(n))
            .map(|i| i.severity)
            .max();
        (std::cmp::Reverse(worst), *h)
    });
    let healthy = report
        .host_names
        .iter()
        .filter(|h| !hosts.contains_key(h.as_str()))
        .count();
    let _ = writeln!(
        s,
        "\n| host | worst | incidents | headline |\n|---|---|---:|---|"
    );
    for (host, list) in rows {
        if let Some(first) = list.first().and_then(|&n| report.incidents.get(n)) {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} {} |",
                cell(host),
                first.severity,
                list.len(),
                first.rule,
                cell(&first.title)
            );
        }
    }
    if healthy > 0 {
        let _ = writeln!(s, "\n{healthy} healthy host(s).");
    }
    let _ = writeln!(
        s,
        "\n| severity | rule | host | subject | incident | probable cause | supporting |\n|---|---|---|---|---|---|---|"
    );
    for i in &report.incidents {
        let supporting: Vec<&str> = i
            .members(&report.findings)
            .skip(1)
            .map(|f| f.rule)
            .collect();
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            i.severity,
            i.rule,
            cell(i.subject.host.as_deref().unwrap_or("")),
            cell(&i.subject.describe()),
            cell(&i.title),
            cell(i.probable_cause.as_deref().unwrap_or("")),
            supporting.join(" ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipes_do_not_break_cells() {
        assert_eq!(cell("a|b\nc"), "a\\|b c");
        let text = "CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\n";
        let doc = crate::input::read_all(text, &crate::ReadOptions::default()).unwrap();
        let out = render(&crate::analyze(&[doc], &crate::AnalyzeOptions::default()));
        assert!(out.contains("| IB001 | 1 |"), "{out}");
        assert!(out.contains("| critical | IB001 |"), "{out}");
    }

    #[test]
    fn a_rule_on_many_hosts_names_eight() {
        let text = crate::report::hosts::ports_down_on(10);
        let doc = crate::input::read_all(&text, &crate::ReadOptions::default()).unwrap();
        let out = render(&crate::analyze(&[doc], &crate::AnalyzeOptions::default()));
        let row = out
            .lines()
            .find(|l| l.starts_with("| IB") && l.contains("node00"))
            .unwrap_or_else(|| panic!("{out}"));
        assert_eq!(row.matches("node").count(), 8, "{row}");
        assert!(row.contains("… and 2 more"), "{row}");
    }
}
