//! `mlxlink --json`: the same records as the text form, as one JSON object.
//!
//! mstflint's `MlxlinkCmdPrint::toJsonFormat` puts each titled section
//! under `result.output.<title>`, one string per record; a record with an
//! array value (`Enabled Link Speed`, per-lane values) becomes an object of
//! `values` (and, for `Supported Info` and `FEC Info`, the `mask` the text
//! form prints before them). `result.status` holds the tool's `code` and
//! `message`. jsoncpp's styled writer prints one member per line, keys in
//! sorted order, three spaces per level:
//!
//! ```text
//! {
//!    "result" : {
//!       "output" : {
//!          "Operational Info" : {
//!             "FEC" : "No FEC",
//!             "Physical state" : "LinkUp",
//!             "State" : "Active",
//!             "Width" : "4x"
//!          },
//!          "Supported Info" : {
//!             "Enabled Link Speed" : {
//!                "mask" : "0x0000003f",
//!                "values" : [ "EDR", "FDR", "FDR10", "QDR", "DDR", "SDR" ]
//!             }
//!          }
//!       },
//!       "status" : { "code" : 0, "message" : "Success" }
//!    }
//! }
//! ```
//!
//! The object is read a line at a time, not handed to a JSON parser whole,
//! so that a paste cut inside it still gives the records before the cut
//! (each with its own line for evidence) and every line is accounted for.
//! A record's array comes back in the text form (`0x0000003f (EDR,FDR)`),
//! so the typed fields and the rules read both forms alike. Members
//! outside `result.output` (`status`, `configurations`, `warning`) are
//! kept as records of a section named by their path (`result.status`).

use crate::model::mlxlink::{MlxlinkField, MlxlinkSection};
use crate::parse::text::Unread;
use crate::parse::Line;
use crate::span::LineSpan;

/// Whether `lines` begin an `mlxlink --json` object: `{` alone and then
/// the `"result"` member, or the whole object on one line. Looks at two
/// lines only (detection runs at every line that opens with `{`: looking
/// for where the object closes would make a paste of unclosed objects
/// quadratic); lines after the object are the section's and reported.
pub(super) fn detect(lines: &[Line<'_>]) -> bool {
    let mut non_blank = lines.iter().filter(|l| !l.is_blank());
    let Some(first) = non_blank.next().map(|l| l.text().trim()) else {
        return false;
    };
    if first == "{" {
        non_blank
            .next()
            .is_some_and(|l| l.text().trim_start().starts_with("\"result\""))
    } else {
        first.starts_with('{') && first.contains("\"result\"") && first.contains("\"output\"")
    }
}

/// Reads the sections of an `mlxlink --json` object.
pub(super) fn sections(lines: &[Line<'_>], unread: &mut Unread) -> Vec<MlxlinkSection> {
    let mut reader = Reader::default();
    for line in lines.iter().filter(|l| !l.is_blank()) {
        let t = line.text().trim();
        if t.starts_with('{') && t.len() > 1 {
            // The whole object on one line (`jq -c`, a log shipper).
            match serde_json::from_str::<serde_json::Value>(t) {
                Ok(value) => reader.value(None, &value, line.number),
                Err(_) => unread.line(line, "not a whole JSON object of mlxlink --json"),
            }
            continue;
        }
        match member(t) {
            Some(m) if reader.takes(&m) => reader.member(m, line.number),
            Some(_) => unread.line(line, "outside mlxlink's JSON object"),
            None => unread.line(line, "not a line of mlxlink's JSON output"),
        }
    }
    reader.finish()
}

/// One line of jsoncpp's styled output, without its trailing comma.
#[derive(Debug, PartialEq)]
enum Member {
    /// `{` or `"key" : {`.
    Open(Option<String>),
    /// `[` or `"key" : [`.
    OpenArray(Option<String>),
    /// `}` or `]`.
    Close,
    /// `"key" : value` or, in an array, a bare value (as text).
    Value(Option<String>, String),
    /// `"key" : [ "a", "b" ]`: an array on one line.
    Array(Option<String>, Vec<String>),
}

/// The member `t` (trimmed) holds, if it is one.
fn member(t: &str) -> Option<Member> {
    let t = t.strip_suffix(',').unwrap_or(t).trim_end();
    match t {
        "{" => return Some(Member::Open(None)),
        "[" => return Some(Member::OpenArray(None)),
        "}" | "]" => return Some(Member::Close),
        _ => {}
    }
    let (key, value) = match string_token(t) {
        Some((key, rest)) if rest.trim_start().starts_with(':') => {
            (Some(key), rest.trim_start().get(1..)?.trim())
        }
        _ => (None, t),
    };
    match value {
        "{" => Some(Member::Open(key)),
        "[" => Some(Member::OpenArray(key)),
        _ if value.starts_with('[') => {
            let items: Vec<serde_json::Value> = serde_json::from_str(value).ok()?;
            Some(Member::Array(key, items.iter().map(text_of).collect()))
        }
        _ if value.starts_with('{') => None,
        _ => {
            let v: serde_json::Value = serde_json::from_str(value).ok()?;
            Some(Member::Value(key, text_of(&v)))
        }
    }
}

/// A JSON string at the start of `t`, unescaped, and the text after it.
fn string_token(t: &str) -> Option<(String, &str)> {
    if !t.starts_with('"') {
        return None;
    }
    let mut escaped = false;
    let end = t.char_indices().skip(1).find_map(|(i, c)| {
        if escaped {
            escaped = false;
            None
        } else if c == '\\' {
            escaped = true;
            None
        } else {
            (c == '"').then_some(i)
        }
    })?;
    let token = t.get(..=end)?;
    let key: String = serde_json::from_str(token).ok()?;
    Some((key, t.get(end + 1..)?))
}

/// A scalar as the text form prints it (strings without quotes).
fn text_of(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What is open: the members' keys from the root.
#[derive(Default)]
struct Reader {
    /// The open objects and arrays from the root: each one's key (`None`
    /// for the root and array items) and whether it is an array.
    path: Vec<(Option<String>, bool)>,
    /// Items of the multi-line array being read.
    items: Vec<String>,
    /// The record whose `mask`/`values` object is open.
    record: Option<PendingRecord>,
    sections: Vec<MlxlinkSection>,
}

/// A record with an array value, while its object is read.
struct PendingRecord {
    section: String,
    name: String,
    mask: Option<String>,
    values: Option<Vec<String>>,
    line: usize,
}

/// Depth of a section's object (`{`, `result`, `output`, the title).
const SECTION_DEPTH: usize = 4;

impl Reader {
    /// Whether `m` belongs to an object: one is open, or `m` opens one.
    fn takes(&self, m: &Member) -> bool {
        !self.path.is_empty() || *m == Member::Open(None)
    }

    fn member(&mut self, m: Member, line: usize) {
        match m {
            Member::Open(key) => {
                if let (Some(name), Some(section)) = (&key, self.section_title()) {
                    // `"Enabled Link Speed" : {` in a section: a record
                    // with an array value.
                    self.record = Some(PendingRecord {
                        section: section.to_owned(),
                        name: name.clone(),
                        mask: None,
                        values: None,
                        line,
                    });
                }
                self.path.push((key, false));
                if let Some(title) = self.section_title().map(str::to_owned) {
                    self.open_section(&title, line);
                }
            }
            Member::OpenArray(key) => {
                self.path.push((key, true));
                self.items.clear();
            }
            Member::Close => self.close(line),
            Member::Value(Some(key), value) => self.scalar(&key, value, line),
            Member::Value(None, value) => self.items.push(value),
            Member::Array(Some(key), items) => self.array(&key, items, line),
            Member::Array(None, items) => self.items.push(items.join(",")),
        }
    }

    /// Closes the innermost open object or array.
    fn close(&mut self, line: usize) {
        let depth = self.path.len();
        let Some((key, array)) = self.path.pop() else {
            return;
        };
        let items = std::mem::take(&mut self.items);
        match key {
            Some(key) if array => self.array(&key, items, line),
            Some(key) if depth == SECTION_DEPTH + 1 => {
                if let Some(r) = self.record.take_if(|r| r.name == key) {
                    self.push_record(r, line);
                }
            }
            _ => {}
        }
    }

    /// `"values" : [ … ]` and other arrays.
    fn array(&mut self, key: &str, items: Vec<String>, line: usize) {
        if let Some(r) = self.record.as_mut().filter(|_| key == "values") {
            r.values = Some(items);
            return;
        }
        let joined = items.join(",");
        self.scalar(key, joined, line);
    }

    fn scalar(&mut self, key: &str, value: String, line: usize) {
        if let Some(r) = self.record.as_mut().filter(|_| key == "mask") {
            r.mask = Some(value);
            return;
        }
        let section = match self.section_title() {
            Some(title) => title.to_owned(),
            None => self.path_name(),
        };
        self.field(&section, key, value, line);
    }

    /// A record with an array value, in the text form's words:
    /// `0x0000003f (EDR,FDR)` with a mask, `0,0,0,0` without.
    fn push_record(&mut self, r: PendingRecord, line: usize) {
        let separator = if r.section == "FEC Info" { ", " } else { "," };
        let values = r.values.unwrap_or_default().join(separator);
        let value = match r.mask {
            Some(mask) => format!("{mask} ({values})"),
            None => values,
        };
        self.field(&r.section, &r.name, value, r.line);
        if let Some(s) = self.sections.last_mut() {
            s.span = s.span.join(LineSpan::line(line));
        }
    }

    fn field(&mut self, section: &str, name: &str, value: String, line: usize) {
        if self.sections.last().is_none_or(|s| s.title != section) {
            self.open_section(section, line);
        }
        if let Some(s) = self.sections.last_mut() {
            s.fields.push(MlxlinkField {
                name: name.to_owned(),
                value,
                line,
            });
            s.span = s.span.join(LineSpan::line(line));
        }
    }

    fn open_section(&mut self, title: &str, line: usize) {
        self.sections.push(MlxlinkSection {
            title: title.to_owned(),
            fields: Vec::new(),
            span: LineSpan::line(line),
        });
    }

    /// The section's title when the innermost open object is a section,
    /// `result.output.<title>`.
    fn section_title(&self) -> Option<&str> {
        match self.path.as_slice() {
            [(None, _), (Some(r), false), (Some(o), false), (Some(title), false)]
                if r == "result" && o == "output" =>
            {
                Some(title)
            }
            _ => None,
        }
    }

    /// `result.status` for members outside `result.output`.
    fn path_name(&self) -> String {
        let keys: Vec<&str> = self.path.iter().filter_map(|(k, _)| k.as_deref()).collect();
        if keys.is_empty() {
            "mlxlink".to_owned()
        } else {
            keys.join(".")
        }
    }

    /// A value read whole (a one-line object): its members in order.
    fn value(&mut self, key: Option<String>, v: &serde_json::Value, line: usize) {
        match v {
            serde_json::Value::Object(map) => {
                self.member(Member::Open(key), line);
                for (k, v) in map {
                    self.value(Some(k.clone()), v, line);
                }
                self.close(line);
            }
            serde_json::Value::Array(items) => {
                let items = items.iter().map(text_of).collect();
                self.member(Member::Array(key, items), line);
            }
            other => self.member(Member::Value(key, text_of(other)), line),
        }
    }

    /// The sections read, with a record left open by a cut kept as far
    /// as it was read.
    fn finish(mut self) -> Vec<MlxlinkSection> {
        if let Some(r) = self.record.take() {
            let line = r.line;
            self.push_record(r, line);
        }
        self.sections
    }
}

#[cfg(test)]
mod tests {
    use crate::model::mlxlink::Mlxlink;
    use crate::parse::lines_of;

    /// A port as `mlxlink -d … -c -e` prints it in text.
    const TEXT: &str = "
Operational Info
----------------
State                              : Polling
Physical state                     : ETH_AN_FSM_ENABLE
Speed                              : IB-HDR
Width                              : 2x
FEC                                : Standard_RS-FEC - (544,514)

Supported Info
--------------
Enabled Link Speed                 : 0x000000ff (HDR,EDR,FDR)

Troubleshooting Info
--------------------
Status Opcode                      : 1025
Group Opcode                       : PHY FW
Recommendation                     : Check the cable

Physical Counters and BER Info
------------------------------
Effective Physical Errors          : 12
Effective Physical BER             : 3E-12
Raw Physical Errors Per Lane       : 120,98,143,77
Raw Physical BER                   : 2E-6
Link Down Counter                  : 7
";

    /// The same port as `mlxlink --json` prints it (keys sorted, arrays
    /// as objects of `values`, a mask for `Supported Info`).
    const JSON: &str = r#"{
   "result" : {
      "output" : {
         "Operational Info" : {
            "FEC" : "Standard_RS-FEC - (544,514)",
            "Physical state" : "ETH_AN_FSM_ENABLE",
            "Speed" : "IB-HDR",
            "State" : "Polling",
            "Width" : "2x"
         },
         "Physical Counters and BER Info" : {
            "Effective Physical BER" : "3E-12",
            "Effective Physical Errors" : "12",
            "Link Down Counter" : "7",
            "Raw Physical BER" : "2E-6",
            "Raw Physical Errors Per Lane" : {
               "values" : [ "120", "98", "143", "77" ]
            }
         },
         "Supported Info" : {
            "Enabled Link Speed" : {
               "mask" : "0x000000ff",
               "values" : [
                  "HDR",
                  "EDR",
                  "FDR"
               ]
            }
         },
         "Troubleshooting Info" : {
            "Group Opcode" : "PHY FW",
            "Recommendation" : "Check the cable",
            "Status Opcode" : "1025"
         }
      },
      "status" : {
         "code" : 0,
         "message" : "Success"
      }
   }
}
"#;

    /// Each section's records as sorted (title, name, value) triples: the
    /// JSON form sorts keys, the text form does not.
    fn records(m: &Mlxlink) -> Vec<(String, String, String)> {
        let mut all: Vec<_> = m
            .sections
            .iter()
            .filter(|s| !s.title.starts_with("result."))
            .flat_map(|s| {
                s.fields
                    .iter()
                    .map(|f| (s.title.clone(), f.name.clone(), f.value.clone()))
            })
            .collect();
        all.sort();
        all
    }

    fn typed(m: &Mlxlink) -> Mlxlink {
        Mlxlink {
            sections: Vec::new(),
            ..m.clone()
        }
    }

    #[test]
    fn the_json_form_gives_the_records_and_typed_fields_of_the_text_form() {
        let text = super::super::parse(&lines_of(TEXT));
        let json = super::super::parse(&lines_of(JSON));
        assert!(text.warnings.is_empty(), "{:?}", text.warnings);
        assert!(json.warnings.is_empty(), "{:?}", json.warnings);
        assert_eq!(records(&json.value), records(&text.value));
        assert_eq!(typed(&json.value), typed(&text.value));
        assert_eq!(json.value.state.as_deref(), Some("Polling"));
        assert_eq!(json.value.link_down_counter, Some(7));
        assert_eq!(json.value.raw_ber, Some(2e-6));
    }

    #[test]
    fn each_record_names_its_own_line_and_status_is_kept() {
        let m = super::super::parse(&lines_of(JSON)).value;
        let line_of = |name: &str| m.field(name).map(|f| f.line);
        // lines_of numbers from 1: `"State"` is the 8th line of JSON.
        assert_eq!(line_of("State"), Some(8));
        assert_eq!(line_of("Enabled Link Speed"), Some(21));
        let status = m.sections.iter().find(|s| s.title == "result.status");
        let code = status.and_then(|s| s.fields.iter().find(|f| f.name == "code"));
        assert_eq!(code.map(|f| f.value.as_str()), Some("0"));
    }

    #[test]
    fn the_whole_object_on_one_line_reads_the_same() {
        let value: serde_json::Value = serde_json::from_str(JSON).expect("the sample is JSON");
        let one_line = serde_json::to_string(&value).expect("serialises");
        let lines = lines_of(&one_line);
        assert!(super::detect(&lines));
        let json = super::super::parse(&lines);
        let text = super::super::parse(&lines_of(TEXT));
        assert!(json.warnings.is_empty(), "{:?}", json.warnings);
        assert_eq!(records(&json.value), records(&text.value));
        assert_eq!(typed(&json.value), typed(&text.value));
    }

    #[test]
    fn detection_wants_the_result_member_and_text_after_the_object_is_reported() {
        assert!(super::detect(&lines_of(JSON)));
        // Other JSON is not mlxlink's.
        assert!(!super::detect(&lines_of("{\n  \"sections\": []\n}\n")));
        assert!(!super::detect(&lines_of("{\"schema_version\": 3}\n")));
        let text = format!("{JSON}\"State\" : \"Down\",\nafter the object\n");
        let p = super::super::parse(&lines_of(&text));
        assert_eq!(p.value.state.as_deref(), Some("Polling"));
        let after = JSON.lines().count() + 1;
        for n in [after, after + 1] {
            assert!(
                p.warnings.iter().any(|w| w.span.contains(n)),
                "line {n}: {:?}",
                p.warnings
            );
        }
    }

    #[test]
    fn two_objects_are_two_snapshots() {
        let down = JSON.replace("\"Polling\"", "\"Disable\"");
        let doc =
            crate::input::read(&format!("{JSON}{down}"), &Default::default()).expect("recognised");
        let states: Vec<_> = doc
            .sections
            .iter()
            .map(|s| match &s.data {
                crate::parse::SectionData::Mlxlink(m) => m.state.clone(),
                _ => None,
            })
            .collect();
        assert_eq!(
            states,
            [Some("Polling".to_owned()), Some("Disable".to_owned())]
        );
    }

    #[test]
    fn a_cut_object_keeps_what_came_before_the_cut() {
        let lines: Vec<&str> = JSON.lines().collect();
        for n in 0..=lines.len() {
            let cut: String = lines.iter().take(n).map(|l| format!("{l}\n")).collect();
            let m = super::super::parse(&lines_of(&cut)).value;
            // `"State"` is line 8: read once the cut is past it.
            assert_eq!(m.state.is_some(), n >= 8, "cut after {n} lines");
        }
        for end in (0..=JSON.len()).filter(|&i| JSON.is_char_boundary(i)) {
            let _ = super::super::parse(&lines_of(&JSON[..end]));
        }
    }

    #[test]
    fn lines_that_are_not_members_are_reported_not_dropped() {
        let p = super::super::parse(&lines_of(
            "{\n   \"result\" : {\n      oops\n      \"output\" : {\n         \"Operational Info\" : {\n            \"Width\" : \"4x\"\n",
        ));
        assert_eq!(p.value.width, Some(4));
        assert!(
            p.warnings.iter().any(|w| w.span.contains(3)),
            "{:?}",
            p.warnings
        );
    }

    proptest::proptest! {
        /// Any sequence of members, brackets and noise, in any order: the
        /// reader never panics, and each record it keeps names a line of
        /// the input that holds the record's key.
        #[test]
        fn any_member_soup_is_read_without_panic(
            picks in proptest::collection::vec((0usize..14, "[ -~]{0,12}"), 0..40)
        ) {
            let vocabulary = [
                "{", "}", "},", "[", "]", "],", "\"result\" : {", "\"output\" : {",
                "\"Operational Info\" : {", "\"State\" : \"Active\",",
                "\"values\" : [ \"1\", \"2\" ]", "\"mask\" : \"0x3\",",
                "\"Width\" : {",
            ];
            let text: String = picks
                .iter()
                .map(|(i, noise)| match vocabulary.get(*i) {
                    Some(v) => format!("{v}\n"),
                    None => format!("{noise}\n"),
                })
                .collect();
            let lines = lines_of(&text);
            let _ = super::detect(&lines);
            let m = super::super::parse(&lines).value;
            // A soup not opening with `{` goes to the text reader, whose
            // records' names are bare.
            let json = text.lines().find(|l| !l.trim().is_empty()).is_some_and(|l| l.trim_start().starts_with('{'));
            for s in &m.sections {
                for f in &s.fields {
                    let line = lines.iter().find(|l| l.number == f.line);
                    let key = if json { format!("\"{}\"", f.name) } else { f.name.clone() };
                    proptest::prop_assert!(
                        line.is_some_and(|l| l.text().contains(&key)),
                        "{} at line {} of {:?}", f.name, f.line, text
                    );
                }
            }
        }
    }
}
