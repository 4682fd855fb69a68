//! One finding per line, for `jq`, log shippers and `grep`.

use super::Report;

/// Each finding as one line of JSON, worst first; empty when nothing was found.
#[must_use]
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for f in &report.findings {
        if let Ok(line) = serde_json::to_string(f) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::{analyze, AnalyzeOptions};

    #[test]
    fn one_parsable_finding_per_line() {
        let text = "CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\nCA 'mlx5_1'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Disabled\n\t\tLink layer: InfiniBand\n";
        let doc = crate::input::read_all(text, &crate::ReadOptions::default()).unwrap();
        let report = analyze(&[doc], &AnalyzeOptions::default());
        let out = render(&report);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2);
        for l in lines {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["rule"], "IB001");
        }
    }
}
