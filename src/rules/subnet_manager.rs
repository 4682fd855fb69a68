//! Subnet manager rules from `sminfo`: the SM a port reaches is the master,
//! and it is alive.

use super::context::Context;
use super::{Coverage, Evidence, Finding, Severity, Subject, Threshold};
use crate::declare_rule;
use crate::model::sminfo::{SmReply, SMINFO_MASTER};
use crate::parse::SectionData;
use std::collections::BTreeMap;

declare_rule! {
    /// ### What it detects
    /// `sminfo` answered by a subnet manager that is not the master (state
    /// 0 not active, 1 discovering, 2 standby), and the same SM's activity
    /// count unchanged between two readings.
    ///
    /// ### Why it matters
    /// A port's SM LID names the master SM, which configures and routes the
    /// subnet; `sminfo` asks it. An answer in another state means the port
    /// points at an SM that does not run the subnet now: a master that went
    /// standby or inactive (a handover, a stopped opensm), or one still
    /// discovering (starting, or a sweep that never finishes). New ports and
    /// changes are not configured until a master takes over. The activity
    /// count grows while the SM works; standby SMs poll it to tell that the
    /// master is alive, and a count that stands still is a hung SM.
    ///
    /// ### Evidence
    /// The `sminfo` reply line(s).
    ///
    /// ### What to do
    /// Check the SM processes (`systemctl status opensm`, UFM), their log
    /// (`/var/log/opensm.log`), and which SM is master (`sminfo` from
    /// another node, `saquery -s`); restart or fail over a hung master. For
    /// an unchanged activity count, read `sminfo` twice a minute apart.
    ///
    /// ### Thresholds and sources
    /// State 3 `SMINFO_MASTER` (IBA SMInfo; infiniband-diags `sminfo.c`).
    /// The activity count as a liveness signal: IBA SMInfo `ActCount`, which
    /// standby SMs poll; opensm sweeps every 10 s by default
    /// (`sweep_interval`).
    pub static IB007 = {
        id: "IB007",
        name: "subnet-manager-not-master",
        family: IbPort,
        severity: Warning,
        summary: "sminfo answered by an SM that is not the master, or whose activity count stands still",
        needs: "sminfo",
        check: check_subnet_manager,
    }
}

/// What an SM in each non-master state is doing.
fn state_meaning(state: u32) -> &'static str {
    match state {
        0 => "not active (stopped, or disabled by a master)",
        1 => "still discovering the fabric (starting, or a sweep that never finishes)",
        2 => "a standby SM: the master it stands by for may be gone, or the port's SM LID is stale",
        _ => "in a state outside the specification",
    }
}

fn check_subnet_manager(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let mut replies = Vec::new();
    for at in ctx.sections() {
        if let SectionData::Sminfo(s) = &at.section.data {
            replies.extend(s.replies.iter().map(|r| (at, r)));
        }
    }
    if !replies.iter().any(|(_, r)| r.state.is_some()) {
        return Coverage::Skipped("no sminfo reply with the SM's state in the input".to_owned());
    }
    let subject = |at: super::context::SectionRef<'_>, r: &SmReply| Subject {
        host: at.host().name().map(str::to_owned),
        lid: Some(r.lid),
        guid: r.guid,
        ..Subject::default()
    };
    let evidence = |at: super::context::SectionRef<'_>, r: &SmReply| {
        Evidence::new(
            format!(
                "sminfo: sm lid {}, activity count {}, state {} {}",
                r.lid,
                r.activity_count.map_or("?".to_owned(), |c| c.to_string()),
                r.state.map_or("?".to_owned(), |s| s.to_string()),
                r.state_name.as_deref().unwrap_or("")
            ),
            r.span,
            at.source(),
        )
    };
    let mut judged = 0;
    // Each SM's latest reply is judged for its state.
    let mut latest: BTreeMap<(super::context::HostKey<'_>, u32), usize> = BTreeMap::new();
    for (i, (at, r)) in replies.iter().enumerate() {
        if r.state.is_some() {
            latest.insert((at.host(), r.lid), i);
        }
    }
    for &i in latest.values() {
        let Some(&(at, r)) = replies.get(i) else {
            continue;
        };
        let Some(state) = r.state else { continue };
        judged += 1;
        if state == SMINFO_MASTER {
            continue;
        }
        out.push(
            IB007
                .finding(
                    subject(at, r),
                    format!(
                        "the SM at LID {} answers in state {state} ({}): it is {}, so no master runs this subnet from there",
                        r.lid,
                        r.state_name.as_deref().unwrap_or("name not printed"),
                        state_meaning(state)
                    ),
                )
                .evidence(evidence(at, r))
                .threshold(Threshold::new(
                    "state 3 SMINFO_MASTER",
                    "IBA SMInfo; infiniband-diags sminfo.c",
                ))
                .remediation("Check the SM processes and logs (systemctl status opensm, /var/log/opensm.log, UFM) and which SM is master (sminfo from another node); restart or fail over."),
        );
    }
    // Two readings of one SM (by GUID) with the same activity count.
    let mut by_sm: BTreeMap<(super::context::HostKey<'_>, u64), Vec<usize>> = BTreeMap::new();
    for (i, (at, r)) in replies.iter().enumerate() {
        if let (Some(guid), Some(_)) = (r.guid, r.activity_count) {
            by_sm.entry((at.host(), guid.0)).or_default().push(i);
        }
    }
    for readings in by_sm.values() {
        let (Some(&first), Some(&last)) = (readings.first(), readings.last()) else {
            continue;
        };
        let (Some(&(at0, r0)), Some(&(at1, r1))) = (replies.get(first), replies.get(last)) else {
            continue;
        };
        if first == last || r0.activity_count != r1.activity_count {
            continue;
        }
        out.push(
            IB007
                .finding(
                    subject(at1, r1),
                    format!(
                        "the SM at LID {}'s activity count stayed at {} over {} readings: if they were taken more than a sweep apart (10 s by default), the SM has stopped working",
                        r1.lid,
                        r1.activity_count.unwrap_or(0),
                        readings.len()
                    ),
                )
                .severity(Severity::Info)
                .evidence(evidence(at0, r0))
                .evidence(evidence(at1, r1))
                .threshold(Threshold::new(
                    "activity count grows between readings",
                    "IBA SMInfo ActCount (standby SMs poll it); opensm sweep_interval 10 s",
                ))
                .remediation("Read sminfo again a minute apart; if the count still stands, restart or fail over the SM and read its log."),
        );
    }
    Coverage::Checked(judged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::{findings_of, skipped_reason};

    fn reply(act: u64, state: u32, name: &str) -> String {
        format!("sminfo: sm lid 1 sm guid 0x98039b03009fcfd6, activity count {act} priority 15 state {state} {name}\n")
    }

    #[test]
    fn a_master_is_judged_and_passes() {
        let text = reply(100, 3, "SMINFO_MASTER");
        assert!(findings_of(&IB007, &text).is_empty());
        assert!(skipped_reason(&IB007, &text).is_none());
    }

    #[test]
    fn a_standby_or_discovering_sm_is_a_warning() {
        for (state, name, says) in [
            (2, "SMINFO_STANDBY", "standby"),
            (1, "SMINFO_DISCOVER", "discovering"),
            (0, "SMINFO_NOTACT", "not active"),
        ] {
            let f = findings_of(&IB007, &reply(7, state, name));
            assert_eq!(f.len(), 1, "{f:?}");
            assert_eq!(f[0].severity, Severity::Warning);
            assert!(f[0].message.contains(says), "{}", f[0].message);
        }
    }

    #[test]
    fn a_standing_activity_count_is_information_and_a_growing_one_nothing() {
        let same = reply(500, 3, "SMINFO_MASTER") + "\n" + &reply(500, 3, "SMINFO_MASTER");
        let f = findings_of(&IB007, &same);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Info);
        assert_eq!(f[0].evidence.len(), 2);
        let grows = reply(500, 3, "SMINFO_MASTER") + "\n" + &reply(530, 3, "SMINFO_MASTER");
        assert!(findings_of(&IB007, &grows).is_empty());
    }

    #[test]
    fn a_reply_cut_before_its_state_is_not_judged() {
        let text = "sminfo: sm lid 1 sm guid 0x98039b03009fcfd6, activity count 12\n";
        assert!(findings_of(&IB007, text).is_empty());
        assert!(skipped_reason(&IB007, text).is_some());
    }
}
