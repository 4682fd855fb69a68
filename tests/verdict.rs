//! The verdict line says how much was judged: `not enough to judge` when
//! only the input rules (`IN0xx`) had data, and a healthy verdict over a
//! paste that looks cut, or holds lines that could not be read, says that
//! only what was read was judged.

#![allow(clippy::panic, clippy::expect_used)]

use fabricscope::report::verdict::VerdictLevel;
use fabricscope::{analyze, read, AnalyzeOptions, ReadOptions};
use std::path::Path;

fn verdict_of(text: &str) -> fabricscope::report::verdict::Verdict {
    let doc = read(text, &ReadOptions::default()).expect("a supported tool's output");
    analyze(&[doc], &AnalyzeOptions::default()).verdict
}

fn wild(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/wild")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_fragment_only_the_input_rules_could_read_is_not_healthy() {
    // NIC rows of a topo matrix without its header or any GPU row: IN001
    // says it looks cut, and no rule had anything to judge.
    let v = verdict_of(&wild("sglang36018-topo-nicrows-noheader.txt"));
    assert_eq!(v.level, VerdictLevel::NotEnoughToJudge, "{v}");
    assert!(v.detail.contains("looks cut"), "{v}");
}

#[test]
fn a_healthy_verdict_over_a_cut_paste_says_what_was_judged() {
    let v = verdict_of(&wild("deepep303-ibstat-unfenced-cut.txt"));
    assert_eq!(v.level, VerdictLevel::Healthy, "{v}");
    assert!(v.detail.contains("in what the paste holds"), "{v}");
    assert!(v.detail.contains("IN001"), "{v}");
}

#[test]
fn a_whole_healthy_paste_says_nothing_of_cuts() {
    let ibstat = "CA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tFirmware version: 28.39.1002\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n\t\tBase lid: 12\n\t\tLMC: 0\n\t\tSM lid: 1\n\t\tCapability mask: 0xa651e848\n\t\tPort GUID: 0x1070fd0300a1b2c3\n\t\tLink layer: InfiniBand\n";
    let v = verdict_of(ibstat);
    assert_eq!(v.level, VerdictLevel::Healthy, "{v}");
    assert!(!v.detail.contains("cut"), "{v}");
}

#[test]
fn ports_no_rule_judges_leave_nothing_judged() {
    // RoCE ports only, all Active: their states are judged (IB001 asks
    // that a host have an RDMA port up), and nothing is wrong.
    let v = verdict_of(&wild("deepep150-ibstatus-bond-tmux.txt"));
    assert_eq!(v.level, VerdictLevel::Healthy, "{v}");
    // Interface carriers only (`ibdev2netdev` without -v): not port states.
    let v = verdict_of(&wild("stepmesh15-ibdev2netdev-ibs-bond.txt"));
    assert_eq!(v.level, VerdictLevel::NotEnoughToJudge, "{v}");
}

#[test]
fn a_healthy_verdict_over_unread_lines_says_they_were_not_judged() {
    // A whole port block with one line no ibstat prints in it: the port is
    // judged healthy, the line is listed (IN002), and the verdict says so.
    let ibstat = "CA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tFirmware version: 28.39.1002\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n\t\tBase lid: 12\n\t\tLMC: 0\n\t\tSM lid: 1\n\t\tthis line is not ibstat's\n\t\tCapability mask: 0xa651e848\n\t\tPort GUID: 0x1070fd0300a1b2c3\n\t\tLink layer: InfiniBand\n";
    let v = verdict_of(ibstat);
    assert_eq!(v.level, VerdictLevel::Healthy, "{v}");
    assert!(v.detail.contains("could not be read"), "{v}");
    assert!(v.detail.contains("IN002"), "{v}");
    assert!(!v.detail.contains("cut"), "{v}");
}

#[test]
fn hosts_nothing_judged_are_not_called_healthy_in_the_summary() {
    // Two hosts' interface carriers only (`ibdev2netdev` without -v): no
    // rule had data, so the fleet summary must not count them healthy.
    let text = "[root@gn01 ~]# ibdev2netdev\nmlx5_0 port 1 ==> ib0 (Up)\n\
                [root@gn02 ~]# ibdev2netdev\nmlx5_0 port 1 ==> ib0 (Down)\n";
    let doc = read(text, &ReadOptions::default()).expect("ibdev2netdev output");
    let report = analyze(&[doc], &AnalyzeOptions::default());
    assert_eq!(report.verdict.level, VerdictLevel::NotEnoughToJudge);
    let shown = fabricscope::report::text::render(&report, &Default::default());
    assert!(shown.contains("2 not judged"), "{shown}");
    assert!(!shown.contains("healthy"), "{shown}");
}

/// ibdiagnet's console pasted from `Fabric Summary` down (the shape of
/// ibdiagnet2 runs in public notes): the `Summary` table counts warnings
/// and errors whose `-E-`/`-W-` lines are in `ibdiagnet2.log`, not in the
/// paste. Before, the verdict was "healthy: … but it looks cut": a fabric
/// ibdiagnet found 3 errors in was called healthy. Now it says the fabric
/// was not judged, and IN001 (still `info`) says the problems are counted
/// but not shown, not that the paste is cut. A summary that counts
/// nothing is as healthy as before.
#[test]
fn an_ibdiagnet_summary_that_counts_problems_it_does_not_show_is_not_healthy() {
    let summary = |discovery: (u32, u32), links: (u32, u32)| {
        format!(
            "$ ibdiagnet\n---------------------------------------------\nFabric Summary\n\n\
             Total Nodes             : 24\nIB Switches             : 4\n\
             IB Channel Adapters     : 20\nIB Aggregation Nodes    : 0\n\
             IB Routers              : 0\n\n\
             ---------------------------------------------\nSummary\n\
             -I- Stage                     Warnings   Errors     Comment\n\
             -I- Discovery                 {}          {}\n\
             -I- Lids Check                0          0\n\
             -I- Links Check               {}          {}\n\n\
             -I- You can find detailed errors/warnings in: /var/tmp/ibdiagnet2/ibdiagnet2.log\n",
            discovery.0, discovery.1, links.0, links.1
        )
    };
    for text in [summary((2, 0), (0, 3)), summary((3, 0), (0, 0))] {
        let doc = read(&text, &ReadOptions::default()).expect("ibdiagnet output");
        let r = analyze(&[doc], &AnalyzeOptions::default());
        let v = &r.verdict;
        assert_eq!(v.level, VerdictLevel::NotEnoughToJudge, "{v}");
        assert!(!v.starts_with("healthy"), "{v}");
        assert!(v.detail.contains("not judged"), "{v}");
        assert!(v.detail.contains("does not show"), "{v}");
        let cut: Vec<_> = r.findings.iter().filter(|f| f.rule == "IN001").collect();
        assert_eq!(cut.len(), 1, "{:#?}", r.findings);
        assert_eq!(cut[0].severity, fabricscope::rules::Severity::Info);
        assert!(
            cut[0]
                .message
                .starts_with("ibdiagnet's summary counts problems"),
            "{}",
            cut[0].message
        );
        assert!(!cut[0].message.contains("looks cut"), "{}", cut[0].message);
    }
    let v = verdict_of(&summary((0, 0), (0, 0)));
    assert_eq!(v.level, VerdictLevel::Healthy, "{v}");
}
