//! One row per incident, for spreadsheets and tickets (RFC 4180 quoting).
//!
//! Columns: `host, severity, rule, subject, title, probable_cause,
//! supporting, fingerprint`; `supporting` lists the other findings' rule ids.

use super::Report;

/// Quotes a field when it holds a comma, quote or line break.
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// The incidents as CSV with a header row.
///
/// ```
/// use fabricscope::report::csv;
/// let paste = "$ ibstat\nCA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\n";
/// let doc = fabricscope::read(paste, &Default::default()).unwrap();
/// let report = fabricscope::analyze(&[doc], &Default::default());
/// let table = csv::render(&report);
/// let mut rows = table.lines();
/// assert!(rows.next().unwrap().starts_with("host,severity,rule"));
/// assert!(rows.next().unwrap().contains("IB001"));
/// ```
#[must_use]
pub fn render(report: &Report) -> String {
    let mut out =
        String::from("host,severity,rule,subject,title,probable_cause,supporting,fingerprint\r\n");
    for i in &report.incidents {
        let supporting: Vec<&str> = i
            .members(&report.findings)
            .skip(1)
            .map(|f| f.rule)
            .collect();
        let row = [
            i.subject.host.clone().unwrap_or_default(),
            i.severity.name().to_owned(),
            i.rule.clone(),
            i.subject.describe(),
            i.title.clone(),
            i.probable_cause.clone().unwrap_or_default(),
            supporting.join(" "),
            i.fingerprint.clone(),
        ];
        let cells: Vec<String> = row.iter().map(|c| field(c)).collect();
        out.push_str(&cells.join(","));
        out.push_str("\r\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_with_commas_and_quotes_are_quoted() {
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("plain"), "plain");
    }

    #[test]
    fn one_row_per_incident() {
        let text = "CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\n";
        let doc = crate::input::read_all(text, &crate::ReadOptions::default()).unwrap();
        let report = crate::analyze(&[doc], &crate::AnalyzeOptions::default());
        let out = render(&report);
        let rows: Vec<&str> = out.lines().collect();
        assert_eq!(rows.len(), 2, "{out}");
        assert!(
            rows[1].starts_with(",critical,IB001,mlx5_0 port 1,"),
            "{out}"
        );
    }
}
