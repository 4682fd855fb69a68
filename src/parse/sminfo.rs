//! `sminfo` (infiniband-diags `sminfo.c`): one line, the SubnetManagerInfo
//! of the SM at the port's SM LID (or the LID named):
//!
//! ```text
//! sminfo: sm lid 1 sm guid 0x98039b03009fcfd6, activity count 5209141 priority 15 state 3 SMINFO_MASTER
//! ```
//!
//! The state is 0 `SMINFO_NOTACT`, 1 `SMINFO_DISCOVER`, 2 `SMINFO_STANDBY`
//! or 3 `SMINFO_MASTER` (`???` beyond). When the query fails the tool
//! prints an `ibwarn`/`iberror` message instead, which the input layer keeps
//! as a tool message.

use crate::model::ib::Guid;
use crate::model::sminfo::{SmReply, Sminfo};
use crate::parse::text::{decimal_u32, decimal_u64, read_each_line, Unread};
use crate::parse::{Block, Line, Parsed, Spec};

pub(crate) const FORMAT: Spec<Sminfo> = Spec {
    command: |argv| argv.first().is_some_and(|c| c.ends_with("sminfo")),
    starts: |b| b == b's',
    detect,
    parse,
    summary,
    attach_command: None,
    // Its reply opens with `sminfo:`, which is no pdsh host prefix.
    labels: &["sminfo"],
};

/// The reply line's opening.
const OPENING: &str = "sminfo: sm lid ";

/// Reads one reply line; `None` when the line is not one.
fn reply(t: &str, line: &Line<'_>, unread: &mut Unread) -> Option<SmReply> {
    let rest = t.strip_prefix(OPENING)?;
    let mut words = rest
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty());
    let lid = decimal_u32(words.next()?).ok()?;
    let mut r = SmReply {
        lid,
        guid: None,
        activity_count: None,
        priority: None,
        state: None,
        state_name: None,
        span: line.span(),
    };
    let words: Vec<&str> = words.collect();
    let mut i = 0;
    while let Some(&word) = words.get(i) {
        let next = words.get(i + 1).copied();
        let mut number = |name: &str, slot: &mut Option<u32>| {
            if let Some(v) = next {
                match decimal_u32(v) {
                    Ok(v) => *slot = Some(v),
                    Err(e) => unread.number(line, name, e),
                }
            }
        };
        match (word, next) {
            ("sm", Some("guid")) => {
                r.guid = words.get(i + 2).and_then(|g| Guid::parse(g));
                i += 3;
                continue;
            }
            ("activity", Some("count")) => {
                if let Some(v) = words.get(i + 2) {
                    match decimal_u64(v) {
                        Ok(v) => r.activity_count = Some(v),
                        Err(e) => unread.number(line, "activity count", e),
                    }
                }
                i += 3;
                continue;
            }
            ("priority", _) => number("priority", &mut r.priority),
            ("state", _) => {
                number("state", &mut r.state);
                r.state_name = words.get(i + 2).map(|s| (*s).to_owned());
                i += 3;
                continue;
            }
            _ => {}
        }
        i += 2;
    }
    Some(r)
}

fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let first = lines.first()?;
    let t = first.text().trim();
    let rest = t.strip_prefix(OPENING)?;
    let lid = rest.split(|c: char| c.is_whitespace() || c == ',').next()?;
    decimal_u32(lid).ok()?;
    // A reply wrapped by a mail or chat client goes on with its `state …`
    // on the next line.
    let wrapped = !rest.contains(" state ")
        && lines
            .iter()
            .skip(1)
            .find(|l| !l.is_blank())
            .is_some_and(|l| continuation(l.text().trim()).is_some());
    // Each reply is a reading of its own: the same SM again is a second
    // snapshot (its activity count tells whether it sweeps).
    Some(Block::of_lines(
        format!("sm lid {lid} at line {}", first.number),
        1 + usize::from(wrapped),
    ))
}

/// `state 3 SMINFO_MASTER`: the end of a reply wrapped onto a line of its
/// own.
fn continuation(t: &str) -> Option<(u32, Option<&str>)> {
    let mut words = t.strip_prefix("state ")?.split_whitespace();
    let state = decimal_u32(words.next()?).ok()?;
    let name = words.next();
    words.next().is_none().then_some((state, name))
}

/// Reads `sminfo` output.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<Sminfo> {
    read_each_line(lines, |line, out: &mut Sminfo, unread: &mut Unread| {
        let t = line.text().trim();
        if let Some(r) = reply(t, line, unread) {
            out.replies.push(r);
            return;
        }
        match (out.replies.last_mut(), continuation(t)) {
            (Some(last), Some((state, name))) if last.state.is_none() => {
                last.state = Some(state);
                last.state_name = name.map(str::to_owned);
                last.span = last.span.join(line.span());
            }
            _ => unread.line(line, "not an `sminfo` reply line"),
        }
    })
}

/// `SM at LID 1: SMINFO_MASTER, priority 15` for people.
#[must_use]
pub fn summary(m: &Sminfo) -> String {
    match m.replies.last() {
        Some(r) => format!(
            "SM at LID {}: {}, priority {}",
            r.lid,
            r.state_name.as_deref().unwrap_or("state not printed"),
            r.priority.map_or("?".to_owned(), |p| p.to_string())
        ),
        None => "no reply".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;

    #[test]
    fn reads_the_reply() {
        let p = parse(&lines_of(
            "sminfo: sm lid 1 sm guid 0x98039b03009fcfd6, activity count 5209141 priority 15 state 3 SMINFO_MASTER\n",
        ));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let r = &p.value.replies[0];
        assert_eq!(r.lid, 1);
        assert_eq!(r.guid, Some(Guid(0x9803_9b03_009f_cfd6)));
        assert_eq!(r.activity_count, Some(5_209_141));
        assert_eq!(r.priority, Some(15));
        assert_eq!(r.state, Some(3));
        assert_eq!(r.state_name.as_deref(), Some("SMINFO_MASTER"));
    }

    #[test]
    fn a_cut_reply_keeps_what_it_printed() {
        let p = parse(&lines_of(
            "sminfo: sm lid 4 sm guid 0x0002c9030001e3f1, activity co\n",
        ));
        let r = &p.value.replies[0];
        assert_eq!((r.lid, r.guid), (4, Some(Guid(0x0002_c903_0001_e3f1))));
        assert_eq!((r.activity_count, r.state), (None, None));
    }

    #[test]
    fn a_reply_wrapped_before_its_state_is_joined() {
        let text = "sminfo: sm lid 1 sm guid 0x2c90200317a21, activity count 1207 priority 0\nstate 3 SMINFO_MASTER\n";
        let lines = lines_of(text);
        assert_eq!(detect(&lines).and_then(|b| b.lines), Some(2));
        let p = parse(&lines);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let r = &p.value.replies[0];
        assert_eq!(
            (r.state, r.state_name.as_deref()),
            (Some(3), Some("SMINFO_MASTER"))
        );
        assert_eq!(r.span.last_line, 2);
        // A whole reply is one line; a stray `state` line is not joined to it.
        let whole = "sminfo: sm lid 1 sm guid 0x1, activity count 3 priority 0 state 2 SMINFO_STANDBY\nstate 3 SMINFO_MASTER\n";
        assert_eq!(detect(&lines_of(whole)).and_then(|b| b.lines), Some(1));
    }

    #[test]
    fn detection_wants_the_reply_opening_and_a_lid() {
        assert!(detect(&lines_of(
            "sminfo: sm lid 1 sm guid 0x1, activity count 1 priority 0 state 3 SMINFO_MASTER\n"
        ))
        .is_some());
        assert!(detect(&lines_of("sminfo: iberror: failed: query\n")).is_none());
        assert!(detect(&lines_of("sminfo: sm lid x\n")).is_none());
    }

    proptest::proptest! {
        /// Any words after the opening: no panic, one reply.
        #[test]
        fn any_words_are_read_without_panic(words in proptest::collection::vec("[a-z]{1,9}|[0-9]{1,12}|0x[0-9a-f]{1,16}|,", 0..14)) {
            let text = format!("sminfo: sm lid 1 {}\n", words.join(" "));
            let p = parse(&lines_of(&text));
            proptest::prop_assert_eq!(p.value.replies.len(), 1);
        }
    }
}
