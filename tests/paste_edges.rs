//! The edges of a paste, where real ones went wrong: the prose after a
//! closing markdown fence, a collection script's letter-led `Host:` and
//! `Running:` lines, two machines' output under one name (told apart by
//! their port GUIDs and GPU UUIDs), and a cut `nvlink -s` listing that
//! still shows a link inactive. Texts are written for these tests in the
//! tools' layouts.

// Test helpers: a broken fixture should fail loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

use fabricscope::{analyze, read, Document, Kind, ReadOptions, Report, Severity};

fn doc(text: &str) -> Document {
    let doc = read(text, &ReadOptions::default()).unwrap_or_else(|e| panic!("not read: {e}"));
    let lost = doc.unaccounted_lines(text);
    assert!(lost.is_empty(), "lines {lost:?} unaccounted for");
    doc
}

fn report(text: &str) -> Report {
    analyze(&[doc(text)], &Default::default())
}

/// The findings of `rule`.
fn of<'r>(report: &'r Report, rule: &str) -> Vec<&'r fabricscope::rules::Finding> {
    report.findings.iter().filter(|f| f.rule == rule).collect()
}

/// The sections of `kind`, in input order.
fn sections_of(d: &Document, kind: Kind) -> Vec<&fabricscope::Section> {
    d.sections.iter().filter(|s| s.kind == kind).collect()
}

/// Rule ids of findings at `at_least` or worse.
fn fired(report: &Report, at_least: Severity) -> Vec<&str> {
    report
        .findings
        .iter()
        .filter(|f| f.severity >= at_least)
        .map(|f| f.rule)
        .collect()
}

/// One ibstat CA block of one port.
fn ibstat(guid: &str, state: &str, phys: &str, rate: u32) -> String {
    format!(
        "CA 'mlx5_0'\n\tCA type: MT4123\n\tNumber of ports: 1\n\tFirmware version: 20.31.1014\n\
         \tHardware version: 0\n\tNode GUID: {guid}\n\tSystem image GUID: {guid}\n\tPort 1:\n\
         \t\tState: {state}\n\t\tPhysical state: {phys}\n\t\tRate: {rate}\n\t\tBase lid: 12\n\
         \t\tLMC: 0\n\t\tSM lid: 1\n\t\tCapability mask: 0x2651e848\n\t\tPort GUID: {guid}\n\
         \t\tLink layer: InfiniBand\n"
    )
}

/// `nvidia-smi nvlink -s` of one H100 SXM GPU, `inactive` links down.
fn nvlink_s(gpu: u32, uuid: &str, links: u32, inactive: &[u32]) -> String {
    let mut out = format!("GPU {gpu}: NVIDIA H100 80GB HBM3 (UUID: {uuid})\n");
    for l in 0..links {
        if inactive.contains(&l) {
            out.push_str(&format!("\t Link {l}: <inactive>\n"));
        } else {
            out.push_str(&format!("\t Link {l}: 26.562 GB/s\n"));
        }
    }
    out
}

#[test]
fn a_closing_fence_ends_the_output_and_the_prose_after_it_is_not_the_tools() {
    let text = "Here is the topology:\n```\n$ nvidia-smi topo -m\n\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n\
                GPU0\t X \tSYS\t0-23\t0\nGPU1\tSYS\t X \t24-47\t1\n```\n\
                All of the connectivity is `SYS`, and inference is slow.\n\
                GPU0 and GPU1 columns are the devices.\n\n#### What is available:\n```go\nfunc main() {}\n```\n";
    let d = doc(text);
    let topo = sections_of(&d, Kind::TopoMatrix);
    assert_eq!(topo.len(), 1);
    assert_eq!(
        (topo[0].span.first_line, topo[0].span.last_line),
        (3, 6),
        "the matrix ends at its closing fence"
    );
    assert!(
        topo[0].warnings.is_empty(),
        "no line after the fence is read as a matrix row: {:?}",
        topo[0].warnings
    );
    let r = analyze(&[d], &Default::default());
    assert!(
        of(&r, "IN002").is_empty(),
        "{:?}",
        fired(&r, Severity::Info)
    );
}

#[test]
fn an_opening_fence_goes_on_with_the_command_above_it() {
    // The prompt above the fence names the command of what is in it.
    let text = format!(
        "$ ibstat\n```\n{}```\nThe port is down.\n",
        ibstat("0x0c42a10300a1b2c4", "Down", "Polling", 10)
    );
    let r = report(&text);
    assert!(fired(&r, Severity::Error).contains(&"IB001"));
    assert!(of(&r, "IN002").is_empty());
}

#[test]
fn letter_led_host_and_command_labels_split_a_collection_scripts_dump() {
    let text = format!(
        "Host: node07\nRunning: ibstat\n{}Host: node08\nRunning: ibstat\n{}",
        ibstat("0x0c42a10300a1b2c4", "Down", "Polling", 10),
        ibstat("0x0c42a10300a1b2c5", "Active", "LinkUp", 200)
    );
    let d = doc(&text);
    assert_eq!(d.section_hosts(), ["node07", "node08"]);
    let r = analyze(&[d], &Default::default());
    let down = of(&r, "IB001");
    assert_eq!(down.len(), 1, "{:?}", fired(&r, Severity::Info));
    assert_eq!(down[0].subject.host.as_deref(), Some("node07"));
    assert!(of(&r, "IN002").is_empty());
}

#[test]
fn one_port_name_with_two_port_guids_is_two_machines_and_neither_hides_the_other() {
    // Two hosts' ibstat under one name, split by a line we cannot read:
    // the second (Active) must not stand for the first (Down).
    let text = format!(
        "Results for alpha01\n{}Results for alpha02\n{}",
        ibstat("0x0c42a10300a1b2c4", "Down", "Polling", 10),
        ibstat("0x0c42a10300a1b2c5", "Active", "LinkUp", 200)
    );
    let r = report(&text);
    assert!(
        fired(&r, Severity::Error).contains(&"IB001"),
        "{:?}",
        fired(&r, Severity::Info)
    );
    // The same GUID twice is one port read twice: the later reading wins.
    let text = format!(
        "{}\n{}",
        ibstat("0x0c42a10300a1b2c4", "Down", "Polling", 10),
        ibstat("0x0c42a10300a1b2c4", "Active", "LinkUp", 200)
    );
    let r = report(&text);
    assert!(!fired(&r, Severity::Warning).contains(&"IB001"));
}

#[test]
fn one_gpu_number_with_two_uuids_is_two_gpus_and_neither_hides_the_other() {
    let text = format!(
        "Results for alpha01\n{}{}Results for alpha02\n{}{}",
        nvlink_s(0, "GPU-aaaaaaaa-0000-0000-0000-000000000000", 18, &[]),
        nvlink_s(1, "GPU-aaaaaaaa-0000-0000-0000-000000000001", 18, &[3]),
        nvlink_s(0, "GPU-bbbbbbbb-0000-0000-0000-000000000000", 18, &[]),
        nvlink_s(1, "GPU-bbbbbbbb-0000-0000-0000-000000000001", 18, &[]),
    );
    let r = report(&text);
    let nv001 = of(&r, "NV001");
    assert_eq!(nv001.len(), 1, "{:?}", fired(&r, Severity::Info));
    assert!(
        nv001[0].message.contains("inactive: 3"),
        "{}",
        nv001[0].message
    );
}

#[test]
fn counters_of_two_gpus_with_one_number_are_not_a_growth_between_snapshots() {
    let gpu = |uuid: &str, replays: u32| {
        let mut out = format!("GPU 0: NVIDIA H100 80GB HBM3 (UUID: {uuid})\n");
        for l in 0..2 {
            out.push_str(&format!(
                "\t Link {l}: Replay Errors: {replays}\n\t Link {l}: Recovery Errors: 0\n\t Link {l}: CRC Errors: 0\n"
            ));
        }
        out
    };
    let text = format!(
        "Results for alpha01\n{}Results for alpha02\n{}",
        gpu("GPU-aaaaaaaa-0000-0000-0000-000000000000", 3),
        gpu("GPU-bbbbbbbb-0000-0000-0000-000000000000", 9)
    );
    let r = report(&text);
    assert!(
        !fired(&r, Severity::Warning).contains(&"NV003"),
        "3 on one GPU and 9 on another is no growth: {:?}",
        fired(&r, Severity::Info)
    );
    assert!(r.measurements.counter_rates.is_empty());
    // Each GPU's history is still said, as info, in the one finding of
    // the host; the UUIDs tell the two GPUs 0 apart.
    let history = of(&r, "NV003");
    assert_eq!(history.len(), 1, "{history:#?}");
    assert_eq!(history[0].severity, Severity::Info);
    assert_eq!(history[0].evidence.len(), 4);
    for (e, want) in history[0].evidence.iter().zip([
        "GPU 0 (GPU-aaaaaaaa-0000-0000-0000-000000000000) link 0 replay_errors = 3",
        "GPU 0 (GPU-aaaaaaaa-0000-0000-0000-000000000000) link 1 replay_errors = 3",
        "GPU 0 (GPU-bbbbbbbb-0000-0000-0000-000000000000) link 0 replay_errors = 9",
        "GPU 0 (GPU-bbbbbbbb-0000-0000-0000-000000000000) link 1 replay_errors = 9",
    ]) {
        assert!(e.text.ends_with(want), "{}", e.text);
    }
    // The same UUID twice is two snapshots of one GPU: growth is news.
    let text = format!(
        "{}{}",
        gpu("GPU-aaaaaaaa-0000-0000-0000-000000000000", 3),
        gpu("GPU-aaaaaaaa-0000-0000-0000-000000000000", 9)
    );
    let r = report(&text);
    assert!(fired(&r, Severity::Error).contains(&"NV003"));
}

#[test]
fn a_cut_listing_still_judges_the_link_it_shows_inactive() {
    let text = nvlink_s(0, "GPU-1111aaaa-2222-3333-4444-555566667777", 2, &[1]);
    let r = report(&text);
    let nv001 = of(&r, "NV001");
    assert_eq!(nv001.len(), 1, "{:?}", fired(&r, Severity::Info));
    assert_eq!(nv001[0].severity, Severity::Error);
    assert!(
        nv001[0].message.contains("not judged"),
        "{}",
        nv001[0].message
    );
    // Cut with every link shown active: nothing concluded.
    let text = nvlink_s(0, "GPU-1111aaaa-2222-3333-4444-555566667777", 2, &[]);
    assert!(!fired(&report(&text), Severity::Info).contains(&"NV001"));
    // A PCIe card: a bridge wires some links, so an inactive one is no fault.
    let text =
        "GPU 0: NVIDIA A100-PCIE-40GB (UUID: GPU-1)\n\t Link 0: 25 GB/s\n\t Link 1: <inactive>\n";
    assert!(!fired(&report(text), Severity::Warning).contains(&"NV001"));
}

#[test]
fn a_command_run_on_other_hosts_is_no_output_of_the_admin_node() {
    let text = format!(
        "[root@mgmt01 ~]# clush -w node[07-08] -b \"ibstat mlx5_0\"\n---------------\nnode07\n---------------\n{}\
         ---------------\nnode08\n---------------\n{}",
        ibstat("0x0c42a10300a1b2c4", "Active", "LinkUp", 200),
        ibstat("0x0c42a10300a1b2c5", "Down", "Polling", 10)
    );
    let d = doc(&text);
    assert_eq!(d.section_hosts(), ["node07", "node08"]);
    // A command with no output on the prompt's own host still says so.
    let d = doc("[root@node07 ~]# ibstat\n");
    assert_eq!(d.section_hosts(), ["node07"]);
}

#[test]
fn pssh_and_ansible_result_headings_name_the_host_of_what_follows() {
    let text = format!(
        "[1] 10:12:01 [SUCCESS] node07\n{}[2] 10:12:01 [SUCCESS] node08\n{}\
         [3] 10:12:02 [FAILURE] node09 Exited with error code 255\n",
        ibstat("0x0c42a10300a1b2c4", "Active", "LinkUp", 200),
        ibstat("0x0c42a10300a1b2c5", "Down", "Polling", 10)
    );
    let r = report(&text);
    let down = of(&r, "IB001");
    assert_eq!(down.len(), 1);
    assert_eq!(down[0].subject.host.as_deref(), Some("node08"));
    assert!(of(&r, "IN002").is_empty());
    let text = format!(
        "node08 | CHANGED | rc=0 >>\n{}node09 | UNREACHABLE! => {{\n    \"changed\": false,\n    \
         \"msg\": \"Failed to connect to the host via ssh\",\n    \"unreachable\": true\n}}\n",
        ibstat("0x0c42a10300a1b2c5", "Down", "Polling", 10)
    );
    let r = report(&text);
    assert!(
        of(&r, "IN002").is_empty(),
        "node09's JSON is not node08's ibstat: {:?}",
        fired(&r, Severity::Info)
    );
}

#[test]
fn an_elided_listing_is_partial_and_no_port_of_it_speaks_for_the_host() {
    // Two CAs of many, the rest elided: what was left out is not judged,
    // and "no InfiniBand port of this host is Active" is not said.
    let one = ibstat("0x0c42a10300a1b2c4", "Down", "Polling", 10);
    let text = format!("$ ibstat\n{one}...\n");
    let r = report(&text);
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:?}", fired(&r, Severity::Info));
    assert!(cut[0].message.contains("left out"), "{}", cut[0].message);
    let down = of(&r, "IB001");
    assert_eq!(down.len(), 1);
    assert_eq!(down[0].severity, Severity::Error, "{}", down[0].message);
    // The same listing whole: the host has no Active port, critical.
    let r = report(&format!("$ ibstat\n{one}"));
    assert!(of(&r, "IN001").is_empty());
    assert_eq!(
        r.findings
            .iter()
            .find(|f| f.rule == "IB001")
            .unwrap()
            .severity,
        Severity::Critical
    );
}

#[test]
fn a_diag_without_a_gpu_test_result_is_not_healthy() {
    // DCGM 2/3 table cut after its software checks: they passed, the GPU
    // tests are not in the paste.
    let cut = "+---------------------------+------------------------------------------------+\n\
               | Diagnostic                | Result                                         |\n\
               +===========================+================================================+\n\
               |-----  Deployment  --------+------------------------------------------------|\n\
               | Blacklist                 | Pass                                           |\n\
               | NVML Library              | Pass                                           |\n\
               | Permissions and OS Blocks | Pass                                           |\n";
    let d = doc(cut);
    assert!(d.sections.iter().any(|s| s.kind == Kind::DcgmiDiag));
    let r = analyze(&[d], &Default::default());
    assert!(
        r.skipped_rules.iter().any(|s| s.rule == "DG001"),
        "software checks alone judge no GPU: {:?}",
        r.skipped_rules
    );
    assert_ne!(
        r.verdict.level,
        fabricscope::report::verdict::VerdictLevel::Healthy
    );
}

#[test]
fn hostname_and_an_interactive_ssh_name_the_host_of_what_follows() {
    // Two machines' perfquery of the same LID, told apart only by
    // `hostname`: two hosts, and no growth from one to the other.
    let pq = |symbol: u32| {
        format!(
            "# Port extended counters: Lid 1 port 1 (CapMask: 0x5A00)\nPortSelect:......................1\n\
             CounterSelect:...................0x0000\nPortXmitData:....................1000000\n\
             PortRcvData:.....................2000000\nPortXmitPkts:....................3000\n\
             PortRcvPkts:.....................4000\nSymbolErrorCounter:..............{symbol}\n"
        )
    };
    let text = format!(
        "$ hostname\nnodeA\n$ perfquery -x\n{}$ ssh nodeB\nLast login: Mon Feb  3 08:00:00 2025\n$ hostname\nnodeB\n$ perfquery -x\n{}",
        pq(0),
        pq(40)
    );
    let d = doc(&text);
    assert_eq!(d.section_hosts(), ["nodeA", "nodeB"]);
    let r = analyze(&[d], &Default::default());
    assert!(r.measurements.counter_rates.is_empty());
    assert!(of(&r, "IB112").is_empty());
    // An interactive `ssh` alone names the host of the prompts after it.
    let text = format!("$ ssh nodeB\n$ perfquery -x\n{}", pq(0));
    assert_eq!(doc(&text).section_hosts(), ["nodeB"]);
}

#[test]
fn a_lifetime_count_over_its_limit_that_did_not_grow_is_history() {
    // The same port a minute apart: SymbolErrorCounter 120 both times is
    // history (info); grown to 160 it stays a finding, and IB112 says so.
    let run = |time: &str, symbol: u32| {
        format!(
            "[root@gpu04 ~]# date; perfquery -x 31 1\nWed Oct  2 {time} UTC 2024\n\
             # Port extended counters: Lid 31 port 1 (CapMask: 0x5A00)\nPortSelect:......................1\n\
             CounterSelect:...................0x0000\nPortXmitData:....................77777777777\n\
             PortRcvData:.....................66666666666\nSymbolErrorCounter:..............{symbol}\n\
             LinkErrorRecoveryCounter:........0\nLinkDownedCounter:...............0\n"
        )
    };
    let r = report(&format!("{}{}", run("16:40:11", 120), run("16:41:11", 120)));
    let ib101 = of(&r, "IB101");
    assert_eq!(ib101.len(), 1, "{:?}", fired(&r, Severity::Info));
    assert_eq!(ib101[0].severity, Severity::Info, "{}", ib101[0].message);
    assert!(ib101[0].message.contains("unchanged over the 60 s"));
    let r = report(&format!("{}{}", run("16:40:11", 120), run("16:41:11", 160)));
    assert!(fired(&r, Severity::Warning).contains(&"IB101"));
    assert!(fired(&r, Severity::Warning).contains(&"IB112"));
    // One snapshot: the count since the reset is judged by its limit.
    let r = report(&run("16:40:11", 120));
    assert!(fired(&r, Severity::Warning).contains(&"IB101"));
}

/// `perfquery -x` of LID 12 port 1 with the error and data counters given.
fn perfquery_x(rcv_errors: u64, xmit_words: u64) -> String {
    format!(
        "# Port extended counters: Lid 12 port 1 (CapMask: 0x5A00)\n\
         PortSelect:......................1\nCounterSelect:...................0x0000\n\
         PortXmitData:....................{xmit_words}\nPortRcvData:.....................{xmit_words}\n\
         PortXmitPkts:....................1000\nPortRcvPkts:.....................1000\n\
         SymbolErrorCounter:..............0\nLinkErrorRecoveryCounter:........0\n\
         LinkDownedCounter:...............0\nPortRcvErrors:...................{rcv_errors}\n\
         PortXmitDiscards:................0\nPortXmitWait:....................0\n"
    )
}

/// The interval of the first PortRcvErrors rate, and what it came from.
fn rcv_errors_interval(report: &Report) -> (Option<f64>, String) {
    let r = report
        .measurements
        .counter_rates
        .iter()
        .find(|r| &*r.counter == "PortRcvErrors")
        .expect("a PortRcvErrors rate");
    (r.interval_seconds, r.interval_source.to_string())
}

#[test]
fn a_sleep_between_two_readings_on_one_line_is_their_interval() {
    let text = format!(
        "[root@gpu07 ~]# perfquery -x; sleep 60; perfquery -x\n{}{}",
        perfquery_x(10, 1_000_000),
        perfquery_x(250, 9_000_000)
    );
    let r = report(&text);
    let (seconds, source) = rcv_errors_interval(&r);
    assert_eq!(seconds, Some(60.0), "{source}");
    assert!(source.contains("sleep"), "{source}");
    let growth = of(&r, "IB112");
    assert_eq!(growth.len(), 1, "{:#?}", r.findings);
    assert!(
        growth[0].message.contains("4.000/s"),
        "{}",
        growth[0].message
    );
}

#[test]
fn a_short_sleep_or_an_unmatched_output_count_gives_no_interval() {
    // Five seconds is mostly the tools' own run time.
    let short = format!(
        "$ perfquery -x; sleep 5; perfquery -x\n{}{}",
        perfquery_x(10, 1_000_000),
        perfquery_x(250, 9_000_000)
    );
    assert_eq!(rcv_errors_interval(&report(&short)).0, None);
    // Three commands, two outputs: which output is whose is unknown.
    let unmatched = format!(
        "$ perfquery -x; sleep 60; perfquery -x; sleep 60; perfquery -x\n{}{}",
        perfquery_x(10, 1_000_000),
        perfquery_x(250, 9_000_000)
    );
    assert_eq!(rcv_errors_interval(&report(&unmatched)).0, None);
}

#[test]
fn a_loop_with_a_sleep_spaces_its_readings() {
    let text = format!(
        "$ for i in $(seq 3); do perfquery -x; sleep 30; done\n{}{}{}",
        perfquery_x(10, 1_000_000),
        perfquery_x(20, 2_000_000),
        perfquery_x(40, 3_000_000)
    );
    let r = report(&text);
    let intervals: Vec<Option<f64>> = r
        .measurements
        .counter_rates
        .iter()
        .filter(|r| &*r.counter == "PortRcvErrors")
        .map(|r| r.interval_seconds)
        .collect();
    assert!(!intervals.is_empty());
    assert!(intervals.iter().all(|s| *s == Some(30.0)), "{intervals:?}");
}

#[test]
fn date_plus_s_in_a_compound_command_times_the_readings_after_it() {
    // Before, the prompt's first command (`date`) claimed the whole
    // output: perfquery's lines were unread lines of a date.
    let text = format!(
        "$ date +%s; perfquery -x\n1764583964\n{}$ date +%s; perfquery -x\n1764584024\n{}",
        perfquery_x(10, 1_000_000),
        perfquery_x(250, 9_000_000)
    );
    let d = doc(&text);
    let kinds: Vec<Kind> = d.sections.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [Kind::Date, Kind::Perfquery, Kind::Date, Kind::Perfquery]
    );
    assert!(d.all_warnings().is_empty(), "{:#?}", d.all_warnings());
    let (seconds, source) = rcv_errors_interval(&report(&text));
    assert_eq!(seconds, Some(60.0), "{source}");
    // One line, both dates in it: the second follows the first reading.
    let one_line = format!(
        "$ date +%s; perfquery -x; sleep 60; date +%s; perfquery -x\n1764583964\n{}1764584024\n{}",
        perfquery_x(10, 1_000_000),
        perfquery_x(250, 9_000_000)
    );
    assert_eq!(rcv_errors_interval(&report(&one_line)).0, Some(60.0));
}

#[test]
fn the_next_step_of_a_compound_command_is_read_when_the_first_printed_no_output_of_its_own() {
    // `ibstatus` failed; what follows is ibstat's, not unread ibstatus lines.
    let text = format!(
        "$ ibstatus; ibstat\nFatal error:  device '*': sys files not found (/sys/class/infiniband/*/ports)\n{}",
        ibstat("0x1c34da0300a1b2c4", "Down", "Disabled", 10)
    );
    let d = doc(&text);
    let mut kinds: Vec<Kind> = d.sections.iter().map(|s| s.kind).collect();
    kinds.sort_by_key(|k| k.name());
    assert_eq!(kinds, [Kind::Ibstat, Kind::Ibstatus], "{:#?}", d.sections);
    let r = report(&text);
    assert_eq!(of(&r, "IB001").len(), 1, "{:#?}", r.findings);
}

#[test]
fn two_screens_of_watch_are_two_snapshots_with_their_times() {
    let text = format!(
        "Every 60.0s: perfquery -x                          gpu07: Tue Dec  1 10:00:00 2026\n\n{}\n\
         Every 60.0s: perfquery -x                          gpu07: Tue Dec  1 10:01:00 2026\n\n{}",
        perfquery_x(10, 1_000_000),
        perfquery_x(250, 9_000_000)
    );
    let d = doc(&text);
    assert!(d.all_warnings().is_empty(), "{:#?}", d.all_warnings());
    let (seconds, source) = rcv_errors_interval(&report(&text));
    assert_eq!(seconds, Some(60.0), "{source}");
}

#[test]
fn a_usage_error_of_nvidia_smi_is_the_tool_failing_not_an_unreadable_line() {
    let text = "(base) root@epyc:~/build# nvidia-smi topo -p2p -p\nOption \"-p2p\" is missing its value.\n\
                Please run 'nvidia-smi -h' for help.\n\
                (base) root@epyc:~/build# nvidia-smi topo -p2p p\n \tGPU0\tGPU1\t\n GPU0\tX\tOK\t\n GPU1\tOK\tX\t\n";
    let r = report(text);
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
    let failed = of(&r, "IN003");
    assert_eq!(failed.len(), 1, "{:#?}", r.findings);
    assert_eq!(failed[0].severity, Severity::Info);
}

#[test]
fn a_date_before_a_sleeping_command_does_not_hide_its_interval() {
    // The date gives both readings one time; the sleep between them is
    // their interval.
    let text = format!(
        "$ date\nTue Dec  1 10:00:00 UTC 2026\n$ perfquery -x; sleep 60; perfquery -x\n{}{}",
        perfquery_x(10, 1_000_000),
        perfquery_x(250, 9_000_000)
    );
    let (seconds, source) = rcv_errors_interval(&report(&text));
    assert_eq!(seconds, Some(60.0), "{source}");
    assert!(source.contains("after 60 s of sleep"), "{source}");
}

#[test]
fn a_root_prompt_of_a_tool_we_do_not_read_ends_the_section_before_it() {
    // ibstatus has no last line of its own: a perftest run after it under a
    // bare `# ` root prompt was read as its unreadable lines (IN002).
    let text = "# ibstatus\nInfiniband device 'mlx4_0' port 1 status:\n\
                \tdefault gid:\t fe80:0000:0000:0000:0002:c903:0010:a1b1\n\tbase lid:\t 0x7\n\
                \tsm lid:\t\t 0x1\n\tstate:\t\t 4: ACTIVE\n\tphys state:\t 5: LinkUp\n\
                \trate:\t\t 56 Gb/sec (4X FDR)\n\tlink_layer:\t InfiniBand\n\n\
                # ib_read_lat -d mlx4_0 -i 1 10.1.0.2\n\
                ---------------------------------------------------------------------------------------\n\
                                    RDMA_Read Latency Test\n\
                 Dual-port       : OFF\t\tDevice         : mlx4_0\n\
                 #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]\n\
                 2       1000          1.98           8.41         2.03\n";
    let d = doc(text);
    let status = sections_of(&d, Kind::Ibstatus);
    assert_eq!(status.len(), 1, "{:#?}", d.sections);
    assert_eq!(
        status[0].span.last_line, 9,
        "the ibstatus block ends before the next root prompt"
    );
    let r = analyze(&[d], &Default::default());
    assert!(
        of(&r, "IN002").is_empty(),
        "{:?}",
        fired(&r, Severity::Info)
    );
}

#[test]
fn a_time_in_a_scripts_heading_is_the_time_of_the_snapshot_under_it() {
    // `echo "==== $(date) ===="` before each reading, and a heading that
    // names a device between them: neither is perfquery output.
    let text = format!(
        "==== Tue Dec  1 10:00:00 UTC 2026 ====\n{}==== mt4123_pciconf0 ====\n\
         ==== Tue Dec  1 10:01:00 UTC 2026 ====\n{}=== end of run ===\n",
        perfquery_x(10, 1_000_000),
        perfquery_x(250, 9_000_000)
    );
    let d = doc(&text);
    assert_eq!(sections_of(&d, Kind::Date).len(), 2, "{d:#?}");
    assert!(d.sections.iter().all(|s| s.warnings.is_empty()), "{d:#?}");
    let r = report(&text);
    let (seconds, source) = rcv_errors_interval(&r);
    assert_eq!(seconds, Some(60.0), "{source}");
    assert!(of(&r, "IN002").is_empty(), "{:#?}", of(&r, "IN002"));
}

#[test]
fn a_host_heading_with_a_step_and_a_time_names_the_host_and_times_its_snapshot() {
    // A collection script's banner: host, step, time.
    let text = format!(
        "===== gn05 | before | 2026-12-01T10:00:00Z =====\n$ perfquery -x\n{}\
         ===== gn05 | after | 2026-12-01T10:02:00Z =====\n$ perfquery -x\n{}",
        perfquery_x(10, 1_000_000),
        perfquery_x(250, 9_000_000)
    );
    let d = doc(&text);
    assert!(
        d.sections.iter().all(|s| s.host.as_deref() == Some("gn05")),
        "{d:#?}"
    );
    let (seconds, source) = rcv_errors_interval(&report(&text));
    assert_eq!(seconds, Some(120.0), "{source}");
}

#[test]
fn a_prompt_that_lost_its_bracket_still_names_its_host() {
    let text = format!(
        "[root@gn01 ~]# ibstat\n{}root@gn02 ~]# ibstat\n{}",
        ibstat("0x946dae0300a1b200", "Active", "LinkUp", 400),
        ibstat("0x946dae0300a1b2f0", "Down", "Polling", 10)
    );
    let d = doc(&text);
    let hosts: Vec<Option<&str>> = d.sections.iter().map(|s| s.host.as_deref()).collect();
    assert_eq!(hosts, [Some("gn01"), Some("gn02")], "{d:#?}");
}

#[test]
fn a_last_line_cut_inside_a_row_is_a_cut_and_prose_at_the_end_is_not() {
    // `nvidia-smi nvlink -R`, the paste ending inside its third row.
    let cut = "$ nvidia-smi nvlink -R\nGPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-a1)\n\
               \t Link 0: Remote Device 00000000:08:00.0: Link 47\n\
               \t Link 1: Remote Device 00000000:08:00.0: Link 46\n\
               \t Link 2: Remote Device 00";
    let r = report(cut);
    assert_eq!(of(&r, "IN001").len(), 1, "{:#?}", r.findings);
    assert!(of(&r, "IN002").is_empty(), "{:#?}", of(&r, "IN002"));
    // The same with a line end: the row is still the beginning of one.
    let r = report(&format!("{cut}\n"));
    assert_eq!(of(&r, "IN001").len(), 1, "{:#?}", r.findings);
    // `ibqueryerrors`, the input ending inside a port line's last entry:
    // the entries before it are read, the line is cut.
    let entries = "$ ibqueryerrors --details\nErrors for 0x0002c90300a1b2c0 \"leaf07\"\n   \
                   GUID 0x0002c90300a1b2c0 port 12: [SymbolErrorCounter == 812] \
                   [LinkDownedCounter == 3] [PortXmitWait == 91552] [PortRcvData ==";
    let r = report(entries);
    assert_eq!(of(&r, "IN001").len(), 1, "{:#?}", r.findings);
    assert!(of(&r, "IN002").is_empty(), "{:#?}", of(&r, "IN002"));
    assert!(!of(&r, "IB101").is_empty(), "{:#?}", r.findings);
    // A question after the output begins like none of its rows.
    let prose = "$ nvidia-smi nvlink -R\nGPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-a1)\n\
                 \t Link 0: Remote Device 00000000:08:00.0: Link 47\nAny idea why";
    let r = report(prose);
    assert!(of(&r, "IN001").is_empty(), "{:#?}", r.findings);
    assert_eq!(of(&r, "IN002").len(), 1, "{:#?}", r.findings);
}

/// A paste cut where the output itself says more follows: an adapter that
/// announces a port and shows none (ibstat among CAs that show theirs,
/// ibv_devinfo's `phys_port_cnt`), a device cut at a GUID label, a GPU
/// header cut to `GP` after a listing. Each is IN001 naming what was not
/// judged; before, the first two were "healthy" with nothing said.
#[test]
fn an_adapter_or_gpu_the_output_announces_and_does_not_show_is_a_cut() {
    let wild = |id: &str| {
        let path = format!(
            "{}/tests/fixtures/wild/{id}.txt",
            env!("CARGO_MANIFEST_DIR")
        );
        report(&std::fs::read_to_string(path).unwrap())
    };
    for (id, part) in [
        ("geerling92-ibstat-last-ca-cut-before-port", "rocep2s0f1"),
        ("ompi6184-ibv-devinfo-v-cut-before-ports", "mlx5_2"),
        ("deepep223-ibv-devinfo-cut-at-guid-label", "mlx5_3"),
        ("bottlerocket4418-nvlink-s-cut-in-gpu-header", "cut line 42"),
        (
            "nccl1608-topo-nvlink-s-cut-in-gpu-header",
            "GPU 1 link listing",
        ),
    ] {
        let r = wild(id);
        let cut = of(&r, "IN001");
        assert_eq!(cut.len(), 1, "{id}: {:#?}", r.findings);
        assert!(cut[0].message.contains(part), "{id}: {}", cut[0].message);
        assert!(of(&r, "IN002").is_empty(), "{id}: {:#?}", r.findings);
    }
    // `ibstat -s` prints CAs without ports: a listing where no CA shows
    // one is not cut.
    let short = "CA 'mlx5_0'\n\tCA type: MT4123\n\tNumber of ports: 1\n\tFirmware version: 20.41.1000\n\tHardware version: 0\n\tNode GUID: 0x1070fd0300a1b2c4\n\tSystem image GUID: 0x1070fd0300a1b2c4\n";
    assert!(of(&report(short), "IN001").is_empty());
}

/// A tool's command line pasted alone in a fence (`nvidia-smi topo -m`, no
/// prompt) is the command, not a matrix row: nothing is missing above the
/// header. Prose that begins with a tool's name is not a command.
#[test]
fn a_bare_command_line_heads_its_output_and_prose_naming_a_tool_does_not() {
    let matrix = "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tNV8\t0-27\t0\nGPU1\tNV8\t X \t0-27\t0\n";
    let r = report(&format!("```\nnvidia-smi topo -m\n{matrix}```\n"));
    assert!(of(&r, "IN001").is_empty(), "{:#?}", r.findings);
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
    let d = doc(&format!("```\nnvidia-smi topo -m\n{matrix}```\n"));
    assert_eq!(sections_of(&d, Kind::TopoMatrix).len(), 1);
    // A sentence: not a command, so the ibstat below stays where it was.
    let prose = format!(
        "ibstat shows the port is down\n{}",
        ibstat("0x0002c90300a1b2c3", "Down", "Polling", 100)
    );
    let d = doc(&prose);
    assert_eq!(sections_of(&d, Kind::Ibstat).len(), 1);
}

#[test]
fn notes_after_ibstat_values_are_notes_not_prompts_or_values() {
    // Blogs annotate ibstat line by line (`State: Active # 端口状态`): the
    // `#` is no root prompt (which had cut the port block off and called
    // the paste cut), and the note is not part of the value.
    let text = "$ ibstat\nCA 'mlx4_1'\n    CA type: MT4099 # 型号\n    Number of ports: 1 # 端口数\n\
                \x20   Firmware version: 2.42.5000 # 固件版本\n    Hardware version: 1\n\
                \x20   Node GUID: 0x0002c90300a1b2c0 # 节点 GUID\n    System image GUID: 0x0002c90300a1b2c3\n\
                \x20   Port 1:\n        State: Down # 端口状态（Down - 没有连接）\n\
                \x20       Physical state: Polling # 物理状态\n        Rate: 10 # 速率 Gb/s\n\
                \x20       Base lid: 0\n        LMC: 0\n        SM lid: 0 # 子网管理器 lid\n\
                \x20       Capability mask: 0x02514868\n        Port GUID: 0x0002c90300a1b2c1\n\
                \x20       Link layer: InfiniBand\n";
    let d = doc(text);
    let ibstat = sections_of(&d, Kind::Ibstat);
    assert_eq!(ibstat.len(), 1);
    assert!(ibstat[0].warnings.is_empty(), "{:?}", ibstat[0].warnings);
    assert!(d.unrecognised.is_empty(), "{:?}", d.unrecognised);
    let r = analyze(&[d], &Default::default());
    assert_eq!(of(&r, "IB001").len(), 1, "{:?}", r.findings);
    assert!(of(&r, "IN001").is_empty() && of(&r, "IN002").is_empty());
    // A SUSE prompt's directory is a path: still a prompt.
    let suse = format!("node07:~ # ibstat\n{}", ibstat_block());
    let d = doc(&suse);
    assert_eq!(d.sections[0].host.as_deref(), Some("node07"));
}

fn ibstat_block() -> String {
    ibstat("0x0002c90300a1b2c1", "Active", "LinkUp", 56)
}

#[test]
fn a_last_line_that_is_one_cut_word_is_a_cut_line_of_the_output() {
    // The paste ends inside a field's name, with no line end: the word
    // alone was the line. It begins like the other devices' `max_mtu:`
    // lines, so the output was cut there (IN001), not followed by a word
    // of prose.
    let device = |name: &str, state: &str| {
        format!(
            "hca_id:\t{name}\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t20.35.1012\n\
             \tnode_guid:\t\t\t0c42:a103:00b1:2c40\n\tsys_image_guid:\t\t\t0c42:a103:00b1:2c40\n\
             \tvendor_id:\t\t\t0x02c9\n\tvendor_part_id:\t\t\t4123\n\thw_ver:\t\t\t\t0x0\n\
             \tboard_id:\t\t\tMT_0000000223\n\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n\
             \t\t\tstate:\t\t\t{state}\n"
        )
    };
    let full = |state: &str| {
        format!("\t\t\tmax_mtu:\t\t4096 (5)\n\t\t\tactive_mtu:\t\t4096 (5)\n\t\t\tsm_lid:\t\t\t1\n\t\t\tport_lid:\t\t7\n\t\t\tport_lmc:\t\t0x00\n\t\t\tlink_layer:\t\tInfiniBand\n{state}")
    };
    let text = format!(
        "{}{}\n{}\t\t\tmax_mtu",
        device("mlx5_0", "PORT_ACTIVE (4)"),
        full(""),
        device("mlx5_1", "PORT_ACTIVE (4)")
    );
    let d = doc(&text);
    assert!(d.unrecognised.is_empty(), "{:?}", d.unrecognised);
    let r = analyze(&[d], &Default::default());
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:?}", r.findings);
    // A last word of prose after whole output is no cut line.
    let prose = format!(
        "{}{}\nThanks",
        device("mlx5_0", "PORT_ACTIVE (4)"),
        full("")
    );
    let r = report(&prose);
    assert!(of(&r, "IN001").is_empty(), "{:?}", r.findings);
}

#[test]
fn devices_ibv_devinfo_could_not_open_beside_one_it_read_are_counted_not_called_all() {
    // In a container given one of a card's virtual functions, ibv_devinfo
    // fails on the others and reads that one: the tool did reach its
    // driver, so "found no device" would be false.
    let text = std::fs::read_to_string(
        "tests/fixtures/rules/IN003/fires_ibv_devinfo_some_devices_unopened.txt",
    )
    .unwrap();
    let r = report(&text);
    let failed = of(&r, "IN003");
    assert_eq!(failed.len(), 1);
    assert!(
        failed[0]
            .message
            .contains("could not open 5 device(s) and read 1"),
        "{}",
        failed[0].message
    );
    assert!(of(&r, "IB001").is_empty());
}

#[test]
fn a_fence_after_a_commands_output_closes_it_when_its_opening_is_not_in_the_paste() {
    // An excerpt that starts inside a code block: the prompt and its
    // output, then the closing fence, then the asker's prose and a second
    // run. The prose is not the CSV's lines.
    let text = "[ana@ws-17 ~]$ nvidia-smi --query-gpu=pcie.link.gen.current,pcie.link.width.current --format=csv\n\
                pcie.link.gen.current, pcie.link.width.current\n2, 8\n```\n\
                Why gen 2 at x8?\nThe slot is x16 gen 4.\n\n\
                Under load:\n\n```\n\
                nvidia-smi --query-gpu=pcie.link.gen.current,pcie.link.width.current --format=csv\n\
                pcie.link.gen.current, pcie.link.width.current\n4, 8\n```\n";
    let d = doc(text);
    let csv = sections_of(&d, Kind::SmiCsv);
    assert_eq!(csv.len(), 2);
    for s in &csv {
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    }
    let r = analyze(&[d], &Default::default());
    assert!(of(&r, "IN002").is_empty(), "{:?}", r.findings);
}

#[test]
fn a_switchs_all_ports_aggregate_is_not_judged_beside_its_ports() {
    // ibqueryerrors prints `port ALL` (AllPortSelect) and then the port
    // that makes it up: one fault, on that port.
    let text = "$ ibqueryerrors\nErrors for 0x7cfe900300a1b2c0 \"leaf-r3\"\n   \
                GUID 0x7cfe900300a1b2c0 port ALL: [SymbolErrorCounter == 480]\n   \
                GUID 0x7cfe900300a1b2c0 port 17: [SymbolErrorCounter == 480]\n\n\
                ## Summary: 12 nodes checked, 1 bad nodes found\n\
                ##          140 ports checked, 1 ports have errors beyond threshold\n";
    let r = report(text);
    let symbol = of(&r, "IB101");
    assert_eq!(symbol.len(), 1, "{:?}", r.findings);
    assert_eq!(symbol[0].subject.port, Some(17));
}

/// Notes in Chinese after tools' header lines as after their values
/// (`CA 'mlx4_1' # 驱动名称`, `… port 2 status: # 该网卡未连接`,
/// `hca_id: mlx4_1 # …`, `port: 2 # 断开`, `CA: node: # …`): each tool
/// is read whole, nothing is unread or cut, and the second port's
/// Down/Polling is judged. Before, the adapter was "unknown", ibstatus
/// read no port, ibv_devinfo's `port` was no number, and the paste was
/// called cut.
#[test]
fn notes_after_tool_headers_leave_every_tool_read() {
    let text = r#"# IB 命令笔记

* ibstat

```sh
$ ibstat
CA 'mlx4_1' # 驱动名称
    CA type: MT4099 # 型号
    Number of ports: 2 # 端口数量
    Firmware version: 2.42.5000 # 固件版本
    Hardware version: 1
    Node GUID: 0xf4521403007e1b20 # 节点 GUID
    System image GUID: 0xf4521403007e1b23
    Port 1: # 已连接
        State: Active # 端口状态
        Physical state: LinkUp
        Rate: 56 # 单位 Gb/s
        Base lid: 17
        LMC: 0
        SM lid: 2 # SM 的 lid
        Capability mask: 0x02514868
        Port GUID: 0xf4521403007e1b21
        Link layer: InfiniBand
    Port 2:
        State: Down
        Physical state: Polling
        Rate: 10
        Base lid: 0
        LMC: 0
        SM lid: 0
        Capability mask: 0x02514868
        Port GUID: 0xf4521403007e1b22
        Link layer: InfiniBand
```

* ibstatus

```sh
$ ibstatus
Infiniband device 'mlx4_1' port 1 status: # 该网卡已连接
    default gid: fe80:0000:0000:0000:f452:1403:007e:1b21
    base lid:    0x11
    sm lid:      0x2
    state:       4: ACTIVE
    phys state:  5: LinkUp
    rate:        56 Gb/sec (4X FDR) # 正确速率
    link_layer:  InfiniBand

Infiniband device 'mlx4_1' port 2 status: # 该网卡未连接
    default gid: fe80:0000:0000:0000:f452:1403:007e:1b22
    base lid:    0x0
    sm lid:      0x0
    state:       1: DOWN
    phys state:  2: Polling
    rate:        10 Gb/sec (4X) # 未协商
    link_layer:  InfiniBand
```

* iblinkinfo

```sh
CA: lab-n07 mlx4_1: # 计算节点
      0xf4521403007e1b21     17    1[  ] ==( 4X          14.0625 Gbps Active/  LinkUp)==>       2    9[  ] "MF0;sw-lab:SX6036/U1" ( )
Switch: 0x0002c9020051a3c0 MF0;sw-lab:SX6036/U1: # 交换机
           2    9[  ] ==( 4X          14.0625 Gbps Active/  LinkUp)==>      17    1[  ] "lab-n07 mlx4_1" ( )
```

* ibnetdiscover

```sh
vendid=0x2c9
devid=0xc738
sysimgguid=0x2c9020051a3c3
switchguid=0x2c9020051a3c0(2c9020051a3c0)
Switch  36 "S-0002c9020051a3c0"                     # "MF0;sw-lab:SX6036/U1" enhanced port 0 lid 2 lmc 0
[9]     "H-f4521403007e1b20"[1](f4521403007e1b21)      # "lab-n07 mlx4_1" lid 17 4xFDR
```

* ibv_devinfo

```sh
$ ibv_devinfo
hca_id: mlx4_1 # 驱动名称
    transport:          InfiniBand (0)
    fw_ver:             2.42.5000 # Firmware version
    node_guid:          f452:1403:007e:1b20
    sys_image_guid:     f452:1403:007e:1b23
    vendor_id:          0x02c9
    vendor_part_id:     4099
    hw_ver:             0x1
    board_id:           MT_1090120019 # 卡的 PSID
    phys_port_cnt:      2
        port:   1 # 连接
            state:          PORT_ACTIVE (4)
            max_mtu:        4096 (5)
            active_mtu:     4096 (5)
            sm_lid:         2
            port_lid:       17
            port_lmc:       0x00
            link_layer:     InfiniBand # RoCE 时为 Ethernet

        port:   2 # 断开
            state:          PORT_DOWN (1)
            max_mtu:        4096 (5)
            active_mtu:     4096 (5)
            sm_lid:         0
            port_lid:       0
            port_lmc:       0x00
            link_layer:     InfiniBand
```
"#;
    let d = doc(text);
    for kind in [
        Kind::Ibstat,
        Kind::Ibstatus,
        Kind::Iblinkinfo,
        Kind::Ibnetdiscover,
        Kind::IbvDevinfo,
    ] {
        let sections = sections_of(&d, kind);
        assert_eq!(sections.len(), 1, "{kind:?}: {:#?}", d.sections);
        assert!(
            sections[0].warnings.is_empty(),
            "{kind:?}: {:?}",
            sections[0].warnings
        );
    }
    match &sections_of(&d, Kind::Ibstat)[0].data {
        fabricscope::SectionData::Ibstat(s) => {
            assert_eq!(s.cas.len(), 1);
            assert_eq!(s.cas[0].name, "mlx4_1");
            assert_eq!(s.cas[0].ports.len(), 2);
        }
        other => panic!("{other:?}"),
    }
    match &sections_of(&d, Kind::Ibstatus)[0].data {
        fabricscope::SectionData::Ibstatus(s) => {
            let ports: Vec<(&str, u32)> = s
                .ports
                .iter()
                .map(|p| (p.device.as_str(), p.port))
                .collect();
            assert_eq!(ports, [("mlx4_1", 1), ("mlx4_1", 2)]);
        }
        other => panic!("{other:?}"),
    }
    match &sections_of(&d, Kind::IbvDevinfo)[0].data {
        fabricscope::SectionData::IbvDevinfo(s) => {
            assert_eq!(s.devices[0].hca_id, "mlx4_1");
            let numbers: Vec<u32> = s.devices[0].ports.iter().map(|p| p.number).collect();
            assert_eq!(numbers, [1, 2]);
        }
        other => panic!("{other:?}"),
    }
    match &sections_of(&d, Kind::Iblinkinfo)[0].data {
        fabricscope::SectionData::Iblinkinfo(s) => {
            let descs: Vec<Option<&str>> = s.nodes.iter().map(|n| n.desc.as_deref()).collect();
            assert_eq!(
                descs,
                [Some("lab-n07 mlx4_1"), Some("MF0;sw-lab:SX6036/U1")]
            );
        }
        other => panic!("{other:?}"),
    }
    let r = analyze(&[d], &Default::default());
    assert!(of(&r, "IN001").is_empty(), "{:#?}", of(&r, "IN001"));
    assert!(of(&r, "IN002").is_empty(), "{:#?}", of(&r, "IN002"));
    let down = of(&r, "IB001");
    assert!(
        !down.is_empty()
            && down.iter().all(|f| f.severity >= Severity::Warning
                && f.subject.device.as_deref() == Some("mlx4_1")
                && f.subject.port == Some(2)),
        "{:#?}",
        r.findings
    );
}

/// ibnetdiscover whose GUIDs the author hid (`"S-7c12<redacted>"`,
/// `(a1b2<redacted>)`) and ended with a worded elision (`...omitted`):
/// the node and its port lines are read, the GUIDs unknown, and the
/// listing is partial (IN001 at the marker), with no line unread. Before,
/// the node header was unread, every port line lacked its node, and the
/// marker was one more unread line. Each worded marker is an elision.
#[test]
fn redacted_guids_and_a_worded_elision_leave_a_partial_listing_read() {
    let listing = "```console\nroot@lab-h20-n41:/# ibnetdiscover\n#\n\
# Topology file: generated on Tue Mar  4 08:12:40 2025\n#\n# Initiated from node <redacted> port <redacted>\n\n\
vendid=0x2c9\ndevid=0xd2f2\nsysimgguid=0x7c12<redacted>\nswitchguid=0x7c12<redacted>(7c12<redacted>)\n\
Switch\t65 \"S-7c12<redacted>\"\t\t# \"MF0;lab-leaf-07:MQM9700/U1\" enhanced port 0 lid 3 lmc 0\n\
[1]\t\"H-a1b2<redacted>\"[1](a1b2<redacted>) \t\t# \"lab-n41 mlx5_4\" lid 31 2xNDR\n\
[2]\t\"H-5e0f<redacted>\"[1](5e0f<redacted>) \t\t# \"lab-n42 mlx5_4\" lid 36 2xNDR\n\
[5]\t\"H-5e0f<redacted>\"[1](5e0f<redacted>) \t\t# \"lab-n45 mlx5_4\" lid 19 2xNDR\n";
    for marker in [
        "...omitted",
        "... (omitted)",
        "(snip)",
        "<snip>",
        "[truncated]",
        "...省略...",
        "… 120 more lines",
    ] {
        let text = format!("{listing}{marker}\n```\n");
        let d = doc(&text);
        let net = sections_of(&d, Kind::Ibnetdiscover);
        assert_eq!(net.len(), 1, "{marker}: {:#?}", d.sections);
        assert!(
            net[0].warnings.is_empty(),
            "{marker}: {:?}",
            net[0].warnings
        );
        match &net[0].data {
            fabricscope::SectionData::Ibnetdiscover(n) => {
                assert_eq!(n.nodes.len(), 1, "{marker}");
                assert_eq!(n.nodes[0].guid, None, "{marker}");
                let lids: Vec<Option<u32>> = n
                    .ports
                    .iter()
                    .map(|p| p.remote.as_ref().and_then(|r| r.lid))
                    .collect();
                assert_eq!(lids, [Some(31), Some(36), Some(19)], "{marker}");
            }
            other => panic!("{other:?}"),
        }
        let r = analyze(&[d], &Default::default());
        assert!(
            of(&r, "IN002").is_empty(),
            "{marker}: {:#?}",
            of(&r, "IN002")
        );
        let cut = of(&r, "IN001");
        assert_eq!(cut.len(), 1, "{marker}: {:#?}", r.findings);
        assert_eq!(cut[0].evidence[0].span.first_line, 16, "{marker}");
        assert!(fired(&r, Severity::Warning).is_empty(), "{marker}");
    }
}

/// A mail archive's flattened cexec (C3) paste: `ibv_devinfo on the
/// nodes:` and `sminfo on the nodes:` are sentences that introduce the
/// listings under the cluster banner, not runs of the tools that printed
/// nothing, and `etc. for the other nodes.` after a paragraph break is the
/// author's. Before, an `sminfo` section with no reply stood at the
/// sentence, under the host of the block above it, and the sentence
/// after the port was an unread line.
#[test]
fn a_sentence_naming_a_tool_before_its_listing_is_no_run_of_it() {
    let text = "the usual checks look fine:\n\nibv_devinfo on the nodes:\n\n\
***************** lab_cluster *****************\n--------- c07---------\n\
hca_id: mthca0\nfw_ver: 1.2.0\nnode_guid: 0002:c902:0031:4a10\nsys_image_guid: 0002:c902:0031:4a13\n\
vendor_id: 0x02c9\nvendor_part_id: 25204\nhw_ver: 0xA0\nboard_id: MT_03B0140001\nphys_port_cnt: 1\n\
port: 1\nstate: PORT_ACTIVE (4)\nmax_mtu: 2048 (4)\nactive_mtu: 2048 (4)\nsm_lid: 4\nport_lid: 9\nport_lmc: 0x00\n\n\
etc. for the other nodes.\n\nsminfo on the nodes:\n\n\
***************** lab_cluster *****************\n--------- c07---------\n\
sminfo: sm lid 4 sm guid 0x2c90200311a07, activity count 1402 priority 0 \nstate 3 SMINFO_MASTER\n\
--------- c08---------\n\
sminfo: sm lid 4 sm guid 0x2c90200311a07, activity count 1403 priority 0 \nstate 3 SMINFO_MASTER\n\n\
but MPI finds no NICs.\n";
    let d = doc(text);
    let sminfo = sections_of(&d, Kind::Sminfo);
    let replies: Vec<(Option<&str>, usize)> = sminfo
        .iter()
        .map(|s| match &s.data {
            fabricscope::SectionData::Sminfo(m) => (s.host.as_deref(), m.replies.len()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        replies,
        [(Some("c07"), 1), (Some("c08"), 1)],
        "{:#?}",
        d.sections
    );
    let devinfo = sections_of(&d, Kind::IbvDevinfo);
    assert_eq!(devinfo.len(), 1, "{:#?}", d.sections);
    assert!(devinfo[0].warnings.is_empty(), "{:?}", devinfo[0].warnings);
    assert_eq!(devinfo[0].host.as_deref(), Some("c07"));
    let r = analyze(&[d], &Default::default());
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn sysfs_counter_files_relative_to_a_prompts_directory_name_its_port() {
    // `grep . *` inside a port's counters directory prints bare file
    // names: the prompt's directory names the device and port.
    let text = "root@gpu07:/sys/class/infiniband/mlx5_2/ports/1/counters# grep . *\n\
                link_downed:0\n\
                port_rcv_errors:0\n\
                symbol_error:25\n\
                root@gpu07:/sys/class/infiniband/mlx5_2/ports/1/counters# head -n 5 *\n\
                ==> link_downed <==\n\
                0\n\
                \n\
                ==> symbol_error <==\n\
                31\n";
    let d = doc(text);
    let sections = sections_of(&d, Kind::SysfsCounters);
    assert_eq!(sections.len(), 2, "{:?}", d.sections);
    for s in &sections {
        assert_eq!(s.host.as_deref(), Some("gpu07"));
        let fabricscope::parse::SectionData::SysfsCounters(p) = &s.data else {
            panic!("{:?}", s.data)
        };
        let b = &p.blocks[0];
        assert_eq!((b.port_id.as_str(), b.port), ("mlx5_2", Some(1)));
        assert!(b.partial.is_none(), "{:?}", b.partial);
    }
    // `==> name <==` of a counter file is the value's banner, not a file
    // header: both snapshots are judged, and the count is the port's.
    let r = report(text);
    let ib101 = of(&r, "IB101");
    assert_eq!(ib101.len(), 1, "{:?}", r.findings);
    assert!(
        ib101[0].message.contains("mlx5_2 port 1"),
        "{}",
        ib101[0].message
    );
    assert!(of(&r, "IN001").is_empty());
}

#[test]
fn a_comment_between_a_prompt_and_its_output_leaves_the_output_to_the_prompt() {
    // A blog's note under the command (`# 실행 결과`) is no end of output:
    // nothing was printed yet. Before, the prompt became a section of its
    // own with nothing in it (its host "healthy") and the output was an
    // unnamed host's.
    let text = format!(
        "admin@gpu-node-b:~$ ibstat\n# 실행 결과 — 포트 상태\n{}",
        ibstat("0x0c42a10300b1c2d0", "Down", "Polling", 400)
    );
    let d = doc(&text);
    let ibstat = sections_of(&d, Kind::Ibstat);
    assert_eq!(ibstat.len(), 1);
    assert_eq!(ibstat[0].host.as_deref(), Some("gpu-node-b"));
    let r = analyze(&[d], &Default::default());
    let down = of(&r, "IB001");
    assert_eq!(down.len(), 1);
    assert_eq!(down[0].subject.host.as_deref(), Some("gpu-node-b"));
}

#[test]
fn an_ibv_devinfo_device_cut_at_a_field_it_always_fills_is_cut() {
    // `fw_ver:` with nothing after it on the paste's last line: the end
    // of the paste cut it (ibv_devinfo prints a version for every device).
    let text = "hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t28.39.1002\n\
                \tnode_guid:\t\t\tb83f:d203:00a1:b2c0\n\tsys_image_guid:\t\t\tb83f:d203:00a1:b2c0\n\
                \tvendor_id:\t\t\t0x02c9\n\tvendor_part_id:\t\t\t4129\n\thw_ver:\t\t\t\t0x0\n\
                \tboard_id:\t\t\tMT_0000000838\n\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n\
                \t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tmax_mtu:\t\t4096 (5)\n\
                \t\t\tactive_mtu:\t\t4096 (5)\n\t\t\tsm_lid:\t\t\t1\n\t\t\tport_lid:\t\t44\n\
                \t\t\tport_lmc:\t\t0x00\n\t\t\tlink_layer:\t\tInfiniBand\n\n\
                hca_id:\tmlx5_1\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\n";
    let r = report(text);
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:?}", r.findings);
    assert!(cut[0].message.contains("mlx5_1"), "{}", cut[0].message);
}

#[test]
fn an_ibv_devinfo_port_trimmed_before_the_next_device_is_read_in_part() {
    // An author condensing two dual-port cards to their states: `...`
    // for the lines left out, and the second port of the first card
    // stops after `state:` with the next `hca_id:` right under it.
    // ibv_devinfo prints every port field for every port, so what that
    // port lacks (its link layer too) is unknown, as for the same port
    // of the last card, which the paste ends in.
    let text = "we have 2 HCAs, 2 ports on each:\n```\n$ibv_devinfo\nhca_id: mlx5_2\n...\n\
                \x20       vendor_id:                      0x02c9\n\
                \x20       vendor_part_id:                 4115\n\
                \x20       phys_port_cnt:                  2\n\
                \x20       Device ports:\n\
                \x20               port:   1\n\
                \x20                       state:                  PORT_ACTIVE (4)\n\
                ...\n\
                \x20               port:   2\n\
                \x20                       state:                  PORT_DOWN (1)\n\
                hca_id: mlx4_1\n...\n\
                \x20       vendor_id:                      0x02c9\n\
                \x20       vendor_part_id:                 4103\n\
                \x20       phys_port_cnt:                  2\n\
                \x20       Device ports:\n\
                \x20               port:   1\n\
                \x20                       state:                  PORT_ACTIVE (4)\n\
                ...\n\
                \x20               port:   2\n\
                \x20                       state:                  PORT_DOWN (1)\n\
                ...\n```\n";
    let r = report(text);
    let down = of(&r, "IB001");
    assert_eq!(down.len(), 2, "{:?}", r.findings);
    for f in &down {
        assert_eq!(f.severity, Severity::Warning, "{}", f.message);
        assert!(f.message.contains("before its Link layer"), "{}", f.message);
    }
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:?}", r.findings);
    // Both ports of each card were trimmed (port 1 at a `...`): neither
    // card's ports are whole.
    for card in ["mlx5_2", "mlx4_1"] {
        assert!(cut[0].message.contains(card), "{}", cut[0].message);
    }
    // A port whose block shows its last field is whole, wherever it is.
    let whole = "hca_id:\tmlx5_0\n\tphys_port_cnt:\t\t\t2\n\t\tport:\t1\n\
                 \t\t\tstate:\t\t\tPORT_DOWN (1)\n\t\t\tmax_mtu:\t\t4096 (5)\n\
                 \t\t\tactive_mtu:\t\t4096 (5)\n\t\t\tsm_lid:\t\t\t0\n\t\t\tport_lid:\t\t65535\n\
                 \t\t\tport_lmc:\t\t0x00\n\t\t\tlink_layer:\t\tInfiniBand\n\n\t\tport:\t2\n\
                 \t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tmax_mtu:\t\t4096 (5)\n\
                 \t\t\tactive_mtu:\t\t4096 (5)\n\t\t\tsm_lid:\t\t\t1\n\t\t\tport_lid:\t\t7\n\
                 \t\t\tport_lmc:\t\t0x00\n\t\t\tlink_layer:\t\tInfiniBand\n";
    let r = report(whole);
    let down = of(&r, "IB001");
    assert_eq!(down.len(), 1, "{:?}", r.findings);
    assert!(
        !down[0].message.contains("Link layer"),
        "{}",
        down[0].message
    );
    assert!(of(&r, "IN001").is_empty(), "{:?}", r.findings);
}

#[test]
fn ibnetdiscover_grepped_for_a_guid_is_one_output_from_its_key_line() {
    // `ibnetdiscover | grep <guid>` keeps the node's `switchguid=` line
    // and its header (tabs lost): one filtered output, not a `0 node(s)`
    // output of the key line and another of the header.
    let text = "[root@ops04 ~]# ibnetdiscover | grep 7cfe900300a1b2c0\n\
                switchguid=0x7cfe900300a1b2c0(7cfe900300a1b2c0)\n\
                Switch 36 \"S-7cfe900300a1b2c0\" # \"MF0;leaf-3:MSB7700/U1\" enhanced port 0 lid 9 lmc 0\n\
                [root@ops04 ~]# sminfo\n\
                sminfo: sm lid 9 sm guid 0x7cfe900300a1b2c0, activity count 4410 priority 15 state 3 SMINFO_MASTER\n";
    let d = doc(text);
    let net = sections_of(&d, Kind::Ibnetdiscover);
    assert_eq!(net.len(), 1, "{:#?}", d.sections);
    assert_eq!((net[0].span.first_line, net[0].span.last_line), (1, 3));
    match &net[0].data {
        fabricscope::SectionData::Ibnetdiscover(n) => assert_eq!(n.nodes.len(), 1),
        other => panic!("{other:?}"),
    }
    let r = report(text);
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:?}", r.findings);
    assert_eq!(cut[0].evidence.len(), 1, "{:?}", cut[0].evidence);
}

#[test]
fn node_lists_of_ibswitches_ibhosts_and_ibnetdiscover_l_are_read_as_nodes_without_links() {
    // ibswitches, ibhosts and `ibnetdiscover -l` print one line per node
    // and no links: read as the fabric's nodes, with nothing to say of
    // its cables (an adapter list is not a fabric that found nothing).
    let text = "* 查看当前组网中的所有 IB 交换机设备\n\n```bash\n#ibswitches\n\
                Switch\t: 0x7cfe900300c1d2e0 ports 36 \"MF0;ib-sw07:SX6036/U1\" enhanced port 0 lid 14 lmc 0\n\
                Switch\t: 0x0002c90200413a10 ports 36 \"SwitchX -  Mellanox Technologies\" base port 0 lid 3 lmc 0\n\
                ```\n\n```bash\n#ibhosts\n\
                Ca\t: 0x7cfe900300a51b40 ports 2 \"cn17 HCA-1\"\n\
                Ca\t: 0x0002c90300221e70 ports 1 \"cn18 HCA-1\"\n\
                ```\n\n$ ibnetdiscover -l\n\
                Switch\t : 0x7cfe900300c1d2e0 ports 36 devid 0xc738 vendid 0x2c9 \"MF0;ib-sw07:SX6036/U1\"\n\
                Ca\t : 0x7cfe900300a51b40 ports 2 devid 0x1011 vendid 0x2c9 \"cn17 HCA-1\"\n";
    let d = doc(text);
    let net = sections_of(&d, Kind::Ibnetdiscover);
    assert_eq!(net.len(), 3, "{:#?}", d.sections);
    let nodes: Vec<usize> = net
        .iter()
        .map(|s| match &s.data {
            fabricscope::SectionData::Ibnetdiscover(n) => {
                assert!(s.warnings.is_empty(), "{:?}", s.warnings);
                n.nodes.len()
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(nodes, [2, 2, 2]);
    match &net[0].data {
        fabricscope::SectionData::Ibnetdiscover(n) => {
            assert_eq!(n.nodes[0].lid, Some(14));
            assert_eq!(n.nodes[0].port_count, 36);
            assert_eq!(
                n.nodes[1].desc.as_deref(),
                Some("SwitchX -  Mellanox Technologies")
            );
        }
        other => panic!("{other:?}"),
    }
    let r = report(text);
    assert!(fired(&r, Severity::Info).is_empty(), "{:?}", r.findings);
}

#[test]
fn output_a_command_filtered_is_partial_and_a_piped_bare_command_heads_its_output() {
    // `iblinkinfo | grep Up` shows only the Up links: the others are not
    // in the paste, so "healthy" would conclude from what is not there.
    let text = "[root@n07 ~]# iblinkinfo | grep Up\n\
                \x20     0xec0d9a03003d62be      4    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       2   17[  ] \"MF0;SB7700:MSB7700/U1\" ( )\n\
                \x20          2   17[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       4    1[  ] \"n07 HCA-1\" ( )\n";
    let r = report(text);
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:?}", r.findings);
    assert!(
        cut[0].message.contains("`grep Up` left out"),
        "{}",
        cut[0].message
    );
    // A bare command line piped into a filter heads its output and is
    // read for the hint: a two-field `-q` fragment is read as `-q`.
    let fabric = "nvidia-smi -q -i 0 | grep -A 2 -i Fabric\n\nFabric\n    State                             : In Progress\n    Status                            : N/A\n";
    let d = doc(fabric);
    assert_eq!(sections_of(&d, Kind::SmiQuery).len(), 1, "{:?}", d.sections);
}

#[test]
fn nvidia_smi_q_cut_inside_its_last_key_is_cut() {
    let text =
        "[gpu6001 ~]# nvidia-smi -q -d PERFORMANCE\n\n==============NVSMI LOG==============\n\n\
                Timestamp                                 : Tue Jan 13 09:12:44 2026\n\
                Driver Version                            : 580.95.05\n\
                CUDA Version                              : 13.0\n\n\
                Attached GPUs                             : 2\n\
                GPU 00000000:3B:00.0\n\
                \x20   Performance State                     : P0\n\
                \x20   Clocks Event Reasons\n\
                \x20       Idle                              : Not Active\n\
                \x20       Applications Clocks Setting       : Not Active\n\
                \x20   Spars\n";
    let r = report(text);
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:?}", r.findings);
    assert_eq!(cut[0].subject.host.as_deref(), Some("gpu6001"));
}

#[test]
fn prose_in_other_letters_under_a_command_heading_is_not_a_cut_matrix() {
    // A blog's `## `nvidia-smi topo -m`` heading, a line of Chinese prose,
    // then the matrix in a fence: the prose is no matrix line, so the
    // matrix is not "cut: header missing".
    let text = "## `nvidia-smi topo -m`\n\n\
                下面对比两台机器的 `nvidia-smi topo -m` 输出：\n\n\
                ```bash\n\
                \tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n\
                GPU0\t X \tNV12\t0-31\t0\t\tN/A\n\
                GPU1\tNV12\t X \t0-31\t0\t\tN/A\n\
                ```\n";
    let r = report(text);
    assert!(of(&r, "IN001").is_empty(), "{:?}", r.findings);
    assert!(of(&r, "IN002").is_empty(), "{:?}", r.findings);
    let d = doc(text);
    assert_eq!(
        sections_of(&d, Kind::TopoMatrix).len(),
        1,
        "{:?}",
        d.sections
    );
}

#[test]
fn a_watch_header_under_its_prompt_is_the_time_not_a_csv_row() {
    let text = "ops@gpu9:~$ watch -n 5 nvidia-smi --query-gpu=index,temperature.gpu,power.draw --format=csv\n\
                Every 5.0s: nvidia-smi --query-gpu=index,temperature.gpu,power.draw --format=csv      gpu9: Mon Mar  2 11:04:09 2026\n\n\
                index, temperature.gpu, power.draw [W]\n\
                0, 61, 402.10 W\n\
                1, 63, 398.75 W\n";
    let d = doc(text);
    assert_eq!(sections_of(&d, Kind::Date).len(), 1, "{:?}", d.sections);
    let csv = sections_of(&d, Kind::SmiCsv);
    assert_eq!(csv.len(), 1, "{:?}", d.sections);
    assert_eq!(csv[0].span.first_line, 4, "{:?}", csv[0].span);
    let r = report(text);
    assert!(of(&r, "IN002").is_empty(), "{:?}", r.findings);
}

#[test]
fn a_tool_the_shell_did_not_find_never_ran_and_is_said_once() {
    // Ubuntu's command-not-found handler and bash's own line: the tools
    // never ran. Their lines are no unread output of them, and the host is
    // not "healthy" on their account.
    let text = "ops@gpu9:~$ ibstat\n\
                Command 'ibstat' not found, but can be installed with:\n\n\
                sudo apt install infiniband-diags\n\n\
                ops@gpu9:~$ ibv_devinfo\n\
                -bash: ibv_devinfo: command not found\n\
                ops@gpu9:~$ mlxfwmanager\n\
                mlxfwmanager: command not found\n";
    let r = report(text);
    let failed = of(&r, "IN003");
    assert_eq!(failed.len(), 2, "{:?}", r.findings);
    assert!(
        failed.iter().all(|f| f.message.contains("not installed")),
        "{failed:?}"
    );
    assert!(
        failed
            .iter()
            .all(|f| f.subject.host.as_deref() == Some("gpu9")),
        "{failed:?}"
    );
    assert!(of(&r, "IN002").is_empty(), "{:?}", r.findings);
}

/// An ibv_devinfo paste that begins inside a port block: the port's
/// fields come before any `hca_id:` or `port:` line. Before, they were
/// unrecognised lines and nothing said the paste was cut. The port names
/// neither its device nor its number, so it is said to be cut at the top,
/// with its state (a Down one is not lost), and never judged or paired
/// with a port of another snapshot.
#[test]
fn an_ibv_devinfo_paste_that_begins_inside_a_port_is_cut_at_the_top() {
    let path = format!(
        "{}/tests/fixtures/wild/deepep55-ibv-devinfo-starts-inside-port.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let r = report(&std::fs::read_to_string(path).unwrap());
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:#?}", r.findings);
    for part in [
        "cut at line 1",
        "the port before the first hca_id (state PORT_ACTIVE (4))",
        "mlx5_7",
    ] {
        assert!(cut[0].message.contains(part), "{}", cut[0].message);
    }
    assert!(cut[0].evidence[0].text.contains("cut at the top"));
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
    assert!(fired(&r, Severity::Warning).is_empty(), "{:#?}", r.findings);

    // A Down port cut at the top, then a whole second snapshot of the
    // host's one port, Active: the Down state is said, not judged, and
    // not taken for the other snapshot's port 1.
    let tail = "\t\t\tstate:\t\t\tPORT_DOWN (1)\n\t\t\tmax_mtu:\t\t4096 (5)\n\
                \t\t\tactive_mtu:\t\t4096 (5)\n\t\t\tsm_lid:\t\t\t0\n\t\t\tport_lid:\t\t0\n\
                \t\t\tport_lmc:\t\t0x00\n\t\t\tlink_layer:\t\tInfiniBand\n";
    let whole = "hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t28.39.2048\n\
                 \tvendor_part_id:\t\t\t4129\n\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n\
                 \t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tsm_lid:\t\t\t3\n\t\t\tport_lid:\t\t61\n\
                 \t\t\tlink_layer:\t\tInfiniBand\n";
    let text = format!(
        "[root@gpu-c7 ~]# ibv_devinfo\n{tail}\n{whole}\n[root@gpu-c7 ~]# ibv_devinfo\n{whole}"
    );
    let d = doc(&text);
    assert!(
        sections_of(&d, Kind::IbvDevinfo).len() >= 2,
        "{:?}",
        d.sections
    );
    let r = report(&text);
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:#?}", r.findings);
    assert!(
        cut[0].message.contains("(state PORT_DOWN (1))"),
        "{}",
        cut[0].message
    );
    assert!(of(&r, "IB001").is_empty(), "{:#?}", r.findings);
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);

    // One port field in prose is not ibv_devinfo.
    let prose =
        "The adapter reports\nlink_layer: InfiniBand\nstate: PORT_ACTIVE (4)\nso the link is up.\n";
    let read_as_devinfo = read(prose, &ReadOptions::default())
        .is_ok_and(|d| !sections_of(&d, Kind::IbvDevinfo).is_empty());
    assert!(!read_as_devinfo);
}

/// A `topo -m` whose NIC columns were cut out of the header, its NIC rows
/// holding a cell per GPU column, and whose CPU Affinity lost its first
/// characters (`-27,56-83`). Before, the NIC rows were unread lines and
/// nothing said the matrix was partial. Now the NIC rows are read (their
/// GPU cells are judged as in a whole matrix), IN001 says the NIC columns
/// are missing, and a CPU list cut at the left is not read as one.
#[test]
fn a_topo_matrix_whose_nic_columns_were_cut_from_the_header_is_read_and_cut() {
    let path = format!(
        "{}/tests/fixtures/wild/llmaction-topo-nic-columns-cut.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap();
    let d = doc(&text);
    let fabricscope::SectionData::TopoMatrix(m) = &d.sections[0].data else {
        panic!("{:?}", d.sections[0].kind);
    };
    assert_eq!(m.nics().count(), 4);
    let nic0 = m.device("mlx5_4").unwrap();
    let gpu0 = m.device("GPU0").unwrap();
    assert_eq!(
        m.cell_between(nic0, gpu0).map(|c| c.value.label()),
        Some("PIX".to_owned())
    );
    assert_eq!(
        gpu0.cpu_affinity, None,
        "a CPU list cut at the left is not read"
    );
    assert_eq!(gpu0.numa_affinity.as_deref(), Some("0"));
    let r = report(&text);
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:#?}", r.findings);
    let evidence: Vec<&str> = cut[0].evidence.iter().map(|e| e.text.as_str()).collect();
    assert!(
        evidence
            .iter()
            .any(|e| e.contains("header columns NIC0, NIC1, NIC2, NIC3")),
        "{evidence:?}"
    );
    assert!(
        evidence
            .iter()
            .any(|e| e.contains("GPU0 row") && e.contains("`-27,56-83` cut at the left")),
        "{evidence:?}"
    );
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
    // PIX/NODE to the NICs of a GPU's socket and SYS to the other's is
    // how the node is built: nothing to report, and the NIC distances
    // were judged, not skipped.
    assert!(
        fired(&r, Severity::Info).iter().all(|id| *id == "IN001"),
        "{:#?}",
        r.findings
    );
    assert!(
        !r.skipped_rules.iter().any(|s| s.rule == "TP003"),
        "{:?}",
        r.skipped_rules
    );

    // A GPU far from every NIC is found as in the whole matrix.
    let whole = "\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\n\
                 GPU0\t X \tNV4\tNV4\tNV4\tPIX\tSYS\t0-15\t0\n\
                 GPU1\tNV4\t X \tNV4\tNV4\tPIX\tSYS\t0-15\t0\n\
                 GPU2\tNV4\tNV4\t X \tNV4\tSYS\tPIX\t16-31\t1\n\
                 GPU3\tNV4\tNV4\tNV4\t X \tSYS\tSYS\t16-31\t1\n\
                 NIC0\tPIX\tPIX\tSYS\tSYS\t X \tSYS\n\
                 NIC1\tSYS\tSYS\tPIX\tSYS\tSYS\t X \n\n\
                 Legend:\n\n  X    = Self\n";
    let cut = "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\n\
               GPU0\t X \tNV4\tNV4\tNV4\t0-15\t0\n\
               GPU1\tNV4\t X \tNV4\tNV4\t0-15\t0\n\
               GPU2\tNV4\tNV4\t X \tNV4\t16-31\t1\n\
               GPU3\tNV4\tNV4\tNV4\t X \t16-31\t1\n\
               NIC0\tPIX\tPIX\tSYS\tSYS\n\
               NIC1\tSYS\tSYS\tPIX\tSYS\n\n\
               Legend:\n\n  X    = Self\n";
    let far = |text: &str| -> Vec<Option<u32>> {
        of(&report(text), "TP003")
            .iter()
            .filter(|f| f.severity >= Severity::Warning)
            .map(|f| f.subject.gpu)
            .collect()
    };
    assert_eq!(far(whole), [Some(3)]);
    assert_eq!(far(cut), far(whole));
    // Without a legend after them, the NIC rows may be cut too: the NIC
    // distances are not judged.
    let unended = cut.split("\n\n").next().unwrap();
    assert!(far(&format!("{unended}\n")).is_empty());
}

/// `ibqueryerrors --data` (or any run) pasted without its closing `##
/// Summary:` line: it prints only some ports, so the ones it did not list
/// are unknown, not clean. Before, such a paste was "healthy: no problems
/// found" though the parser said the summary was missing.
#[test]
fn ibqueryerrors_without_its_summary_is_said_partial() {
    let ports = "$ ibqueryerrors --data -r\n\
                 Data Counters for 0x98039b0300fa1e10 \"gw-07 HCA-1\"\n   \
                 GUID 0x98039b0300fa1e10 port 1: [PortXmitData == 81234 (317.320KB)] \
                 [PortRcvData == 7 (28.000B)]\n       \
                 Link info:    310   1[  ] ==( 4X          14.0625 Gbps Active/  LinkUp)==>  \
                 0x98039b0300fa2000      4   12[  ] \"sw-a IS5030\" ( )\n";
    let r = report(ports);
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:#?}", r.findings);
    assert!(
        cut[0].message.contains("did not list")
            && cut[0].message.contains("cannot be called clean"),
        "{}",
        cut[0].message
    );
    assert_eq!(
        cut[0].evidence[0].span.first_line, 4,
        "{:?}",
        cut[0].evidence
    );
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
    // The same run with its summary: whole, nothing said.
    let whole = format!(
        "{ports}\n## Summary: 30 nodes checked, 0 bad nodes found\n\
         ##          88 ports checked, 0 ports have errors beyond threshold\n"
    );
    let r = report(&whole);
    assert!(of(&r, "IN001").is_empty(), "{:#?}", r.findings);
    // A listed bad port is still judged when the summary is missing.
    let bad = "$ ibqueryerrors\nErrors for 0x7cfe900300a1b2c0 \"leaf-r9\"\n   \
               GUID 0x7cfe900300a1b2c0 port 5: [SymbolErrorCounter == 9120]\n";
    let r = report(bad);
    assert_eq!(of(&r, "IN001").len(), 1, "{:#?}", r.findings);
    assert!(!of(&r, "IB101").is_empty(), "{:#?}", r.findings);
}

/// `nvidia-smi -q -x` cut inside its elements: the tool closes every
/// element it opens, so the paste stopped there and what followed is not
/// judged. Before, the parser warned that elements were not closed and the
/// report said nothing of a cut.
#[test]
fn query_xml_cut_inside_its_elements_is_said_partial() {
    let head = "$ nvidia-smi -q -x\n<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n\
                <driver_version>535.161.08</driver_version>\n<attached_gpus>2</attached_gpus>\n\
                <gpu id=\"00000000:3B:00.0\">\n<product_name>NVIDIA L40S</product_name>\n\
                <temperature>\n<gpu_temp>52 C</gpu_temp>\n";
    let r = report(head);
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:#?}", r.findings);
    assert!(cut[0].message.contains("XML"), "{}", cut[0].message);
    assert_eq!(
        cut[0].evidence[0].span.first_line, 9,
        "{:?}",
        cut[0].evidence
    );
    let whole = format!("{head}</temperature>\n</gpu>\n</nvidia_smi_log>\n");
    let r = report(&whole);
    assert!(of(&r, "IN001").is_empty(), "{:#?}", r.findings);
}

/// The author's notes after (or between) indented tool output: `from
/// n1:` between two hosts' `ibv_devinfo -v`, `Other stuff:` and sentences
/// under the last one. ibv_devinfo, ibstat and ibstatus print no such
/// unindented line after their indented fields, so the notes are not
/// their output: set aside as unrecognised, not unread lines of the tool
/// (IN002). A field of the tool's after the notes is still read, and a
/// line that is no prose stays unread.
#[test]
fn prose_after_indented_tool_output_is_not_the_tools() {
    let device = |port_state: &str| {
        format!(
            "hca_id:\trxe0\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t0.0.0\n\
             \tnode_guid:\t\t\t0a00:27ff:fe11:2233\n\tphys_port_cnt:\t\t\t1\n\
             \t\tport:\t1\n\t\t\tstate:\t\t\t{port_state}\n\t\t\tmax_mtu:\t\t4096 (5)\n\
             \t\t\tactive_mtu:\t\t1024 (3)\n\t\t\tsm_lid:\t\t\t0\n\t\t\tport_lid:\t\t0\n\
             \t\t\tport_lmc:\t\t0x00\n\t\t\tlink_layer:\t\tEthernet\n"
        )
    };
    let text = format!(
        "Device attributes, captured on both VMs:\n\nfrom vm-a:\n{}\nfrom vm-b:\n{}\n\
         Notes:\nsoftroce0 is bound to eth1\nsudo rdma link add softroce0 type rxe netdev eth1\n",
        device("PORT_ACTIVE (4)"),
        device("PORT_ACTIVE (4)")
    );
    let d = doc(&text);
    assert_eq!(
        sections_of(&d, Kind::IbvDevinfo).len(),
        2,
        "{:?}",
        d.sections
    );
    for s in &d.sections {
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    }
    // Line 3 `from vm-a:` and the three notes lines at the end.
    let set_aside: Vec<(usize, usize)> = d
        .unrecognised
        .iter()
        .map(|u| (u.span.first_line, u.span.last_line))
        .collect();
    assert!(set_aside.contains(&(18, 18)), "{set_aside:?}"); // `from vm-b:`
    assert!(set_aside.contains(&(33, 35)), "{set_aside:?}");
    let r = analyze(&[d], &Default::default());
    assert!(of(&r, "IN002").is_empty(), "{:#?}", of(&r, "IN002"));

    // The same under ibstat.
    let text = format!(
        "{}\nOther stuff:\nthe subnet manager runs on the switch\n",
        ibstat("0x98039b0300001111", "Active", "LinkUp", 100)
    );
    let r = report(&text);
    assert!(of(&r, "IN002").is_empty(), "{:#?}", of(&r, "IN002"));

    // A port field after a note is still read (the section goes on), and
    // a line that is no prose stays an unread line of the tool.
    let text = format!(
        "{}then I waited a bit\n\t\t\tphys_state:\t\tDISABLED (3)\nzz 0x44\n",
        device("PORT_DOWN (1)")
    );
    let d = doc(&text);
    let s = sections_of(&d, Kind::IbvDevinfo);
    assert_eq!(s.len(), 1, "{:?}", d.sections);
    let fabricscope::parse::SectionData::IbvDevinfo(info) = &s[0].data else {
        panic!("{:?}", s[0].data)
    };
    let port = &info.devices[0].ports[0];
    assert!(port.phys_state.is_some(), "{port:?}");
    let unread: Vec<usize> = s[0].warnings.iter().map(|w| w.span.first_line).collect();
    assert_eq!(unread, [16], "{:?}", s[0].warnings);
    let r = analyze(&[d], &Default::default());
    assert!(!of(&r, "IB001").is_empty(), "{:#?}", r.findings);
}

/// Notes that name commands in code blocks of their own, without output
/// (`ibstat`, then a fence; `iblinkinfo` then the next command): each names
/// a command, it shows no run. Before, each became an empty section ("0
/// port(s)"). The same command with its output is read as before, and a
/// prompt (`$ ibstat`) with nothing after it still says the tool printed
/// nothing.
#[test]
fn a_command_named_alone_without_output_is_no_section() {
    let notes = "- check the ports\n\n```\nibstat\n```\n\n- the links\n\n```\niblinkinfo\n```\n\n\
                 ```\nibdev2netdev\nibstatus\n```\n\n```\n$ sminfo\nsminfo: sm lid 12 sm guid \
                 0x98039b0300003333, activity count 9120 priority 15 state 3 SMINFO_MASTER\n```\n";
    let d = doc(notes);
    let kinds: Vec<Kind> = d.sections.iter().map(|s| s.kind).collect();
    assert_eq!(kinds, [Kind::Sminfo], "{:?}", d.sections);
    // Named, then its output after the next command line.
    let text = format!(
        "```\niblinkinfo\nibstat\n{}```\n",
        ibstat("0x98039b0300002222", "Active", "LinkUp", 200)
    );
    let d = doc(&text);
    let kinds: Vec<Kind> = d.sections.iter().map(|s| s.kind).collect();
    assert_eq!(kinds, [Kind::Ibstat], "{:?}", d.sections);
    // A prompt run that printed nothing is still the tool's (empty) run.
    let d = doc("$ ibstat\n$ hostname\ngpu-17\n");
    assert_eq!(sections_of(&d, Kind::Ibstat).len(), 1, "{:?}", d.sections);
}

/// A note's `from gpu07:` before a host's output names that host, as
/// Salt's `gpu07:` does: two machines' ibstat are two hosts, and the port
/// down is the second's.
#[test]
fn a_notes_from_host_line_names_the_host_of_what_follows() {
    let text = format!(
        "from gpu07:\n{}\nfrom gpu08:\n{}",
        ibstat("0x98039b0300004444", "Active", "LinkUp", 200),
        ibstat("0x98039b0300005555", "Down", "Disabled", 10)
    );
    let d = doc(&text);
    let hosts: Vec<Option<&str>> = d.sections.iter().map(|s| s.host.as_deref()).collect();
    assert_eq!(hosts, [Some("gpu07"), Some("gpu08")], "{:?}", d.sections);
    let r = analyze(&[d], &Default::default());
    let down = of(&r, "IB001");
    assert!(!down.is_empty(), "{:#?}", r.findings);
    assert!(
        down.iter()
            .all(|f| f.subject.host.as_deref() == Some("gpu08")),
        "{down:#?}"
    );
}

/// A quote that lost its line breaks ran `nvidia-smi -q`'s fields together
/// on one line: the fields cannot be told apart, so the line is unread
/// (IN002), not a timestamp that is no date or a GPU count of "4 GPU …".
#[test]
fn nvidia_smi_q_fields_run_together_on_one_line_are_unread() {
    let text = "> $ nvidia-smi -q -d CLOCK\n> \n> ==============NVSMI LOG==============\n> \n\
                > Timestamp : Mon Mar  3 10:15:00 2025 Driver Version : 550.54.15 CUDA Version : 12.4\n> \n\
                > Attached GPUs : 2 GPU 00000000:17:00.0 Clocks Graphics : 1980 MHz SM : 1980 MHz Memory : 2619 MHz\n";
    let r = report(text);
    let unread = of(&r, "IN002");
    assert_eq!(unread.len(), 1, "{:#?}", r.findings);
    assert!(unread[0].message.starts_with("2 lines of"), "{:#?}", unread);
    let d = doc(text);
    let q = sections_of(&d, Kind::SmiQuery);
    assert_eq!(q.len(), 1, "{:?}", d.sections);
    assert!(
        q[0].warnings
            .iter()
            .all(|w| !w.message.contains("not a date")),
        "{:?}",
        q[0].warnings
    );
    // One field per line, as nvidia-smi prints it, is read.
    let whole = "==============NVSMI LOG==============\n\nTimestamp                                 : Mon Mar  3 10:15:00 2025\nDriver Version                            : 550.54.15\nCUDA Version                              : 12.4\n\nAttached GPUs                             : 1\n";
    assert!(of(&report(whole), "IN002").is_empty());
}

/// A page's heading naming a tool (`## ibv_devinfo`) over a transcript of
/// its own prompts is no run of that tool: no empty ibv_devinfo section
/// (and no host of its own). A collection script's label with nothing
/// under it, then the next label, is still the tool's run that printed
/// nothing.
#[test]
fn a_heading_over_a_transcript_is_no_empty_run() {
    let text = "## ibv_devinfo\n\n```\nroot@gn05:~# rdma link\nlink mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ib0\n```\n";
    let d = doc(text);
    let kinds: Vec<Kind> = d.sections.iter().map(|s| s.kind).collect();
    assert_eq!(kinds, [Kind::RdmaLink], "{:?}", d.sections);
    assert_eq!(report(text).hosts, 1);
    let dump = format!(
        "### ibstat\n### ibstatus\n{}",
        "Infiniband device 'mlx5_0' port 1 status:\n\tdefault gid:\t fe80:0000:0000:0000:0c42:a103:0065:1234\n\tbase lid:\t 0x5\n\tsm lid:\t\t 0x1\n\tstate:\t\t 4: ACTIVE\n\tphys state:\t 5: LinkUp\n\trate:\t\t 200 Gb/sec (4X HDR)\n\tlink_layer:\t InfiniBand\n"
    );
    let d = doc(&dump);
    let kinds: Vec<Kind> = d.sections.iter().map(|s| s.kind).collect();
    assert_eq!(kinds, [Kind::Ibstat, Kind::Ibstatus], "{:?}", d.sections);
}

/// A blog's trimmed `ibstat` (no `CA type`, the port's block cut to two
/// fields) with a mark after the link layer (`Ethernet  ❌`) and the
/// author's prose under it: the port is a RoCE port down (a warning, not
/// an InfiniBand port's critical), and the prose is set aside, not unread
/// ibstat lines.
#[test]
fn a_trimmed_ibstat_with_a_marked_link_layer_and_prose_under_it() {
    let text = "$ ibstat\nCA 'mlx4_1'\n    Port 1:\n        State: Down\n        Link layer: Ethernet  ❌\n\n\
                The ports were stuck in Ethernet mode after the update.\n\nChecking the firmware next:\n";
    let r = report(text);
    let down = of(&r, "IB001");
    assert_eq!(down.len(), 1, "{:#?}", r.findings);
    assert_eq!(down[0].severity, Severity::Warning, "{:#?}", down);
    assert!(down[0].message.contains("Ethernet"), "{}", down[0].message);
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
    let d = doc(text);
    assert_eq!(d.unrecognised.len(), 2, "{:?}", d.unrecognised);
}

/// One GPU block of `nvidia-smi nvlink` in `mode`'s layout, `links` links.
fn nvlink_block(mode: &str, gpu: u32, links: u32) -> String {
    let mut out = format!(
        "GPU {gpu}: NVIDIA H100 80GB HBM3 (UUID: GPU-5e6f7a8b-1c2d-4e3f-a4b5-c6d7e8f9a0{gpu:02})\n"
    );
    for l in 0..links {
        let line = match mode {
            "-s" => format!("\t Link {l}: 26.562 GB/s\n"),
            "-e" => format!(
                "\t Link {l}: Replay Errors: 0\n\t Link {l}: Recovery Errors: 0\n\t Link {l}: CRC Errors: 0\n"
            ),
            "-c" => format!(
                "\t Link {l}, P2P is supported: true\n\t Link {l}, Access to system memory supported: true\n"
            ),
            _ => format!("\t Link {l}: Data Tx: 1024 KiB\n\t Link {l}: Data Rx: 2048 KiB\n"),
        };
        out.push_str(&line);
    }
    out
}

/// A paste that ends right after (or inside) a GPU header of an
/// `nvidia-smi nvlink` listing, in every mode: that GPU's links are not in
/// the paste. IN001 names its listing, no rule judges it, and the header
/// is the listing's (before, a whole header there was read as a second,
/// `nvidia-smi -L` section, and a header cut before its `)` counted the GPU
/// with no links; either way "healthy" with nothing said).
#[test]
fn an_nvlink_listing_the_paste_ends_at_a_gpu_header_is_cut_there() {
    let header = "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-5e6f7a8b-1c2d-4e3f-a4b5-c6d7e8f9a001)";
    let cut_header = header.trim_end_matches(')');
    for mode in ["-s", "-e", "-c", "-gt d"] {
        for last in [header, cut_header] {
            let text = format!(
                "$ nvidia-smi nvlink {mode}\n{}{last}\n",
                nvlink_block(mode, 0, 18)
            );
            let d = doc(&text);
            let kinds: Vec<Kind> = d.sections.iter().map(|s| s.kind).collect();
            assert_eq!(kinds, [Kind::Nvlink], "{mode} {last}");
            let r = analyze(&[d], &Default::default());
            let cut = of(&r, "IN001");
            assert_eq!(cut.len(), 1, "{mode} {last}: {:#?}", r.findings);
            assert!(
                cut[0].message.contains("GPU 1 link listing"),
                "{mode}: {}",
                cut[0].message
            );
            assert!(of(&r, "IN002").is_empty(), "{mode}: {:#?}", r.findings);
            let judged: Vec<&str> = r
                .findings
                .iter()
                .filter(|f| f.rule != "IN001" && f.subject.gpu == Some(1))
                .map(|f| f.rule)
                .collect();
            assert!(judged.is_empty(), "{mode}: GPU 1 judged by {judged:?}");
            // The same listing with the shell's next prompt after it ran to
            // its end: GPU 1 printed no NVLink lines (a GPU without NVLink).
            for after in [
                "$ \n",
                "$ nvidia-smi topo -m\n\tGPU0\tGPU1\nGPU0\t X \tNV18\nGPU1\tNV18\t X \n",
            ] {
                let r = report(&format!("{text}{after}"));
                assert!(
                    of(&r, "IN001")
                        .iter()
                        .all(|f| !f.message.contains("GPU 1 link")),
                    "{mode} then {after:?}: {:#?}",
                    of(&r, "IN001")
                );
            }
        }
    }
    // A header with nothing under it in the middle of a listing is a GPU
    // without NVLink, printed so by nvidia-smi: whole.
    let middle = format!(
        "{}{header}\n{}",
        nvlink_block("-e", 0, 18),
        nvlink_block("-e", 2, 18)
    );
    assert!(of(&report(&middle), "IN001").is_empty());
    // Headers alone (`-cBridge`): nothing is cut.
    let bridge =
        format!("$ nvidia-smi nvlink -cBridge\nGPU 0: NVIDIA H100 NVL (UUID: GPU-a)\n{header}\n");
    assert!(of(&report(&bridge), "IN001").is_empty());
}

/// An `nvidia-smi -L` line that lost the `)` after its (whole) UUID is
/// read; as the input's last line it is where the paste was cut (the GPUs
/// after it are unknown), elsewhere a slip, not an unread line.
#[test]
fn an_smi_list_line_without_its_closing_paren_is_read_and_cut_only_at_the_end() {
    let line = "GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b";
    let r = report(&format!("```\nnvidia-smi -L\n\n{line}\n```\n"));
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:#?}", r.findings);
    assert!(
        cut[0].message.contains("GPUs after GPU 0"),
        "{}",
        cut[0].message
    );
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
    let d = doc(&format!("$ nvidia-smi -L\n{line}\n$ nvidia-smi topo -m\n"));
    let list = sections_of(&d, Kind::SmiList);
    assert_eq!(list.len(), 1);
    let fabricscope::SectionData::SmiList(l) = &list[0].data else {
        panic!("{:?}", list[0].data)
    };
    assert_eq!(
        l.gpus[0].uuid.as_deref(),
        Some("GPU-0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b")
    );
    let r = analyze(&[d], &Default::default());
    assert!(of(&r, "IN001").is_empty(), "{:#?}", r.findings);
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
    // Prose after the fence: the list is not where the paste ends.
    let r = report(&format!(
        "```\nnvidia-smi -L\n{line}\n```\nThe card is not found by CUDA.\n"
    ));
    assert!(
        of(&r, "IN001").is_empty() && of(&r, "IN002").is_empty(),
        "{:#?}",
        r.findings
    );
}

/// `nvidia-smi nvlink -c` lines quoted without their GPU header, in a
/// fence below prose that follows the command's own fence: read as
/// capability output of an unnamed GPU and named by IN001. Before, they
/// were prose, dropped without a word.
#[test]
fn capability_lines_without_their_gpu_header_are_read_and_named() {
    let mut lines = String::new();
    for l in 0..4 {
        for (label, v) in [
            ("P2P is supported", "true"),
            ("Access to system memory supported", "true"),
            ("P2P atomics supported", "true"),
            ("System memory atomics supported", "false"),
            ("SLI is supported", "false"),
            ("Link is supported", "false"),
        ] {
            lines.push_str(&format!("Link {l}, {label}: {v}\n"));
        }
    }
    let text = format!(
        "```\nnvidia-smi nvlink --capabilities -i 1\n```\nexample output\n```\n{lines}```\n"
    );
    let d = doc(&text);
    let nv = sections_of(&d, Kind::Nvlink);
    assert_eq!(nv.len(), 1, "{:?}", d.sections);
    assert_eq!((nv[0].span.first_line, nv[0].span.last_line), (6, 29));
    let fabricscope::SectionData::Nvlink(m) = &nv[0].data else {
        panic!("{:?}", nv[0].data)
    };
    assert_eq!(m.gpus.len(), 1);
    assert!(m.gpus[0].headerless);
    assert_eq!(m.gpus[0].links.len(), 4);
    assert!(d
        .unrecognised
        .iter()
        .all(|u| u.span.last_line < 6 || u.span.first_line > 29));
    let r = analyze(&[d], &Default::default());
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:#?}", r.findings);
    assert!(cut[0].message.contains("unnamed GPU"), "{}", cut[0].message);
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
    // Right under its prompt, the command's `-i 1` says which GPU they
    // are; its product and UUID are still not in the paste.
    let r = report(&format!(
        "$ nvidia-smi nvlink --capabilities -i 1
{lines}"
    ));
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:#?}", r.findings);
    assert!(
        cut[0].message.contains("links of GPU 1"),
        "{}",
        cut[0].message
    );
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
}

/// `grep SymbolErrorCounter` over saved ibqueryerrors output keeps the port
/// lines and drops the `Errors for` headers naming their nodes. The GUID
/// on each line is then all that tells the ports apart: two GUIDs are two
/// ports, whose counts are no growth between snapshots, and each finding
/// names its port by its GUID.
#[test]
fn ibqueryerrors_port_lines_of_two_guids_without_headers_are_two_ports() {
    let text = "$ grep SymbolErrorCounter ibqueryerrors.txt\n\
                GUID 0x0c42a10300bc0101 port 1: [SymbolErrorCounter == 5] [PortXmitWait == 61234567]\n\
                GUID 0x0c42a10300bc0202 port 1: [SymbolErrorCounter == 9] [PortXmitWait == 912345678]\n";
    let r = analyze(
        &[doc(text)],
        &fabricscope::AnalyzeOptions::default().with_interval(60.0),
    );
    assert!(
        r.measurements.counter_rates.is_empty(),
        "two ports read as one port's snapshots: {:?}",
        r.measurements.counter_rates
    );
    let waits = of(&r, "IB109");
    assert_eq!(waits.len(), 2, "{:?}", fired(&r, Severity::Info));
    assert!(
        waits[0].message.starts_with("0x0c42a10300bc0101 port 1:"),
        "{}",
        waits[0].message
    );
    assert!(
        waits[1].message.starts_with("0x0c42a10300bc0202 port 1:"),
        "{}",
        waits[1].message
    );
    assert_ne!(waits[0].subject, waits[1].subject);
    assert!(waits.iter().all(|f| !f.message.contains("grew")));

    // One GUID in two runs is one port read twice: its growth is measured.
    let text = "$ ibqueryerrors | grep SymbolErrorCounter\n\
                GUID 0x0c42a10300bc0101 port 1: [SymbolErrorCounter == 5]\n\
                $ ibqueryerrors | grep SymbolErrorCounter\n\
                GUID 0x0c42a10300bc0101 port 1: [SymbolErrorCounter == 9]\n";
    let r = analyze(
        &[doc(text)],
        &fabricscope::AnalyzeOptions::default().with_interval(60.0),
    );
    let rates = &r.measurements.counter_rates;
    assert_eq!(rates.len(), 1, "{rates:?}");
    assert_eq!(rates[0].increase, Some(4));
}

/// Older infiniband-diags print an unconnected port of `ibnetdiscover -p`
/// with its description unquoted; a paste of that one line is ibnetdiscover
/// output, not "no supported tool".
#[test]
fn an_ibnetdiscover_ports_line_with_an_unquoted_description_is_read() {
    let text = "SW   312 17 0x0008f10400d2c7a0 4x DDR                                   ISR9288 Voltaire\n";
    let d = doc(text);
    let net = sections_of(&d, Kind::Ibnetdiscover);
    assert_eq!(net.len(), 1, "{d:#?}");
    assert!(net[0].warnings.is_empty(), "{:?}", net[0].warnings);
    let fabricscope::SectionData::Ibnetdiscover(n) = &net[0].data else {
        panic!("{:?}", net[0].data)
    };
    assert_eq!(n.ports[0].local.desc.as_deref(), Some("ISR9288 Voltaire"));
    // Prose that starts the same way is not.
    let prose = "SW 312 17 is the port that runs 4x DDR on the ISR9288 Voltaire\n";
    assert!(read(prose, &ReadOptions::default()).is_err());
}

/// `pdsh … | dshbak -c` (and `clush -b`) fold the hosts whose output is
/// the same under one banner, `gpu[01-06]`: that output is each of those
/// hosts'. Six hosts are six, and a fleet rule's majority is one of hosts,
/// not of banners: the seventh host's other firmware is 1 of 7.
#[test]
fn a_folded_host_list_banner_is_each_of_its_hosts() {
    let ca = |fw: &str, lid: u32| {
        format!(
            "CA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tFirmware version: {fw}\n\tHardware version: 0\n\
             \tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n\t\tBase lid: {lid}\n\
             \t\tLMC: 0\n\t\tSM lid: 1\n\t\tLink layer: InfiniBand\n"
        )
    };
    let text = format!(
        "$ pdsh -w gpu[01-07] ibstat | dshbak -c\n----------------\ngpu[01-06]\n----------------\n{}\
         ----------------\ngpu07\n----------------\n{}",
        ca("28.39.1002", 11),
        ca("28.36.1010", 17)
    );
    let d = doc(&text);
    let hosts: Vec<Option<&str>> = d.sections.iter().map(|s| s.host.as_deref()).collect();
    assert_eq!(
        hosts,
        ["gpu01", "gpu02", "gpu03", "gpu04", "gpu05", "gpu06", "gpu07"].map(Some),
        "{:?}",
        d.sections
    );
    let r = report(&text);
    assert_eq!(r.hosts, 7);
    let odd = of(&r, "FL001");
    assert_eq!(odd.len(), 1, "{:#?}", r.findings);
    assert_eq!(odd[0].subject.host.as_deref(), Some("gpu07"));
    assert!(
        odd[0]
            .message
            .contains("6 of the 7 such adapters on 7 hosts"),
        "{}",
        odd[0].message
    );
    // clush -b's banner with its count: the same.
    let clush = text.replace("\ngpu[01-06]\n", "\ngpu[01-06] (6)\n");
    assert_eq!(report(&clush).hosts, 7);
}

/// A banner naming more hosts than the section limit leaves room for is
/// one section under its banner's name: copies count against the limit.
#[test]
fn a_host_list_past_the_section_limit_stays_one_section() {
    let text = "----------------\nn[1-4000]\n----------------\nCA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tLink layer: InfiniBand\n";
    let options = fabricscope::ReadOptions::default().with_max_sections(100);
    let d = fabricscope::read(text, &options).unwrap();
    assert_eq!(d.sections.len(), 1, "{}", d.sections.len());
    assert_eq!(d.sections[0].host.as_deref(), Some("n[1-4000]"));
    assert_eq!(doc(text).sections.len(), 4000);
}

/// ibswinfo with a power supply's status printed without its value (a
/// fixture trimmed by hand, or a register not read): the status is
/// unknown and said unread, never "absent or unpowered (status ERROR)".
/// Its DC power and fan read OK under it.
#[test]
fn an_ibswinfo_status_without_its_value_is_no_alarm() {
    let rule = "-------------------------------------------------";
    let text = format!(
        "=================================================\nMF0;ib-leaf-12:MSB7800/U1\n=================================================\n\
         part number        | MSB7800-ES2F\nserial number      | MT2001X04321\nports              | 36\n\
         GUID               | 0x98039b0300aa7788\nfirmware version   | 11.2010.1204\n{rule}\n\
         PSU0 status        | OK\n     DC power      | OK\n     fan status    | OK\n     power (W)     | 80\n\
         PSU1 status        | \n     DC power      | OK\n     fan status    | OK\n     power (W)     | 77\n{rule}\n\
         fan status         | OK\nfan#1 (rpm)        | 8100\n{rule}\n"
    );
    let r = report(&text);
    assert!(of(&r, "IB009").is_empty(), "{:#?}", r.findings);
    assert_eq!(of(&r, "IN002").len(), 1, "{:#?}", r.findings);
    // An ERROR printed is still an alarm.
    let r = report(&text.replace("PSU1 status        | \n", "PSU1 status        | ERROR\n"));
    assert_eq!(of(&r, "IB009").len(), 1, "{:#?}", r.findings);
}

/// A `topo -m` printed with the short legend of old drivers, which names
/// `NV2 = Connected via NVLink with 2 hops` rather than `NV#`: bridged
/// pairs over NVLink, SYS between them. Before, the missing `NV#` line made
/// it the PCIe-only view (`-mp`), so TP001/TP002 were skipped with "no
/// matrix in the input" although it was read. Now the NVLink cells decide:
/// both rules judge it, and a pair whose bridge is gone is reported.
#[test]
fn a_topo_matrix_with_the_old_short_legend_is_judged_for_nvlink() {
    let matrix = |pair: &str| {
        format!(
            "        GPU0    GPU1    GPU2    GPU3    CPU Affinity\n\
             GPU0     X      SYS     NV2     SYS     0-11\n\
             GPU1    SYS      X      SYS     {pair}     12-23\n\
             GPU2    NV2     SYS      X      SYS     0-11\n\
             GPU3    SYS     {pair}     SYS      X      12-23\n\
             \n\
             Legend:\n\
             \x20 X   = Self\n\
             \x20 NV2 = Connected via NVLink with 2 hops\n\
             \x20 SYS = Connected via the PCIe or CPU subsystem\n"
        )
    };
    let healthy = matrix("NV2");
    let d = doc(&healthy);
    let fabricscope::SectionData::TopoMatrix(m) = &d.sections[0].data else {
        panic!("{:?}", d.sections[0].kind);
    };
    assert_eq!(m.gpus().count(), 4);
    assert_eq!(m.pci_only, Some(false), "NVLink cells are not the -mp view");
    let r = report(&healthy);
    for rule in ["TP001", "TP002"] {
        assert!(
            !r.skipped_rules.iter().any(|s| s.rule == rule),
            "{rule} skipped: {:?}",
            r.skipped_rules
        );
    }
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    // GPU1 ↔ GPU3 lost their bridge: each now reaches no peer where the
    // others reach one (info: a card may be installed without a bridge).
    let r = report(&matrix("SYS"));
    let lost = of(&r, "TP001");
    let gpus: Vec<Option<u32>> = lost.iter().map(|f| f.subject.gpu).collect();
    assert_eq!(gpus.len(), 2, "{:#?}", r.findings);
    assert!(
        gpus.contains(&Some(1)) && gpus.contains(&Some(3)),
        "{gpus:?}"
    );
}

/// `ibstat | grep -i -E "state|rate"` as operators paste it: no `CA '…'`
/// or `Port N:` line. The second `State:` begins a second port; that port
/// is Down/Disabled and is judged, named by its place among the
/// header-less ports, never by an adapter or number the paste lacks. The
/// grep dropped `Link layer`: the port may be RoCE, so a warning.
#[test]
fn a_grep_of_ibstat_states_without_headers_finds_the_down_port() {
    let text = "$ ibstat | grep -i -E \"state|rate\"\n\
                \t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 100\n\
                \t\tState: Down\n\t\tPhysical state: Disabled\n\t\tRate: 10\n";
    let d = doc(text);
    let ibstat = sections_of(&d, Kind::Ibstat);
    let fabricscope::SectionData::Ibstat(data) = &ibstat[0].data else {
        panic!("{:?}", ibstat[0].kind);
    };
    assert!(data.cas.is_empty());
    assert_eq!(data.headerless_ports.len(), 2);
    let r = report(text);
    let down = of(&r, "IB001");
    assert_eq!(down.len(), 1, "{:#?}", r.findings);
    assert_eq!(down[0].severity, Severity::Warning);
    assert_eq!(
        down[0].message,
        "header-less port #2 is Down/Disabled: the port is disabled, locally or by the \
         subnet manager (the paste does not show its Link layer: if this is a RoCE port, \
         it is not an InfiniBand fault)"
    );
    let s = &down[0].subject;
    assert_eq!((s.device.as_deref(), s.port), (None, None));
    assert_eq!(s.headerless_port, Some(2));
    assert_eq!(
        (
            down[0].evidence[0].span.first_line,
            down[0].evidence[0].span.last_line
        ),
        (5, 7)
    );
    // Every line read; IN001 says what the grep took away.
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1);
    assert!(
        cut[0]
            .message
            .contains("which adapter and port number the 2 header-less ports (lines 2–7) are"),
        "{}",
        cut[0].message
    );
}

/// The "relevant part" of an `ibstatus` block, without its `Infiniband
/// device '…' port N status:` line: one port, Down/Disabled on
/// InfiniBand, an error. Not critical: the paste shows one port of the
/// host, and the others may be Active.
#[test]
fn an_ibstatus_block_without_its_header_is_judged() {
    let text = "\tdefault gid:\t fe80:0000:0000:0000:0c42:a103:0065:1234\n\
                \tbase lid:\t 0x5\n\tsm lid:\t\t 0x1\n\tstate:\t\t 1: DOWN\n\
                \tphys state:\t 3: Disabled\n\trate:\t\t 40 Gb/sec (4X QDR)\n\
                \tlink_layer:\t InfiniBand\n";
    let r = report(text);
    let down = of(&r, "IB001");
    assert_eq!(down.len(), 1, "{:#?}", r.findings);
    assert_eq!(down[0].severity, Severity::Error);
    assert_eq!(
        down[0].message,
        "header-less port #1 is Down/Disabled: the port is disabled, locally or by the subnet manager"
    );
    assert_eq!(down[0].subject.headerless_port, Some(1));
    assert_eq!(
        down[0].evidence[0].text,
        "ibstatus: State: Down, Physical state: Disabled"
    );
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:#?}", r.findings);
    assert!(
        cut[0].evidence[0]
            .text
            .contains("header missing (missing the `Infiniband device '…' port N status:` line)"),
        "{:?}",
        cut[0].evidence
    );
}

/// Reduced rates in header-less pastes: a grep of states, rates and link
/// layers whose third port runs at half its peers' rate (IB004), and an
/// ibstatus fragment of an Active port trained to one lane (IB006).
#[test]
fn a_reduced_rate_in_a_headerless_paste_is_found() {
    let mut text = "[root@gpu07 ~]# ibstat | grep -E \"State|Rate|Link layer\"\n".to_owned();
    for rate in [400, 400, 200, 400] {
        text.push_str(&format!(
            "\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: {rate}\n\t\tLink layer: InfiniBand\n"
        ));
    }
    let r = report(&text);
    assert_eq!(fired(&r, Severity::Warning), ["IB004"], "{:#?}", r.findings);
    let slow = of(&r, "IB004");
    assert_eq!(
        slow[0].message,
        "header-less port #3 runs at 200 Gb/s while 3 sibling port(s) run at 400 Gb/s"
    );
    assert_eq!(slow[0].subject.host.as_deref(), Some("gpu07"));
    assert_eq!(slow[0].subject.headerless_port, Some(3));
    // Lines 10–13 are the third port's four fields.
    assert_eq!(
        (
            slow[0].evidence[0].span.first_line,
            slow[0].evidence[0].span.last_line
        ),
        (10, 13)
    );
    let one_lane = "\tstate:\t\t 4: ACTIVE\n\tphys state:\t 5: LinkUp\n\
                    \trate:\t\t 25 Gb/sec (1X EDR)\n\tlink_layer:\t InfiniBand\n";
    let r = report(one_lane);
    assert_eq!(fired(&r, Severity::Warning), ["IB006"], "{:#?}", r.findings);
    assert!(
        of(&r, "IB006")[0]
            .message
            .starts_with("header-less port #1 is Active on one lane: its width is printed 1X"),
        "{}",
        of(&r, "IB006")[0].message
    );
}

/// Header-less ports of Active links are healthy for the port rules, and
/// IN001 still says the headers are missing; two header-less ports are
/// never one port read twice (a Down one followed by an Active one is no
/// link that "came up"), nor one of a named adapter; a whole `ibstat` is
/// read and judged as before.
#[test]
fn headerless_ports_are_never_merged_and_a_whole_ibstat_is_unchanged() {
    let active = "$ ibstat | grep -E \"State|Link layer\"\n\
                  \t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tLink layer: InfiniBand\n\
                  \t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tLink layer: InfiniBand\n";
    let r = report(active);
    assert!(fired(&r, Severity::Warning).is_empty(), "{:#?}", r.findings);
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:#?}", r.findings);
    assert!(
        cut[0].evidence[1].text.contains(
            "missing the `CA '…'` and `Port N:` lines, Rate, Base lid, LMC, SM lid, \
             Capability mask, Port GUID)"
        ),
        "{:?}",
        cut[0].evidence
    );
    // Down, then Active: two ports, the first one Down.
    let guid = "0x0c42a10300a1b2c3";
    let text = format!(
        "[root@n1 ~]# ibstat | grep -i state\n\t\tState: Down\n\t\tPhysical state: Polling\n\
         \t\tState: Active\n\t\tPhysical state: LinkUp\n[root@n1 ~]# ibstat\n{}",
        ibstat(guid, "Active", "LinkUp", 200)
    );
    let r = report(&text);
    let down = of(&r, "IB001");
    assert_eq!(down.len(), 1, "{:#?}", r.findings);
    assert_eq!(down[0].subject.headerless_port, Some(1));
    assert_eq!(down[0].severity, Severity::Warning);
    assert!(
        down[0]
            .message
            .starts_with("header-less port #1 is Down/Polling"),
        "{}",
        down[0].message
    );
    // The whole ibstat alone: read and judged as ever.
    let whole = ibstat(guid, "Down", "Polling", 200);
    let d = doc(&whole);
    let fabricscope::SectionData::Ibstat(data) = &d.sections[0].data else {
        panic!("{:?}", d.sections[0].kind);
    };
    assert!(data.headerless_ports.is_empty());
    let r = report(&whole);
    let down = of(&r, "IB001");
    assert_eq!(down.len(), 1, "{:#?}", r.findings);
    assert_eq!(down[0].severity, Severity::Critical);
    let s = &down[0].subject;
    assert_eq!(
        (s.device.as_deref(), s.port, s.headerless_port),
        (Some("mlx5_0"), Some(1), None)
    );
    assert!(
        down[0].message.starts_with("mlx5_0 port 1 is Down/Polling"),
        "{}",
        down[0].message
    );
    assert!(of(&r, "IN001").is_empty(), "{:#?}", r.findings);
}

/// `mlxlink -c | grep` over every device in one shell loop, each device's
/// lines under the `echo "===== … ====="` banner the loop prints: the
/// banners are the loop's own output, so every device stays on the host
/// the prompt names (a banner that starts a new block used to leave the
/// devices after the first on no host: a second, unnamed host), and a
/// link counter over its limit in the filtered lines is judged (it used
/// to be read and never judged).
#[test]
fn a_loops_echo_banners_keep_the_prompts_host_and_its_link_counters_are_judged() {
    let block = |dev: &str, recoveries: u32| {
        format!(
            "===== {dev} counters =====\n\
             Effective Physical Errors          : 0\n\
             Effective Physical BER             : 15E-255\n\
             Raw Physical BER                   : 2E-9\n\
             Link Error Recovery Counter        : {recoveries}\n"
        )
    };
    let text = format!(
        "[ops@gpu-d11 ~]$ for i in 0 1 2; do echo \"===== mlx5_$i counters =====\"; \
         sudo mlxlink -d mlx5_$i -c | grep -e Effective -e Raw -e Recovery; done\n{}{}{}",
        block("mlx5_0", 0),
        block("mlx5_1", 0),
        block("mlx5_2", 23)
    );
    let d = doc(&text);
    let mlxlink = sections_of(&d, Kind::Mlxlink);
    assert_eq!(mlxlink.len(), 3, "{:?}", d.sections);
    for s in &mlxlink {
        assert_eq!(s.host.as_deref(), Some("gpu-d11"), "{s:?}");
    }
    let r = report(&text);
    assert_eq!(r.host_names, ["gpu-d11"], "{:#?}", r.findings);
    let flaps = of(&r, "ML005");
    assert_eq!(flaps.len(), 1, "{:#?}", r.findings);
    assert_eq!(flaps[0].severity, Severity::Warning);
    assert_eq!(flaps[0].subject.host.as_deref(), Some("gpu-d11"));
    assert!(
        flaps[0]
            .message
            .contains("Link Error Recovery Counter = 23 (limit 10)"),
        "{}",
        flaps[0].message
    );
    // The third block's counter line: 1 + 3 × 5 = line 16.
    assert_eq!(flaps[0].evidence[0].span.first_line, 16);
    assert!(of(&r, "ML002").is_empty(), "{:#?}", r.findings);

    // A banner that names a host still moves what follows to that host,
    // and a banner after a closing fence (the prose's) names none.
    let text = "[ops@gpu-d11 ~]$ mlxlink -d mlx5_0 -c | grep -e Effective -e Recovery\n\
                Effective Physical BER             : 15E-255\n\
                Link Error Recovery Counter        : 0\n\
                ===== gpu-d12 =====\n\
                Effective Physical BER             : 15E-255\n\
                Link Error Recovery Counter        : 31\n";
    let d = doc(text);
    let hosts: Vec<Option<&str>> = sections_of(&d, Kind::Mlxlink)
        .iter()
        .map(|s| s.host.as_deref())
        .collect();
    assert_eq!(hosts, [Some("gpu-d11"), Some("gpu-d12")]);
    let text = "```\n[ops@gpu-d11 ~]$ mlxlink -d mlx5_0 -c | grep -e Effective -e Recovery\n\
                Effective Physical BER             : 15E-255\n\
                Link Error Recovery Counter        : 0\n```\n\
                ===== from the other rack =====\n\
                Effective Physical BER             : 15E-255\n\
                Link Error Recovery Counter        : 31\n";
    let d = doc(text);
    let hosts: Vec<Option<&str>> = sections_of(&d, Kind::Mlxlink)
        .iter()
        .map(|s| s.host.as_deref())
        .collect();
    assert_eq!(hosts, [Some("gpu-d11"), None]);
}

/// An ibstat pasted in a mail, then the sign-off, the name and the quoted
/// reply: none of it is the tool's, so none of it is an unread ibstat line
/// (IN002) and the section ends at the last field. A quoted ibstat in the
/// reply stays the tool's (its port is judged), and a field cut right under
/// the last one (no break before it) still marks the paste cut.
#[test]
fn a_mails_sign_off_and_quoted_reply_after_ibstat_are_not_the_tools() {
    let guid = "0x0c42a10300d4e5f6";
    let text = format!(
        "Here is ibstat from the node:\n\n{}\n\nCheers,\nDana Park\n\n\
         > On Fri, Jan 09, 2026 at 14:03:55 +0000, Lee Chan wrote:\n\
         > > Hi,\n> >\n> > can you post the ibstat output?\n",
        ibstat(guid, "Down", "Polling", 200)
    );
    let d = doc(&text);
    let s = sections_of(&d, Kind::Ibstat);
    assert_eq!(s.len(), 1, "{:?}", d.sections);
    // The ibstat is lines 3–19; the rest is the mail's.
    assert_eq!(s[0].span.last_line, 19, "{:?}", s[0].span);
    let r = report(&text);
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
    assert_eq!(of(&r, "IB001").len(), 1, "{:#?}", r.findings);

    // A quoted ibstat in the reply is read and its Down port named.
    let text = format!(
        "{}\n\nThanks,\nDana\n\n> On Fri, Jan 09, 2026 at 14:03:55 +0000, Lee Chan wrote:\n\
         > CA 'mlx5_3'\n>         Port 1:\n>                 State: Down\n\
         >                 Physical state: Polling\n",
        ibstat(guid, "Active", "LinkUp", 200)
    );
    let r = report(&text);
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
    let down = of(&r, "IB001");
    assert_eq!(down.len(), 1, "{:#?}", r.findings);
    assert!(
        down[0].message.starts_with("mlx5_3 port 1"),
        "{}",
        down[0].message
    );

    // A colon-less line right under the last field (no break before it)
    // is no sign-off: it stays in the section and is reported unread.
    let cut =
        ibstat(guid, "Active", "LinkUp", 200).replace("\t\tLink layer: InfiniBand\n", "Link lay\n");
    let r = report(&cut);
    let unread = of(&r, "IN002");
    assert_eq!(unread.len(), 1, "{:#?}", r.findings);
    assert_eq!(unread[0].evidence[0].span.first_line, 17);
}

/// Environment reports print `nvidia-smi topo -m` as one of their fields:
/// ScaleLLM's `GPU topology: ` label takes the place of the header's
/// leading tab on the header line itself, and the report's next fields
/// (`Nvidia driver version: …`, SGLang's `ulimit soft: …`) follow the
/// legend at column 0 with no blank line. The labelled header went
/// unread: a one-GPU matrix was not recognised at all, and a larger one
/// was read as header-less, the paste called cut (IN001, "header
/// missing") though nothing was; and the fields after the legend were
/// glued to the last legend entry's meaning as if it had wrapped, lost
/// without a word. Now the header is read after its label, and the
/// report's fields are set aside as not the tool's.
#[test]
fn a_topo_matrix_labelled_as_a_report_field_is_read_and_the_fields_after_it_are_not_the_tools() {
    let legend = "\nLegend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP \
                  interconnect between NUMA nodes (e.g., QPI/UPI)\n  PIX  = Connection traversing \
                  at most a single PCIe bridge\n  NV#  = Connection traversing a bonded set of # NVLinks\n";
    // Four GPUs, GPU3 without NVLink to any peer: TP001.
    let text = format!(
        "Collecting environment information...\n\
         Is CUDA available: True\n\
         GPU topology: GPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n\
         GPU0\t X \tNV8\tNV8\tSYS\t0-23\t0\t\tN/A\n\
         GPU1\tNV8\t X \tNV8\tSYS\t0-23\t0\t\tN/A\n\
         GPU2\tNV8\tNV8\t X \tSYS\t24-47\t1\t\tN/A\n\
         GPU3\tSYS\tSYS\tSYS\t X \t24-47\t1\t\tN/A\n\
         {legend}\
         Nvidia driver version: 560.35.03\n\
         ulimit soft: 65535\n\
         CPU:\n"
    );
    let d = doc(&text);
    let topo = sections_of(&d, Kind::TopoMatrix);
    assert_eq!(topo.len(), 1, "{:?}", d.unrecognised);
    assert_eq!(
        (topo[0].span.first_line, topo[0].span.last_line),
        (3, 14),
        "the matrix runs from its labelled header to the legend's last entry"
    );
    assert!(topo[0].warnings.is_empty(), "{:?}", topo[0].warnings);
    let fabricscope::SectionData::TopoMatrix(m) = &topo[0].data else {
        panic!("{:?}", topo[0].kind);
    };
    assert_eq!(m.devices.len(), 4);
    let last = m.legend.last().unwrap();
    assert_eq!(
        (last.symbol.as_str(), last.meaning.as_str()),
        ("NV#", "Connection traversing a bonded set of # NVLinks")
    );
    let aside: Vec<(usize, usize)> = d
        .unrecognised
        .iter()
        .map(|u| (u.span.first_line, u.span.last_line))
        .collect();
    assert!(aside.contains(&(15, 17)), "{aside:?}");
    let r = analyze(&[d], &Default::default());
    let lone = of(&r, "TP001");
    assert_eq!(lone.len(), 1, "{:#?}", r.findings);
    assert_eq!(lone[0].subject.gpu, Some(3), "{:?}", lone[0].subject);
    assert!(of(&r, "IN001").is_empty(), "{:#?}", of(&r, "IN001"));
    assert!(of(&r, "IN002").is_empty(), "{:#?}", of(&r, "IN002"));

    // The one-GPU matrix of the same report, space-aligned: recognised.
    let d = doc("GPU models and configuration: GPU 0: NVIDIA L40S\n\
         GPU topology: GPU0      CPU Affinity    NUMA Affinity   GPU NUMA ID\n\
         GPU0     X      0-31,64-95      0               N/A\n\nLegend:\n\n  X    = Self\n\
         NCCL version: 2.21.5\n");
    let topo = sections_of(&d, Kind::TopoMatrix);
    assert_eq!(topo.len(), 1, "{:?}", d.unrecognised);
    assert_eq!((topo[0].span.first_line, topo[0].span.last_line), (2, 7));

    // A NIC legend whose lines lost their indent is still the matrix's,
    // not a report's `Label: value` field.
    let d = doc("\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\n\
         GPU0\t X \tNV4\tPIX\t0-15\t0\nGPU1\tNV4\t X \tPIX\t0-15\t0\nNIC0\tPIX\tPIX\t X \n\n\
         Legend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n\n\
         NIC Legend:\n\nNIC0: mlx5_0\n");
    let topo = sections_of(&d, Kind::TopoMatrix);
    assert_eq!(topo.len(), 1);
    assert!(d.unrecognised.is_empty(), "{:?}", d.unrecognised);
    let fabricscope::SectionData::TopoMatrix(m) = &topo[0].data else {
        panic!("{:?}", topo[0].kind);
    };
    assert_eq!(m.devices[2].rdma_device.as_deref(), Some("mlx5_0"));
}

/// vLLM's `collect-env` (0.9 and later) heads each part of its report with
/// a banner of three lines, `====…` / `     Environment Variables` /
/// `====…`, and prints the `GPU Topology:` matrix right before one. The
/// banner's lines were read as the matrix's (a rule under a header is a
/// page's, and the title is indented like a legend line): IN002 on every
/// such bug report, three lines "not judged" that were never the tool's.
/// Now a title between two `=` rules is a heading that ends the output
/// above it, and ibswinfo's own banner (its switch's description, then
/// `label | value` lines) is left to ibswinfo.
#[test]
fn a_reports_banner_after_a_topo_matrix_is_a_heading_not_lines_of_the_matrix() {
    let rule = "==============================";
    let text = format!(
        "{rule}\n         vLLM Info\n{rule}\n\
         vLLM Version                 : 0.17.2\n\
         GPU Topology:\n\
         \x20 \tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n\
         GPU0\t X \tNV4\tPIX\t0-15,32-47\t0\t\tN/A\n\
         GPU1\tNV4\t X \tPIX\t0-15,32-47\t0\t\tN/A\n\
         NIC0\tPIX\tPIX\t X \n\n\
         Legend:\n\n  X    = Self\n  PIX  = Connection traversing at most a single PCIe bridge\n\
         \x20 NV#  = Connection traversing a bonded set of # NVLinks\n\n\
         NIC Legend:\n\n  NIC0: mlx5_4\n\n\
         {rule}\n     Environment Variables\n{rule}\n\
         NCCL_CUMEM_ENABLE=0\n\
         CUDA_VISIBLE_DEVICES=0,1\n"
    );
    let d = doc(&text);
    let topo = sections_of(&d, Kind::TopoMatrix);
    assert_eq!(topo.len(), 1, "{:?}", d.unrecognised);
    assert!(topo[0].warnings.is_empty(), "{:?}", topo[0].warnings);
    assert!(
        topo[0].span.last_line < 21,
        "the matrix ends before the banner: {:?}",
        topo[0].span
    );
    let r = analyze(&[d], &Default::default());
    assert!(of(&r, "IN002").is_empty(), "{:#?}", of(&r, "IN002"));
    assert!(of(&r, "IN001").is_empty(), "{:#?}", of(&r, "IN001"));

    // ibswinfo opens with the same kind of banner around its switch's
    // description: that one stays ibswinfo's.
    let ibswinfo = "=================================================\n\
         \x20Quantum Mellanox Technologies\n\
         =================================================\n\
         part number        | MQM8790-HS2F\n\
         serial number      | MT2203T40112\n\
         ports              | 80\n\
         -------------------------------------------------\n\
         temperature (C)    | 41\n\
         max temp (C)       | 44\n";
    let d = doc(ibswinfo);
    let sw = sections_of(&d, Kind::Ibswinfo);
    assert_eq!(sw.len(), 1, "{:?}", d.unrecognised);
    assert_eq!(sw[0].span.first_line, 1);

    // A host's name between two `=` rules heads that host's output, as a
    // `clush -b` banner of dashes does.
    let rule = "==========";
    let text = format!(
        "{rule}\ngpu-c07\n{rule}\n{}{rule}\ngpu-c08\n{rule}\n{}",
        ibstat("0x0c42a10300b1c2d4", "Active", "LinkUp", 400),
        ibstat("0x0c42a10300b1c3e8", "Down", "Polling", 400)
    );
    let r = report(&text);
    assert_eq!(r.host_names, ["gpu-c07", "gpu-c08"], "{:#?}", r.findings);
}

/// A page that collapsed every run of white space (a scraped blog, a
/// chat tool) leaves a `topo -m` with no indented line and no blank one,
/// and its prose goes on right under the legend. The author's sentence
/// there was read as an unread line of the matrix (IN002), because prose
/// after a section was only set aside after its indented lines or a
/// paragraph break; nvidia-smi prints no such line, so for a matrix the
/// line itself is enough.
#[test]
fn prose_right_under_a_flattened_topo_legend_is_not_the_matrixs() {
    let text = "Here is the layout of the box we benchmarked on.\n\
         GPU0 GPU1 GPU2 GPU3 mlx5_0 mlx5_1 CPU Affinity\n\
         GPU0 X NV2 NV1 SYS PIX SYS 0-19,40-59\n\
         GPU1 NV2 X SYS NV1 PIX SYS 0-19,40-59\n\
         GPU2 NV1 SYS X NV2 SYS PIX 20-39,60-79\n\
         GPU3 SYS NV1 NV2 X SYS PIX 20-39,60-79\n\
         mlx5_0 PIX PIX SYS SYS X SYS\n\
         mlx5_1 SYS SYS PIX PIX SYS X\n\
         Legend:\n\
         X = Self\n\
         SYS = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n\
         PIX = Connection traversing a single PCIe switch\n\
         NV# = Connection traversing a bonded set of # NVLinks\n\
         Read on for how the scheduler places its ranks on these links.\n";
    let d = doc(text);
    let topo = sections_of(&d, Kind::TopoMatrix);
    assert_eq!(topo.len(), 1, "{:?}", d.unrecognised);
    assert!(topo[0].warnings.is_empty(), "{:?}", topo[0].warnings);
    assert_eq!(topo[0].span.last_line, 13);
    let r = analyze(&[d], &Default::default());
    assert!(of(&r, "IN002").is_empty(), "{:#?}", of(&r, "IN002"));
}

/// `dcgmi dmon -l` prints the catalogue of fields dmon can watch (long
/// name, short name, field id), not a reading. Under its command line it
/// was taken for dmon's output: every line an unread line with "no monitor
/// header" (IN002), and the advice to paste the whole output. It is no
/// output to judge; a `dcgmi dmon -e …` reading after it still is.
#[test]
fn the_field_list_of_dcgmi_dmon_is_no_reading() {
    let list = "$ dcgmi dmon -l\n\
                ___________________________________________________________________\n\
                \x20                    Long Name          Short Name       Field Id\n\
                ___________________________________________________________________\n\
                pcie_link_gen                        PCILG            237\n\
                nvlink_bandwidth_total               NBWLT            449\n\
                nvlink_flit_crc_error_count_l10     NFEL10            460\n";
    // Alone, the paste holds no output of a tool to judge.
    assert!(read(list, &ReadOptions::default()).is_err());

    let text = format!(
        "{list}$ dcgmi dmon -e 1011,1012 -c 1\n\
         #Entity   NVLTX                       NVLRX\n\
         ID\n\
         GPU 0     1048576                     2097152\n"
    );
    let d = doc(&text);
    let dmon = sections_of(&d, Kind::DcgmiDmon);
    assert_eq!(dmon.len(), 1, "{:?}", d.sections);
    assert_eq!(dmon[0].span.first_line, 8, "from its prompt");
    assert!(dmon[0].warnings.is_empty(), "{:?}", dmon[0].warnings);
}

/// `ibdev2netdev` names the interface on each RDMA port: `ib1` is the
/// kernel's IPoIB interface, so the port under it is InfiniBand, and
/// `ens3f0np0` an Ethernet one. An ibstat block cut before its `Link
/// layer` is then judged as the port it is, with the line that told it
/// as evidence; without that line it stays "may be RoCE".
#[test]
fn ibdev2netdev_tells_the_link_layer_a_cut_ibstat_block_lost() {
    let netdev = "$ ibdev2netdev\n\
                  mlx5_0 port 1 ==> ib0 (Up)\n\
                  mlx5_1 port 1 ==> ib1 (Down)\n\
                  mlx5_2 port 1 ==> ens3f0np0 (Down)\n";
    let cut = |ca: &str| {
        format!(
            "$ ibstat {ca}\nCA '{ca}'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tFirmware version: 28.39.1002\n\
             \tPort 1:\n\t\tState: Down\n\t\tPhysical state: Disabled\n\t\tRate: 10\n\t\tBase lid: 65535\n\
             \t\tLMC: 0\n\t\tSM lid: 0\n"
        )
    };
    let active = "$ ibstat mlx5_0\nCA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 1\n\
                  \tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n\
                  \t\tBase lid: 7\n\t\tSM lid: 1\n\t\tLink layer: InfiniBand\n";

    // Without ibdev2netdev: a warning that says the link layer is unknown.
    let alone = report(&format!("{active}{}", cut("mlx5_1")));
    let ib001 = of(&alone, "IB001");
    assert_eq!(ib001.len(), 1, "{ib001:#?}");
    assert_eq!(ib001[0].severity, Severity::Warning);
    assert!(
        ib001[0].message.contains("stops before its Link layer"),
        "{ib001:#?}"
    );

    // With it: an InfiniBand port disabled, an error, and the line as evidence.
    let told = report(&format!("{netdev}{active}{}", cut("mlx5_1")));
    let ib001 = of(&told, "IB001");
    assert_eq!(ib001.len(), 1, "{ib001:#?}");
    assert_eq!(ib001[0].severity, Severity::Error, "{ib001:#?}");
    assert!(!ib001[0].message.contains("Link layer"), "{ib001:#?}");
    let evidence: Vec<&str> = ib001[0].evidence.iter().map(|e| e.text.as_str()).collect();
    assert!(
        evidence
            .iter()
            .any(|e| e.starts_with("ibdev2netdev: mlx5_1 port 1 ==> ib1 (an IPoIB interface")),
        "{evidence:?}"
    );
    assert!(
        ib001[0].evidence.iter().any(|e| e.span.first_line == 3),
        "{ib001:#?}"
    );

    // An Ethernet interface: a RoCE port, never an InfiniBand fault.
    let roce = report(&format!("{netdev}{active}{}", cut("mlx5_2")));
    assert!(
        of(&roce, "IB001")
            .iter()
            .all(|f| f.severity < Severity::Error
                && !f.message.contains("stops before its Link layer")),
        "{:#?}",
        of(&roce, "IB001")
    );
}

/// `mlxlink -c | grep -E "State|…|BER"` keeps records of several sections
/// and none of their titles: every record the filter kept is read and
/// judged (the port's state too, not only the counters that name mlxlink),
/// and IN001 says the rest of the output is what was not judged.
#[test]
fn a_grep_of_mlxlink_reads_every_record_it_kept() {
    let text = "$ mlxlink -d mlx5_0 -c | grep -E \"State|Speed|Counter|BER\"\n\
                State                              : Polling\n\
                Physical state                     : Polling\n\
                Speed                              : IB-NDR\n\
                Symbol BER                         : 15E-255\n\
                Effective Physical Errors          : 0\n\
                Effective Physical BER             : 15E-255\n\
                Raw Physical BER                   : 3E-12\n\
                Link Down Counter                  : 23\n";
    let r = report(text);
    assert!(
        !r.findings.iter().any(|f| f.rule == "IN002"),
        "{:#?}",
        of(&r, "IN002")
    );
    let ml001 = of(&r, "ML001");
    assert_eq!(ml001.len(), 1, "{:#?}", r.findings);
    assert!(ml001[0].message.contains("Polling"), "{ml001:#?}");
    assert_eq!(of(&r, "ML005").len(), 1, "{:#?}", r.findings);
    let in001 = of(&r, "IN001");
    assert_eq!(in001.len(), 1, "{:#?}", r.findings);
    assert!(
        in001[0].message.contains("the rest of the mlxlink output"),
        "{in001:#?}"
    );
}

/// ibdiagnet's `-E-`/`-W-` check lines are its report on the fabric, not
/// a firmware tool's failure: a link below the speed both ends enable is
/// IB006's `warning`, as from ibportstate or iblinkinfo, whether
/// ibdiagnet marked it `-E-` or the paste is a bare `grep` of its log
/// with no prompt; a counter that grew during the run is IB116's; the
/// summary table is read, not unread text.
#[test]
fn ibdiagnets_link_and_counter_lines_are_its_findings_not_a_tool_failure() {
    let grep = "-E- Link: S0002c90300f1a2b0/N0002c90300f1a2b0/P3<-->gpu-k02/U1/P1 - Unexpected actual link speed 14 (enable_speed1=\"14 or 25\", enable_speed2=\"14 or 25\" therefore final speed should be 25)\n\
                -W- Link: gpu-k05/U1/P1<-->S0002c90300f1a2b0/N0002c90300f1a2b0/P6 - Unexpected actual link width 1x (enable_width1=\"1x or 4x\", enable_width2=\"1x or 4x\" therefore final width should be 4x)\n\
                -E- gpu-k07/U1/P1 - \"link_down_counter\" increased during the run (difference value=2,difference allowed threshold=1)\n\
                \n\
                Summary\n\
                -I- Stage                     Warnings   Errors     Comment\n\
                -I- Speed / Width checks      1          1\n\
                -I- PM Counters               0          1\n";
    let d = doc(grep);
    assert_eq!(sections_of(&d, Kind::IbdiagnetLog).len(), 1);
    let r = report(grep);
    let links = of(&r, "IB006");
    assert_eq!(links.len(), 2, "{:?}", r.findings);
    assert!(links.iter().all(|f| f.severity == Severity::Warning));
    assert!(
        links[0].message.contains("should run at 25"),
        "{}",
        links[0].message
    );
    let counters = of(&r, "IB116");
    assert_eq!(counters.len(), 1);
    assert_eq!(counters[0].severity, Severity::Error);
    for quiet in ["IN002", "IN003"] {
        assert!(of(&r, quiet).is_empty(), "{quiet}: {:?}", of(&r, quiet));
    }
}

/// A firmware tool's own `-E-` failure after its output is still the
/// tool's failure (IN003), not an ibdiagnet section.
#[test]
fn a_firmware_tools_error_line_is_still_a_tool_failure() {
    let text = "$ sudo mlxlink -d mlx5_0 -c\n-E- Failed to open device: mlx5_0\n";
    let d = doc(text);
    assert!(sections_of(&d, Kind::IbdiagnetLog).is_empty());
    assert_eq!(of(&report(text), "IN003").len(), 1);
}

/// ibdiagnet's summary alone, counting errors whose lines the paste does
/// not hold: what they said is unknown (IN001 names the stages), never
/// read as a clean fabric; a stage with nothing counted is not named.
#[test]
fn an_ibdiagnet_summary_counting_errors_without_their_lines_is_partial() {
    let text = "$ ibdiagnet\n---------------------------------------------\nSummary\n\
                -I- Stage                     Warnings   Errors     Comment\n\
                -I- Discovery                 0          0\n\
                -I- Speed / Width checks      0          2\n";
    let r = report(text);
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:?}", r.findings);
    assert!(
        cut[0].message.contains("Speed / Width checks"),
        "{}",
        cut[0].message
    );
    assert!(!cut[0].message.contains("Discovery"), "{}", cut[0].message);
    assert!(of(&r, "IN002").is_empty());
}

/// The author's question under an unfenced `topo -m` (after the legend, a
/// blank line, then a sentence), and an NCCL log line pasted under it,
/// were read as the rest of the last legend entry (`NV# = Connection
/// traversing a bonded set of # NVLinks So GPU0 and GPU1 …`), lost
/// without a word. The sentence is the author's, set aside, the NCCL line
/// NCCL's log; a legend line the terminal wrapped is still the entry's,
/// even where it reads as prose.
#[test]
fn prose_under_a_topo_legend_is_the_authors_and_a_wrapped_entry_is_not() {
    let matrix = "$ nvidia-smi topo -m\n\
         \tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n\
         GPU0\t X \tSYS\t0-23\t0\n\
         GPU1\tSYS\t X \t24-47\t1\n\n\
         Legend:\n\n\
         \x20 X    = Self\n\
         \x20 NODE = Connection traversing PCIe as well as the interconnect between PCIe Host\n\
         Bridges within a NUMA node\n\
         \x20 NV#  = Connection traversing a bonded set of # NVLinks\n";
    for tail in [
        "\nSo GPU0 and GPU1 should be on NVLink but show SYS, why?\n",
        "So GPU0 and GPU1 should be on NVLink but show SYS, why?\n",
        "\ngpu1:4113:4160 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct\n",
    ] {
        let text = format!("{matrix}{tail}");
        let d = doc(&text);
        let topo = sections_of(&d, Kind::TopoMatrix);
        assert_eq!(topo.len(), 1, "{tail}");
        let fabricscope::SectionData::TopoMatrix(m) = &topo[0].data else {
            panic!("{:?}", topo[0].kind);
        };
        let meanings: Vec<&str> = m.legend.iter().map(|e| e.meaning.as_str()).collect();
        assert_eq!(
            meanings,
            vec![
                "Self",
                "Connection traversing PCIe as well as the interconnect between PCIe Host \
                 Bridges within a NUMA node",
                "Connection traversing a bonded set of # NVLinks",
            ],
            "{tail}"
        );
        let last = text.lines().count();
        let aside: Vec<(usize, usize)> = d
            .unrecognised
            .iter()
            .map(|u| (u.span.first_line, u.span.last_line))
            .collect();
        // The NCCL line is NCCL's log now, its host the prefix's; the
        // author's sentence is set aside.
        let nccl = sections_of(&d, Kind::NcclLog);
        if tail.contains(" NCCL ") {
            assert!(aside.is_empty(), "{tail}: {aside:?}");
            assert_eq!(nccl.len(), 1, "{tail}");
            assert_eq!(nccl[0].span.first_line, last);
            assert_eq!(nccl[0].host.as_deref(), Some("gpu1"));
        } else {
            assert_eq!(aside, vec![(last, last)], "{tail}");
            assert!(nccl.is_empty(), "{tail}");
        }
        let r = report(&text);
        assert!(of(&r, "IN002").is_empty(), "{tail}: {:#?}", of(&r, "IN002"));
    }
}

/// One ibstat port block cut at `cut` bytes into its `line`-th field
/// line, the paste ending with a line end (an editor or chat tool adds
/// one): what is left of the value is no value.
fn ibstat_cut_in(field: &str, whole: &str, kept: usize) -> String {
    let full = ibstat("0x0c42a10300a1b2c3", "Active", "LinkUp", 200);
    let line = format!("{field}: {whole}\n");
    let at = full.find(&line).unwrap() + field.len() + 2 + kept;
    format!("$ ibstat\n{}\n", &full[..at])
}

/// A last line cut inside its value (`State: Acti`, `Physical state:
/// Lin`, `Rate: 1`): before, `Acti` was read as a state no rule knew and
/// IN001 said only that the fields after it were missing, and `Rate: 1`
/// was a 1 Gb/s port. Now IN001 names the cut field itself, and no rule
/// judges the port on it.
#[test]
fn an_ibstat_value_cut_on_the_last_line_is_the_cut_field() {
    for (field, whole, kept) in [
        ("State", "Active", 4),
        ("Physical state", "LinkUp", 3),
        ("Rate", "200", 1),
        ("State", "Active", 1),
    ] {
        assert_cut_field(&ibstat_cut_in(field, whole, kept), field);
    }
    // A whole value on the last line is read as ever: `Rate: 20` is a
    // rate (2X SDR… and 8X/DDR), though it begins `200`.
    let r = report(&ibstat_cut_in("Rate", "200", 2));
    let said = &of(&r, "IN001")[0].evidence[0].text;
    assert!(said.contains("fields missing"), "{said}");
}

/// The same word in the middle of a block is no cut: the paste goes on.
/// It is not a state either: the line is unread (IN002), the port's
/// other fields are read, and the port is not called Down or unknown.
#[test]
fn a_value_cut_in_the_middle_of_a_block_is_an_unread_line() {
    let whole = ibstat("0x0c42a10300a1b2c3", "Active", "LinkUp", 200);
    let text = format!(
        "$ ibstat\n{}",
        whole.replace("State: Active", "State: Acti")
    );
    let r = report(&text);
    assert!(of(&r, "IN001").is_empty(), "{:#?}", r.findings);
    let unread = of(&r, "IN002");
    assert_eq!(unread.len(), 1, "{:#?}", r.findings);
    assert!(unread[0].evidence[0].text.contains("`State` value `Acti`"));
    assert!(fired(&r, Severity::Warning).is_empty(), "{:#?}", r.findings);
}

/// ibstatus and ibv_devinfo cut inside a state or rate on the last line:
/// the cut field is named, as for ibstat.
#[test]
fn ibstatus_and_ibv_devinfo_values_cut_on_the_last_line_are_the_cut_field() {
    let status = "$ ibstatus\nInfiniband device 'mlx5_0' port 1 status:\n\
                  \tdefault gid:\t fe80:0000:0000:0000:0c42:a103:00a1:b2c3\n\
                  \tbase lid:\t 0x11\n\tsm lid:\t\t 0x1\n";
    let devinfo = "$ ibv_devinfo\nhca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n\
                   \tfw_ver:\t\t\t\t20.36.1010\n\tnode_guid:\t\t\t0c42:a103:00a1:b2c3\n\
                   \tsys_image_guid:\t\t\t0c42:a103:00a1:b2c3\n\tvendor_id:\t\t\t0x02c9\n\
                   \tvendor_part_id:\t\t\t4123\n\thw_ver:\t\t\t\t0x0\n\
                   \tboard_id:\t\t\tMT_0000000223\n\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n";
    for (text, field) in [
        (format!("{status}\tstate:\t\t 1: DO\n"), "state"),
        (
            format!("{status}\tstate:\t\t 4: ACTIVE\n\tphys state:\t 3: Disa\n"),
            "phys state",
        ),
        (
            format!("{status}\tstate:\t\t 4: ACTIVE\n\tphys state:\t 5: LinkUp\n\trate:\t\t 100 Gb/sec (4X ED\n"),
            "rate",
        ),
        (format!("{devinfo}\t\t\tstate:\t\t\tPORT_DO\n"), "state"),
    ] {
        assert_cut_field(&text, field);
    }
}

/// A paste whose last line is cut inside `field`'s value: one IN001
/// naming that field, no line unread, and nothing judged on it.
fn assert_cut_field(text: &str, field: &str) {
    let r = assert_one_partial(text, &format!("last line cut (missing {field})"));
    assert!(of(&r, "IN002").is_empty(), "{field}: {:#?}", r.findings);
}

/// The report of a paste with one IN001 whose first evidence says `said`,
/// and no finding at `warning` or above: what is missing is not judged.
fn assert_one_partial(text: &str, said: &str) -> Report {
    let r = report(text);
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{text}\n{:#?}", r.findings);
    let evidence = &cut[0].evidence[0].text;
    assert!(evidence.contains(said), "{said}: {evidence}");
    assert!(
        fired(&r, Severity::Warning).is_empty(),
        "{text}\n{:#?}",
        r.findings
    );
    r
}

/// Two `Port 1:` blocks pasted without their `CA '…'` lines are the
/// first ports of two adapters: before, both were filed under one
/// adapter named `(unknown CA)`, so the Down one was softened to "port
/// unused?" because "another port of the adapter is Active", and IN001
/// named `(unknown CA)`. Now each is a port of its own, named by its
/// place and its number, and IN001 says only the adapter is unknown.
#[test]
fn port_blocks_without_their_ca_lines_are_ports_of_adapters_not_shown() {
    let block = |state: &str, phys: &str, lid: u32, guid: &str| {
        format!(
            "\tPort 1:\n\t\tState: {state}\n\t\tPhysical state: {phys}\n\t\tRate: 200\n\
             \t\tBase lid: {lid}\n\t\tLMC: 0\n\t\tSM lid: {}\n\t\tCapability mask: 0x2651e848\n\
             \t\tPort GUID: {guid}\n\t\tLink layer: InfiniBand\n",
            if lid == 65535 { 0 } else { 1 }
        )
    };
    let text = format!(
        "$ ibstat\n{}{}",
        block("Down", "Polling", 65535, "0x0c42a10300a1b2c3"),
        block("Active", "LinkUp", 12, "0x0c42a10300a1b2d4")
    );
    let r = report(&text);
    let down = of(&r, "IB001");
    assert_eq!(down.len(), 1, "{:#?}", r.findings);
    assert_eq!(down[0].severity, Severity::Error, "no sibling is known");
    assert!(
        down[0]
            .message
            .starts_with("header-less port #1 (port 1 of an adapter not shown) is Down"),
        "{}",
        down[0].message
    );
    assert!(
        !down[0].message.contains("another port"),
        "{}",
        down[0].message
    );
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:#?}", r.findings);
    let said = &cut[0].evidence[0].text;
    assert!(
        said.contains("which adapter the 2 header-less ports (lines 2–21) are"),
        "{said}"
    );
    assert!(!said.contains("unknown CA"), "{said}");
}

/// `ibstat | grep State` output appended below a whole `ibstat`, with no
/// prompt between: before, its `State: Down` overwrote the listed port's
/// own (an Active port read Down: a `critical` IB001 for a port the paste
/// shows Active). Now the appended lines are header-less ports, as they
/// are after a prompt: the listed port stays Active, the Down one is named
/// by its place, and IN001 says whose it is is not shown.
#[test]
fn state_lines_appended_below_a_whole_ibstat_are_not_its_ports() {
    let whole = ibstat("0x0c42a10300a1b2c3", "Active", "LinkUp", 200);
    for gap in ["", "\n"] {
        let text = format!(
            "$ ibstat\n{whole}{gap}State: Active\nPhysical state: LinkUp\n\
             State: Down\nPhysical state: Polling\n"
        );
        let r = report(&text);
        let down = of(&r, "IB001");
        assert_eq!(down.len(), 1, "{:#?}", r.findings);
        assert!(
            down[0].message.starts_with("header-less port #2 is Down"),
            "{}",
            down[0].message
        );
        assert_eq!(down[0].subject.device, None);
        assert!(down[0].severity < Severity::Critical);
        let cut = of(&r, "IN001");
        assert_eq!(cut.len(), 1, "{:#?}", r.findings);
        assert!(cut[0].evidence[0].text.contains("2 header-less ports"));
        assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
    }
}

/// The same for `ibstatus`: `state:` lines after a whole port block are
/// header-less ports. Before, `state: 1: DOWN` overwrote the block's
/// `4: ACTIVE` and the port was a `critical` IB001.
#[test]
fn state_lines_appended_below_a_whole_ibstatus_are_not_its_ports() {
    let text = "$ ibstatus\nInfiniband device 'mlx5_0' port 1 status:\n\
                \tdefault gid:\t fe80:0000:0000:0000:0c42:a103:00a1:b2c3\n\tbase lid:\t 0x11\n\
                \tsm lid:\t\t 0x1\n\tstate:\t\t 4: ACTIVE\n\tphys state:\t 5: LinkUp\n\
                \trate:\t\t 200 Gb/sec (4X HDR)\n\tlink_layer:\t InfiniBand\n\n\
                \tstate:\t\t 4: ACTIVE\n\tstate:\t\t 1: DOWN\n";
    let r = report(text);
    let down = of(&r, "IB001");
    assert_eq!(down.len(), 1, "{:#?}", r.findings);
    assert!(
        down[0].message.starts_with("header-less port #2 is Down"),
        "{}",
        down[0].message
    );
    assert!(down[0].severity < Severity::Critical);
    assert!(of(&r, "IN001")[0].evidence[0]
        .text
        .contains("2 header-less ports (lines 11–12)"));
}

/// The same for `ibv_devinfo`, whose ports have no header-less form: a
/// second `state:` after a whole port block is another port's, an unread
/// line (IN002) that says so. Before, `state: PORT_DOWN (1)` overwrote the
/// block's `PORT_ACTIVE (4)` and the port was a `critical` IB001.
#[test]
fn a_state_line_appended_below_a_whole_ibv_devinfo_is_not_its_port() {
    let text = "$ ibv_devinfo\nhca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n\
                \tfw_ver:\t\t\t\t20.36.1010\n\tnode_guid:\t\t\t0c42:a103:00a1:b2c3\n\
                \tsys_image_guid:\t\t\t0c42:a103:00a1:b2c3\n\tvendor_id:\t\t\t0x02c9\n\
                \tvendor_part_id:\t\t\t4123\n\thw_ver:\t\t\t\t0x0\n\
                \tboard_id:\t\t\tMT_0000000223\n\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n\
                \t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tmax_mtu:\t\t4096 (5)\n\
                \t\t\tactive_mtu:\t\t4096 (5)\n\t\t\tsm_lid:\t\t\t1\n\t\t\tport_lid:\t\t17\n\
                \t\t\tport_lmc:\t\t0x00\n\t\t\tlink_layer:\t\tInfiniBand\n\
                \t\t\tstate:\t\t\tPORT_DOWN (1)\n";
    let r = report(text);
    assert!(of(&r, "IB001").is_empty(), "{:#?}", r.findings);
    let unread = of(&r, "IN002");
    assert_eq!(unread.len(), 1, "{:#?}", r.findings);
    assert!(unread[0].evidence[0].text.contains("a second `state`"));
    assert_eq!(unread[0].evidence[0].span.first_line, 20);
}

/// NVLink counts since the last reset on several GPUs of a host are one
/// `info` finding about the host (a healthy year-old fleet has some on
/// most GPUs); two hosts' histories stay two findings, each naming only
/// its own readings.
#[test]
fn nvlink_history_is_one_finding_per_host() {
    let gpu = |n: u32, replays: u32| {
        let mut out = format!(
            "GPU {n}: NVIDIA H100 80GB HBM3 (UUID: GPU-aaaaaaaa-0000-0000-0000-00000000000{n})\n"
        );
        for l in 0..2 {
            out.push_str(&format!(
                "\t Link {l}: Replay Errors: {replays}\n\t Link {l}: Recovery Errors: 0\n\t Link {l}: CRC Errors: 0\n"
            ));
        }
        out
    };
    let host = |name: &str, replays: u32| {
        format!(
            "[root@{name} ~]# nvidia-smi nvlink -e\n{}{}{}",
            gpu(0, replays),
            gpu(1, 0),
            gpu(2, replays + 1)
        )
    };
    let r = report(&(host("alpha01", 3) + &host("alpha02", 40)));
    let history = of(&r, "NV003");
    assert_eq!(history.len(), 2, "{history:#?}");
    for (f, (name, low, high)) in history.iter().zip([("alpha01", 3, 4), ("alpha02", 40, 41)]) {
        assert_eq!(f.severity, Severity::Info);
        assert_eq!(f.subject.host.as_deref(), Some(name));
        assert_eq!((f.subject.gpu, f.subject.link), (None, None));
        let evidence: Vec<&str> = f.evidence.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(
            evidence,
            [
                format!("nvlink: GPU 0 link 0 replay_errors = {low}"),
                format!("nvlink: GPU 0 link 1 replay_errors = {low}"),
                format!("nvlink: GPU 2 link 0 replay_errors = {high}"),
                format!("nvlink: GPU 2 link 1 replay_errors = {high}"),
            ]
        );
        assert!(
            f.message.starts_with("2 GPUs: GPU 2 link 0"),
            "{}",
            f.message
        );
    }
}

/// An `ibv_devinfo` (or `-v`) paste whose last port block stops on a
/// whole line, before fields devinfo.c always prints: before, the port
/// was read as whole and the report said "healthy" with no word that
/// half of it was missing. Now IN001 names the port and the fields it
/// lacks (as for ibstat), and nothing is judged on what is absent: no
/// subnet manager verdict from a missing `sm_lid`, no RoCE verdict from a
/// missing `link_layer`.
#[test]
fn an_ibv_devinfo_port_block_ended_by_the_paste_is_partial() {
    let head = |hca: &str| {
        format!(
            "hca_id:\t{hca}\n\ttransport:\t\t\tInfiniBand (0)\n\
             \tfw_ver:\t\t\t\t20.36.1010\n\tnode_guid:\t\t\t0c42:a103:00a1:b2c3\n\
             \tvendor_id:\t\t\t0x02c9\n\tvendor_part_id:\t\t\t4123\n\
             \tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\
             \t\t\tmax_mtu:\t\t4096 (5)\n"
        )
    };
    let whole = format!(
        "{}\t\t\tactive_mtu:\t\t4096 (5)\n\t\t\tsm_lid:\t\t\t1\n\t\t\tport_lid:\t\t17\n\
         \t\t\tport_lmc:\t\t0x00\n\t\t\tlink_layer:\t\tInfiniBand\n\n",
        head("mlx5_0")
    );
    let verbose_tail = "\t\t\tmax_msg_sz:\t\t0x40000000\n\t\t\tport_cap_flags:\t\t0xa651e848\n\
                        \t\t\tmax_vl_num:\t\t4 (3)\n";
    for (text, part, missing) in [
        (
            format!("$ ibv_devinfo\n{}", head("mlx5_0")),
            "mlx5_0 port 1",
            "missing active_mtu, sm_lid, port_lid, port_lmc)",
        ),
        (
            format!("$ ibv_devinfo\n{whole}{}", head("mlx5_1")),
            "mlx5_1 port 1",
            "missing active_mtu, sm_lid, port_lid, port_lmc, link_layer)",
        ),
        (
            format!(
                "$ ibv_devinfo -v\n{}{verbose_tail}",
                whole.trim_end_matches('\n')
            ),
            "mlx5_0 port 1",
            "missing bad_pkey_cntr, qkey_viol_cntr, sm_sl, pkey_tbl_len, gid_tbl_len, \
             subnet_timeout, init_type_reply, active_width, active_speed, phys_state)",
        ),
    ] {
        let r = assert_one_partial(&text, &format!("{part}: fields missing ({missing}"));
        for f in r.findings.iter().filter(|f| f.rule != "IN001") {
            assert!(
                !f.message.contains("RoCE") && !f.message.contains("subnet manager"),
                "{:#?}",
                f
            );
        }
    }
    // A whole block is not partial.
    let r = report(&format!("$ ibv_devinfo\n{whole}"));
    assert!(of(&r, "IN001").is_empty(), "{:#?}", r.findings);
}

/// mlxlink output of one device, healthy or Polling, in mlxlink's layout.
fn mlxlink_run(state: &str, effective_ber: &str) -> String {
    let phys = if state == "Active" { "LinkUp" } else { state };
    format!(
        "Operational Info\n----------------\n\
         State                              : {state}\n\
         Physical state                     : {phys}\n\
         Speed                              : IB-NDR\n\
         Width                              : 4x\n\
         FEC                                : Standard_RS-FEC - (544,514)\n\n\
         Troubleshooting Info\n--------------------\n\
         Status Opcode                      : 0\n\
         Group Opcode                       : N/A\n\
         Recommendation                     : No issue was observed\n\n\
         Physical Counters and BER Info\n------------------------------\n\
         Time Since Last Clear [Min]        : 5032.7\n\
         Effective Physical Errors          : 0\n\
         Effective Physical BER             : {effective_ber}\n\
         Raw Physical BER                   : 3E-9\n\
         Link Down Counter                  : 0\n\n"
    )
}

/// A loop over devices that prints a banner naming each before its
/// mlxlink run (`for d in mlx5_0 mlx5_1; do echo "== $d =="; mlxlink -d
/// $d; done`, `echo "### $d"`, `---- $d ----`): mlxlink's output does not
/// name its device, and the banner was read as a heading naming nothing,
/// so the two runs were one host's "mlxlink" and the Polling one's
/// finding named no device. Now the banner names the device of the run
/// under it, whether an RDMA device, a PCI address or an mst device.
#[test]
fn a_loop_banner_names_the_device_of_the_mlxlink_run_under_it() {
    let runs = [
        (
            "$ for d in mlx5_0 mlx5_1; do echo \"== $d ==\"; mlxlink -d $d -c; done\n",
            ["== mlx5_0 ==", "== mlx5_1 =="],
            ["mlx5_0", "mlx5_1"],
        ),
        (
            "$ for d in 0000:3b:00.0 0000:86:00.0; do echo \"### $d\"; sudo mlxlink -d $d; done\n",
            ["### 0000:3b:00.0", "### 0000:86:00.0"],
            ["0000:3b:00.0", "0000:86:00.0"],
        ),
        (
            "",
            [
                "---- /dev/mst/mt4123_pciconf0 ----",
                "---- /dev/mst/mt4123_pciconf1 ----",
            ],
            ["/dev/mst/mt4123_pciconf0", "/dev/mst/mt4123_pciconf1"],
        ),
    ];
    for (prompt, banners, devices) in runs {
        let text = format!(
            "{prompt}{}\n{}{}\n{}",
            banners[0],
            mlxlink_run("Active", "2E-11"),
            banners[1],
            mlxlink_run("Polling", "15E-255")
        );
        let d = doc(&text);
        let named: Vec<Option<&str>> = sections_of(&d, Kind::Mlxlink)
            .iter()
            .map(|s| match &s.data {
                fabricscope::SectionData::Mlxlink(m) => m.device.as_deref(),
                _ => None,
            })
            .collect();
        assert_eq!(named, devices.map(Some), "{text}");
        let r = report(&text);
        let polling = of(&r, "ML001");
        assert_eq!(polling.len(), 1, "{:#?}", r.findings);
        assert_eq!(polling[0].subject.device.as_deref(), Some(devices[1]));
        let ber = of(&r, "ML002");
        assert_eq!(ber.len(), 1, "{:#?}", r.findings);
        assert_eq!(ber[0].subject.device.as_deref(), Some(devices[0]));
        assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
    }
}

/// A paste that starts at ibdiagnet's closing report: the rule, `Fabric
/// Summary` and its `Key : value` counts, then the summary table. Before,
/// the section opened only at the table's header, and the rule, the title
/// and the counts above it were left as no tool's output.
#[test]
fn ibdiagnets_fabric_summary_opens_its_output() {
    let text = "```\n\
                ---------------------------------------------\n\
                Fabric Summary\n\
                \n\
                Total Nodes             : 22\n\
                IB Switches             : 4\n\
                IB Channel Adapters     : 14\n\
                IB Routers              : 0\n\
                \n\
                Adaptive Routing is enabled on 4 switches\n\
                \n\
                ---------------------------------------------\n\
                Summary\n\
                -I- Stage                     Warnings   Errors     Comment\n\
                -I- Discovery                 2          0\n\
                -I- Routing                   0          0\n\
                ```\n";
    let d = doc(text);
    let log = sections_of(&d, Kind::IbdiagnetLog);
    assert_eq!(log.len(), 1, "{d:#?}");
    assert_eq!(log[0].span.first_line, 2, "{:?}", log[0].span);
    assert!(log[0].warnings.is_empty(), "{:?}", log[0].warnings);
    assert!(d.unrecognised.is_empty(), "{:?}", d.unrecognised);
}

/// `smpquery portinfo 5 1 | grep -E …` keeps the fields it asks for and
/// drops the `# Port info:` header. Before, every field was an unread line
/// (IN002, "a PortInfo field before any header"); now they are read under
/// the port the command names, and the fields the grep left out are what
/// IN001 lists.
#[test]
fn grepped_portinfo_fields_take_the_port_the_command_names() {
    let text = "[root@mgmt01 ~]# smpquery portinfo 5 1 | grep -E 'LinkState|PhysLinkState|LinkWidthActive'\n\
                LinkWidthActive:.................4X\n\
                LinkState:.......................Active\n\
                PhysLinkState:...................LinkUp\n";
    let d = doc(text);
    let info = sections_of(&d, Kind::Portinfo);
    assert_eq!(info.len(), 1, "{d:#?}");
    assert!(info[0].warnings.is_empty(), "{:?}", info[0].warnings);
    let fabricscope::SectionData::Portinfo(p) = &info[0].data else {
        panic!("not portinfo");
    };
    assert_eq!(p.ports.len(), 1);
    assert_eq!((p.ports[0].target.as_str(), p.ports[0].port), ("Lid 5", 1));
    let r = analyze(&[d], &Default::default());
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
    assert!(
        of(&r, "IN001")
            .iter()
            .any(|f| f.evidence.iter().any(|e| e.text.contains("Lid 5 port 1"))),
        "{:#?}",
        r.findings
    );
}

/// `nvidia-smi` (not a format we read) failing with NVML's lost-GPU error
/// under a prompt that names the host, then `topo -m` failing the same
/// way. Before, the first failure was an `info` of "a tool" under "(host
/// not named)", the second another `info` of the same message: a GPU
/// fallen off the bus, the fault itself, read as a tool's hiccup. Now it
/// is one `error` of the prompt's host, naming nvidia-smi; a handle the
/// user may not read (`Insufficient Permissions`) stays `info`.
#[test]
fn nvml_losing_a_gpu_is_an_error_of_the_prompts_host() {
    let text = "[root@gpu-a12 ~]# nvidia-smi\n\
                Unable to determine the device handle for GPU0000:3A:00.0: Unknown Error\n\
                [root@gpu-a12 ~]# nvidia-smi topo -m\n\
                Unable to determine the device handle for GPU0000:3A:00.0: Unknown Error\n";
    let r = report(text);
    let failed = of(&r, "IN003");
    assert_eq!(failed.len(), 1, "{:#?}", r.findings);
    let f = failed[0];
    assert_eq!(f.severity, Severity::Error, "{f:#?}");
    assert_eq!(f.subject.host.as_deref(), Some("gpu-a12"), "{f:#?}");
    assert!(f.message.starts_with("nvidia-smi failed"), "{f:#?}");
    assert!(f.message.contains("fallen off the bus"), "{f:#?}");
    assert_eq!(f.evidence[0].span.first_line, 2, "{f:#?}");
    assert_eq!(f.subject.bus_id.as_deref(), Some("0000:3A:00.0"), "{f:#?}");

    let lost = "$ nvidia-smi -L\n\
                Unable to determine the device handle for gpu 0000:B3:00.0: GPU is lost.  Reboot the system to recover this GPU\n";
    let r = report(lost);
    assert_eq!(
        of(&r, "IN003")
            .iter()
            .map(|f| f.severity)
            .collect::<Vec<_>>(),
        [Severity::Error],
        "{:#?}",
        r.findings
    );
    assert_eq!(
        of(&r, "IN003")[0].subject.bus_id.as_deref(),
        Some("0000:B3:00.0")
    );

    let denied = "user@gpu-a12:~$ nvidia-smi\n\
                  Unable to determine the device handle for GPU0000:3A:00.0: Insufficient Permissions\n";
    let r = report(denied);
    let failed = of(&r, "IN003");
    assert_eq!(failed.len(), 1, "{:#?}", r.findings);
    assert_eq!(failed[0].severity, Severity::Info, "{:#?}", failed[0]);
    assert_eq!(failed[0].subject.host.as_deref(), Some("gpu-a12"));
}

/// NVML's `Driver/library version mismatch` (a driver updated without a
/// reboot) says what to do about it, not the generic "check that the
/// device is present" of a tool that found no device.
#[test]
fn an_nvml_version_mismatch_says_reboot() {
    let text = "admin@gpu-b03:~$ nvidia-smi\n\
                Failed to initialize NVML: Driver/library version mismatch\n\
                NVML library version: 550.127\n";
    let r = report(text);
    let failed = of(&r, "IN003");
    assert_eq!(failed.len(), 1, "{:#?}", r.findings);
    let f = failed[0];
    assert_eq!(f.severity, Severity::Warning, "{f:#?}");
    assert_eq!(f.subject.host.as_deref(), Some("gpu-b03"), "{f:#?}");
    assert!(f.message.contains("without a reboot"), "{f:#?}");
    assert!(f.remediation.starts_with("Reboot"), "{f:#?}");
}

/// `lspci -n | awk '{print $1}' | xargs -I{} sh -c 'echo {} && mlxlink -d {}
/// -c | grep …'`: each run's records under the bare PCI address the loop
/// echoed. Before, the first address was read as lspci's output, each
/// later one as a record (`3c` = `00.0`) of the run above it, every run
/// was "the port" of no device, and IN001 said `awk '{print $1}'` (which
/// picked lspci's lines) had left out the output's lines.
#[test]
fn a_bare_pci_address_a_loop_echoes_names_the_grepped_mlxlink_run_under_it() {
    let grepped = |eff: &str, raw: &str| {
        format!(
            "Effective Physical Errors          : 0\n\
             Effective Physical BER             : {eff}\n\
             Raw Physical BER                   : {raw}\n\
             Raw Physical Errors Per Lane       : 11,0,4,2\n"
        )
    };
    let text = format!(
        "root@gpu-b07:~# lspci -d 15b3::0207 -n | awk '{{print $1}}' | xargs -I{{}} sh -c 'echo {{}} && mlxlink -d {{}} -c | grep -e Effective -e Raw'\n\
         1a:00.0\n{}3c:00.0\n{}0000:4d:00.0 \n{}",
        grepped("15E-255", "2E-8"),
        grepped("6E-11", "4E-5"),
        grepped("15E-255", "1E-10"),
    );
    let d = doc(&text);
    let runs: Vec<(Option<&str>, usize)> = sections_of(&d, Kind::Mlxlink)
        .iter()
        .map(|s| match &s.data {
            fabricscope::SectionData::Mlxlink(m) => (
                m.device.as_deref(),
                m.sections.iter().map(|s| s.fields.len()).sum(),
            ),
            _ => (None, 0),
        })
        .collect();
    assert_eq!(
        runs,
        [
            (Some("1a:00.0"), 4),
            (Some("3c:00.0"), 4),
            (Some("0000:4d:00.0"), 4)
        ],
        "{text}"
    );
    assert!(d.unrecognised.is_empty(), "{:?}", d.unrecognised);
    let r = report(&text);
    let ber = of(&r, "ML002");
    assert_eq!(ber.len(), 1, "{:#?}", r.findings);
    assert_eq!(ber[0].subject.device.as_deref(), Some("3c:00.0"));
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:#?}", r.findings);
    assert!(
        cut[0]
            .message
            .contains("lines `grep -e Effective -e Raw` left out"),
        "{}",
        cut[0].message
    );
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
}

/// `ibv_devinfo -d DEV -v` cut to its GID table (under a `...`, or with
/// no command at all): the `GID[  N]:` lines at column 0 are a port's,
/// read as a port cut at the top. Before, with the command they were
/// "not ibv_devinfo output (expected `hca_id:`)" (IN002), and without it
/// no tool's.
#[test]
fn a_gid_table_alone_is_a_port_of_ibv_devinfo_cut_at_the_top() {
    let gids = "GID[  0]:               fe80:0000:0000:0000:1e34:daff:fe5a:9e01, RoCE v1\n\
                GID[  1]:               fe80::1e34:daff:fe5a:9e01, RoCE v2\n\
                GID[  3]:               0000:0000:0000:0000:0000:ffff:0a0b:0c0d, RoCE v2\n";
    for text in [
        format!("$ ibv_devinfo -d mlx5_3 -v\n...\n{gids}"),
        gids.to_owned(),
    ] {
        let d = doc(&text);
        let devinfo = sections_of(&d, Kind::IbvDevinfo);
        assert_eq!(devinfo.len(), 1, "{text}");
        assert!(d.unrecognised.is_empty(), "{:?}", d.unrecognised);
        let fabricscope::SectionData::IbvDevinfo(v) = &devinfo[0].data else {
            panic!("not ibv_devinfo");
        };
        assert_eq!(v.devices.len(), 1);
        assert_eq!(v.devices[0].ports.len(), 1);
        assert_eq!(v.devices[0].ports[0].gids.len(), 3, "{text}");
        let r = report(&text);
        assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
        assert_eq!(of(&r, "IN001").len(), 1, "{:#?}", r.findings);
        assert!(fired(&r, Severity::Warning).is_empty(), "{:#?}", r.findings);
    }
}

/// nvidia-smi draws at most so many NICs and says so above the header
/// (vllm#14537: `76 NICs found in the topology, only displaying 56 in
/// the matrix.`): the notice is the matrix's first line, not the author's
/// prose, and a GPU whose nearest NIC shown is farther than its siblings'
/// is not called far from its NIC, which may be one not shown.
#[test]
fn a_matrix_drawn_with_some_of_its_nics_does_not_judge_the_nearest_nic() {
    let mut text = String::from(
        "GPU Topology:\n6 NICs found in the topology, only displaying 4 in the matrix.\n",
    );
    text.push_str("\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tNIC1\tNIC2\tNIC3\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n");
    let near = [
        "PIX\tNODE\tSYS\tSYS",
        "NODE\tPIX\tSYS\tSYS",
        "SYS\tSYS\tPIX\tNODE",
        "SYS\tSYS\tNODE\tNODE",
    ];
    for (g, nics) in near.iter().enumerate() {
        let links: Vec<&str> = (0..4)
            .map(|h| if h == g { " X " } else { "NV18" })
            .collect();
        let aff = if g < 2 {
            "0-31\t0\t\tN/A"
        } else {
            "32-63\t1\t\tN/A"
        };
        text.push_str(&format!("GPU{g}\t{}\t{nics}\t{aff}\n", links.join("\t")));
    }
    text.push_str(
        "\nLegend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n",
    );
    let d = doc(&text);
    let topo = sections_of(&d, Kind::TopoMatrix);
    assert_eq!(topo.len(), 1);
    assert_eq!(topo[0].span.first_line, 2, "the notice opens the matrix");
    let r = report(&text);
    assert!(of(&r, "TP003").is_empty(), "{:?}", of(&r, "TP003"));
    let in001 = of(&r, "IN001");
    assert_eq!(in001.len(), 1, "{:?}", r.findings);
    assert!(
        in001[0].message.contains("left NICs out"),
        "{}",
        in001[0].message
    );
    // Without the notice GPU3 is far from every NIC shown: judged.
    let whole = text.replace(
        "6 NICs found in the topology, only displaying 4 in the matrix.\n",
        "",
    );
    assert_eq!(of(&report(&whole), "TP003").len(), 1);
}

/// nvidia-smi's refusal of `topo -m -i N` (`-i` goes with `-n`/`-p`),
/// after the author's `# output` comment, is the command line's fault
/// (IN003), not a matrix cut before its header with unread lines.
#[test]
fn a_refused_topo_command_is_said_not_taken_for_a_cut_matrix() {
    let refused = "```bash\nnvidia-smi topo -m -i 0\n# output\nThe -i command line argument must be used in conjunction with -n or -p.\n```\n";
    let r = report(refused);
    assert_eq!(fired(&r, Severity::Info), vec!["IN003"], "{:?}", r.findings);
}

/// `nvidia-smi`'s summary table from two hosts through `pdsh`, each under
/// its prefix, after the tool's own time stamp: one table per host, every
/// line the tool's (the processes table too), and the GPU printing `ERR!`
/// is reported on its host. Before, the tables were no supported tool's.
#[test]
fn nvidia_smis_table_through_pdsh_is_read_per_host_and_an_err_row_reported() {
    let table = |ecc: &str, second: &str| {
        format!(
            "\
Mon Dec  7 08:00:00 2026
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 535.161.08   Driver Version: 535.161.08   CUDA Version: 12.2     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  NVIDIA A100-SXM...  On   | 00000000:07:00.0 Off |{ecc:>21} |
| N/A   31C    P0    62W / 400W |      4MiB / 81920MiB |      0%      Default |
|                               |                      |             Disabled |
+-------------------------------+----------------------+----------------------+
{second}
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| Processes:                                                                  |
|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |
|        ID   ID                                                   Usage      |
|=============================================================================|
|  No running processes found                                                 |
+-----------------------------------------------------------------------------+
"
        )
    };
    let healthy = "\
|   1  NVIDIA A100-SXM...  On   | 00000000:0F:00.0 Off |                    0 |
| N/A   30C    P0    60W / 400W |      4MiB / 81920MiB |      0%      Default |
|                               |                      |             Disabled |";
    let failed = "\
|   1  ERR!                On   | 00000000:0F:00.0 Off |                 ERR! |
|ERR!  ERR! ERR!    ERR! / ERR! |      4MiB / 81920MiB |    ERR!      Default |
|                               |                      |                 ERR! |";
    let prefixed = |host: &str, text: String| -> String {
        text.lines().map(|l| format!("{host}: {l}\n")).collect()
    };
    let text = prefixed("gpu-n01", table("0", healthy)) + &prefixed("gpu-n02", table("0", failed));
    let d = doc(&text);
    assert!(d.unrecognised.is_empty(), "{:?}", d.unrecognised);
    let tables = sections_of(&d, Kind::SmiTable);
    let hosts: Vec<_> = tables.iter().map(|s| s.host.as_deref()).collect();
    assert_eq!(hosts, [Some("gpu-n01"), Some("gpu-n02")]);
    let r = analyze(&[d], &Default::default());
    let err = of(&r, "DG004");
    assert_eq!(err.len(), 1);
    assert_eq!(err[0].subject.host.as_deref(), Some("gpu-n02"));
    assert_eq!(err[0].subject.gpu, Some(1));
    assert_eq!(err[0].subject.bus_id.as_deref(), Some("00000000:0F:00.0"));
    assert_eq!(err[0].severity, Severity::Error);
    assert_eq!(fired(&r, Severity::Warning), ["DG004"]);
}

/// A table cut inside its header (the banner and the column titles, no
/// GPU block): nvidia-smi prints its banner only above GPUs, so the GPUs
/// it would list are missing, not absent. Before, the table read as "0
/// GPU(s)" with no word that the paste was cut.
#[test]
fn a_gpu_table_cut_in_its_header_is_partial() {
    let text = "\
ops@trn-07:~$ nvidia-smi
Tue Mar  3 09:12:40 2026
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.183.01             Driver Version: 535.183.01   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|                                         |                      |               MIG M. |
|==========
";
    let r = report(text);
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:?}", r.findings);
    assert!(cut[0].message.contains("GPU blocks"), "{}", cut[0].message);
    assert_eq!(cut[0].subject.host.as_deref(), Some("trn-07"));
}

/// zsh's default prompt (`user@host dir# `, `%` for a user) names the
/// host and the command of the output under it. Before, the line was no
/// prompt: the output under it went unread and unnamed.
#[test]
fn a_zsh_default_prompt_names_the_host_and_the_command() {
    let text = "\
(venv) ops@gpu-b12 benchDIR# nvidia-smi -L
GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-4c3b2a19-0817-4e6d-9c5b-a4f3e2d1c0b9)
GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-5d4c3b2a-1908-4f7e-8d6c-b5a4f3e2d1c0)
";
    let d = doc(text);
    assert!(d.unrecognised.is_empty(), "{:?}", d.unrecognised);
    let lists = sections_of(&d, Kind::SmiList);
    assert_eq!(lists.len(), 1);
    assert_eq!(lists[0].host.as_deref(), Some("gpu-b12"));
    assert_eq!(lists[0].command.as_deref(), Some("nvidia-smi -L"));
}

/// A reply under a CSV query, after a blank line, is the author's: it has
/// another count of values than the rows above and reads as prose. Before,
/// it was a CSV row of the wrong width, unread (IN002). A row of the right
/// width after the break (a double-spaced paste) stays the tool's.
#[test]
fn prose_after_a_csv_query_and_a_break_is_set_aside() {
    let text = "\
name, pci.bus_id, temperature.gpu, clocks.max.graphics [MHz]
Quadro RTX 4000, 00000000:65:00.0, 41, 1965 MHz

Thanks, that is what I needed for the temperature part
";
    let d = doc(text);
    let csv = sections_of(&d, Kind::SmiCsv);
    assert_eq!(csv.len(), 1);
    assert!(csv[0].warnings.is_empty(), "{:?}", csv[0].warnings);
    assert!(of(&report(text), "IN002").is_empty());
    let spaced = "\
name, pci.bus_id, temperature.gpu

Quadro RTX 4000, 00000000:65:00.0, 41

Quadro RTX 4000, 00000000:66:00.0, 43
";
    let d = doc(spaced);
    let csv = sections_of(&d, Kind::SmiCsv);
    assert_eq!(csv.len(), 1);
    assert!(csv[0].warnings.is_empty(), "{:?}", csv[0].warnings);
}

/// An author's `NCCL version 2.18.X` under a matrix, after the prose that
/// follows it, is set aside as the author's note. Before, it was read as
/// an unreadable line of the matrix (IN002).
#[test]
fn a_version_note_under_a_matrix_is_the_authors() {
    let text = "\
\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity
GPU0\t X \tPIX\t0-15\t0
GPU1\tPIX\t X \t0-15\t0

Both GPUs hang in all_reduce_perf.

NCCL version 2.18.X
";
    let d = doc(text);
    let m = sections_of(&d, Kind::TopoMatrix);
    assert_eq!(m.len(), 1);
    assert!(m[0].warnings.is_empty(), "{:?}", m[0].warnings);
    assert!(of(&report(text), "IN002").is_empty());
}

/// The paste every GPU incident starts with: a root prompt naming the
/// host, `dmesg -T | grep -i xid`, the driver's Xid lines, then
/// `nvidia-smi` failing on the GPU that fell off the bus. Before, the Xid
/// lines were no supported tool's output. Now the application's Xid 13 on
/// one GPU is `info`, the Xid 79 on another an `error` on the host the
/// prompt names, in one incident with nvidia-smi's failure for the same
/// bus id; the grep is no cut (IN001) and no line goes unread (IN002).
#[test]
fn dmesg_xid_lines_are_judged_per_gpu_and_join_nvidia_smis_lost_gpu() {
    let text = "\
[root@gpu-a17 ~]# dmesg -T | grep -i xid
[Mon Dec  7 09:58:12 2026] NVRM: Xid (PCI:0000:18:00): 13, pid=88123, name=python, Graphics Exception: ESR 0x405840=0x3e
[Mon Dec  7 09:58:12 2026] NVRM: Xid (PCI:0000:18:00): 13, pid=88123, name=python, Graphics Exception: ChID 0010, Class 0000c7c0
[Mon Dec  7 10:04:51 2026] NVRM: Xid (PCI:0000:3a:00): 79, pid=90211, name=pt_main_thread, GPU has fallen off the bus.
[Mon Dec  7 10:04:51 2026] NVRM: GPU 0000:3a:00.0: GPU has fallen off the bus.
[root@gpu-a17 ~]# nvidia-smi
Unable to determine the device handle for GPU0000:3A:00.0: Unknown Error
";
    let d = doc(text);
    assert!(d.unrecognised.is_empty(), "{:?}", d.unrecognised);
    let logs = sections_of(&d, Kind::KernelLog);
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0].host.as_deref(), Some("gpu-a17"));
    let r = analyze(&[d], &Default::default());
    let xid = of(&r, "DG006");
    let by_bus: Vec<(Option<&str>, Severity)> = xid
        .iter()
        .map(|f| (f.subject.bus_id.as_deref(), f.severity))
        .collect();
    assert_eq!(
        by_bus,
        [
            (Some("0000:3a:00.0"), Severity::Error),
            (Some("0000:18:00.0"), Severity::Info)
        ]
    );
    assert!(xid
        .iter()
        .all(|f| f.subject.host.as_deref() == Some("gpu-a17")));
    assert!(
        xid[1].message.contains("usually the job"),
        "{}",
        xid[1].message
    );
    assert!(of(&r, "IN001").is_empty() && of(&r, "IN002").is_empty());
    // The GPU lost to nvidia-smi and its Xid 79: one incident.
    let lost = r
        .incidents
        .iter()
        .find(|i| i.rule == "DG006" && i.severity == Severity::Error)
        .unwrap();
    let rules: Vec<&str> = lost.members(&r.findings).map(|f| f.rule).collect();
    assert_eq!(rules, ["DG006", "IN003"]);
}

/// `journalctl -k` lines name their host when no prompt does; the other
/// drivers' messages between them are set apart, not unread.
#[test]
fn journal_lines_name_the_host_of_their_xids() {
    let text = "\
Dec 07 08:00:03 gpu-j02 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE
Dec 07 08:13:44 gpu-j02 kernel: NVRM: Xid (PCI:0000:86:00): 95, pid=5121, name=python3, Uncontained ECC error.
Dec 07 08:13:45 gpu-j02 kernel: NVRM: GPU at PCI:0000:86:00: GPU-5c1d2a70
";
    let d = doc(text);
    let logs = sections_of(&d, Kind::KernelLog);
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0].host.as_deref(), Some("gpu-j02"));
    let r = analyze(&[d], &Default::default());
    assert_eq!(fired(&r, Severity::Info), ["DG006"], "{:?}", r.findings);
    assert_eq!(of(&r, "DG006")[0].severity, Severity::Error);
}

/// `dmesg -T | grep -E 'Xid|mlx5'` on a host where a job hung: the GPU's
/// Xid lines and the adapters' lines in one paste. Before, the mlx5 lines
/// were other kernel messages, not read, and nothing was said of the port
/// that went down and stayed down. Now the Xid is DG006's, the port left
/// down in a log that ran to its end (the shell's next prompt follows it)
/// is IB011's error, the cable's temperature
/// error IB012's, both for the adapter the RDMA core names (`mlx5_2 port
/// 1`); the probe's other lines are set apart, the grep is no cut.
#[test]
fn a_mixed_dmesg_paste_judges_xids_and_the_adapters_links() {
    let text = "\
[root@gpu-m04 ~]# dmesg -T | grep -E 'Xid|mlx5'
[Mon Dec  7 02:10:01 2026] mlx5_core 0000:4b:00.0: firmware version: 28.39.1002
[Mon Dec  7 02:14:08 2026] mlx5_core 0000:4b:00.0: Port module event[error]: module 0, Cable error, High Temperature
[Mon Dec  7 02:14:09 2026] mlx5_core 0000:4b:00.0 ibp75s0: Link down
[Mon Dec  7 02:14:09 2026] mlx5_core 0000:4b:00.0 mlx5_2: Port: 1 Link DOWN
[Mon Dec  7 02:31:40 2026] NVRM: Xid (PCI:0000:3a:00): 13, pid=5512, name=python3, Graphics Exception: ESR 0x405840=0x3e
[Mon Dec  7 03:02:17 2026] mlx5_core 0000:ca:00.0 mlx5_6: Port: 1 Link ACTIVE
[root@gpu-m04 ~]# 
";
    let d = doc(text);
    assert!(d.unrecognised.is_empty(), "{:?}", d.unrecognised);
    let logs = sections_of(&d, Kind::KernelLog);
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0].host.as_deref(), Some("gpu-m04"));
    let r = analyze(&[d], &Default::default());
    let link = of(&r, "IB011");
    assert_eq!(link.len(), 1, "{:?}", r.findings);
    assert_eq!(link[0].severity, Severity::Error);
    assert_eq!(link[0].subject.describe(), "mlx5_2 port 1");
    assert_eq!(link[0].subject.host.as_deref(), Some("gpu-m04"));
    assert!(
        link[0].message.contains("0000:4b:00.0"),
        "{}",
        link[0].message
    );
    let cable = of(&r, "IB012");
    assert_eq!(cable.len(), 1, "{:?}", r.findings);
    assert_eq!(cable[0].severity, Severity::Error);
    assert!(
        cable[0].message.contains("High Temperature"),
        "{}",
        cable[0].message
    );
    assert_eq!(of(&r, "DG006").len(), 1);
    assert!(of(&r, "IN001").is_empty() && of(&r, "IN002").is_empty());
}

/// An author's Markdown heading whose word only may be a host's (`####
/// rocev1` over a notes page's block, a word and one digit) names no
/// host unless the paste names that host elsewhere. Before, `rocev1` was
/// the host of the output under it. A fleet's name (`### node01`), a
/// heading that says `Host:`, a script's banner (`==== node1 ====`) and a
/// heading whose name a prompt below confirms stay hosts.
#[test]
fn a_markdown_heading_names_a_host_only_when_it_looks_like_one_or_is_confirmed() {
    let block = format!(
        "```\n$ ibstat\n{}```\n",
        ibstat("0x0c42a10300a1b2c3", "Active", "LinkUp", 200)
    );
    let hosts = |heading: &str, after: &str| {
        let d = doc(&format!("{heading}\n\n{block}{after}"));
        let mut named: Vec<String> = d.sections.iter().filter_map(|s| s.host.clone()).collect();
        named.dedup();
        named
    };
    for weak in ["#### rocev1", "### node1", "## ipv4", "## ConnectX-7"] {
        assert!(hosts(weak, "").is_empty(), "{weak}");
    }
    for (heading, host) in [
        ("### node01", "node01"),
        ("### gpu-a100-12", "gpu-a100-12"),
        ("## node7.cluster", "node7.cluster"),
        ("### Host: node1", "node1"),
        ("==== node1 ====", "node1"),
        ("### node1 ###", "node1"),
    ] {
        assert_eq!(hosts(heading, ""), [host], "{heading}");
    }
    // A prompt below at the same host confirms the heading.
    let confirmed = hosts("### node1", "[root@node1 ~]# ibstat -l\nmlx5_0\n");
    assert_eq!(confirmed, ["node1"]);
    // Another host's prompt does not.
    let other = hosts("### node1", "[root@node2 ~]# ibstat -l\nmlx5_0\n");
    assert_eq!(other, ["node2"]);
}

/// `journalctl -k -b all -g mlx5` over three boots, a boot line first (a
/// boot before them matched nothing): each boot's bring-up bounces its
/// link. Before, the boot lines were read as headings that ended the log
/// (the first one an unread line), and the three bounces were one
/// flapping link. Now the log is one section over four boots, each bounce
/// is its boot's bring-up, and nothing is said.
#[test]
fn a_journal_over_several_boots_keeps_each_boots_bring_up_apart() {
    let text = "\
[root@gpu-k07 ~]# journalctl -k -b all -g mlx5
-- Boot 3f1a9c0e5b7d4e2a8c6b1d0f9e8a7b6c --
Dec 01 08:00:07 gpu-k07 kernel: mlx5_core 0000:9c:00.1: firmware version: 28.39.1002
Dec 01 08:00:12 gpu-k07 kernel: mlx5_core 0000:9c:00.1 ens6f1np1: Link down
Dec 01 08:00:17 gpu-k07 kernel: mlx5_core 0000:9c:00.1 ens6f1np1: Link up
-- Boot 0b5e3c1a9f6d4e2b8a7c6d5e4f3a2b1c --
Dec 01 08:20:05 gpu-k07 kernel: mlx5_core 0000:9c:00.1: firmware version: 28.39.1002
Dec 01 08:20:10 gpu-k07 kernel: mlx5_core 0000:9c:00.1 ens6f1np1: Link down
Dec 01 08:20:15 gpu-k07 kernel: mlx5_core 0000:9c:00.1 ens6f1np1: Link up
-- Boot 7c2d4e6f8a0b1c3d5e7f9a1b3c5d7e9f --
Dec 01 08:40:05 gpu-k07 kernel: mlx5_core 0000:9c:00.1: firmware version: 28.39.1002
Dec 01 08:40:10 gpu-k07 kernel: mlx5_core 0000:9c:00.1 ens6f1np1: Link down
Dec 01 08:40:15 gpu-k07 kernel: mlx5_core 0000:9c:00.1 ens6f1np1: Link up
[root@gpu-k07 ~]# 
";
    let d = doc(text);
    assert!(d.unrecognised.is_empty(), "{:?}", d.unrecognised);
    let logs = sections_of(&d, Kind::KernelLog);
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0].span, fabricscope::LineSpan::new(1, 13));
    let r = analyze(&[d], &Default::default());
    assert!(of(&r, "IB011").is_empty(), "{:?}", r.findings);
    assert!(of(&r, "IN002").is_empty(), "{:?}", r.findings);
}

/// `dmesg | grep mlx5` cut inside its last line: the adapter the line
/// names is said to be cut (IN001), its half a state is not judged; the
/// lines before it are.
#[test]
fn an_adapter_line_cut_at_the_end_of_the_paste_is_not_judged() {
    let text = "\
$ dmesg | grep mlx5
[ 6120.408112] mlx5_core 0000:29:00.0 mlx5_1: Port: 1 Link DOWN
[ 6127.330871] mlx5_core 0000:29:00.0 mlx5_1: Port: 1 Link ACTIVE
[ 6390.002614] mlx5_core 0000:29:00.0 mlx5_1: Port: 1 Link DO";
    let r = report(text);
    let cut = of(&r, "IN001");
    assert_eq!(cut.len(), 1, "{:?}", r.findings);
    assert!(
        cut[0].message.contains("0000:29:00.0"),
        "{}",
        cut[0].message
    );
    // The whole lines: one down that came back (info), not a port down
    // at the end of the log.
    let link = of(&r, "IB011");
    assert_eq!(link.len(), 1, "{:?}", r.findings);
    assert_eq!(link[0].severity, Severity::Info);
    assert!(of(&r, "IN002").is_empty());
}

/// A training job's output as pasted into an issue: the launch prompt,
/// torchrun's and the program's own log lines among the ranks' NCCL lines
/// of two hosts, and the traceback. The NCCL prefixes name the hosts (not
/// the login node of the prompt); the program's lines are kept, not
/// unread; the completion error is the error of the host that printed it.
#[test]
fn an_nccl_log_among_a_jobs_output_names_its_hosts_from_the_prefixes() {
    let text = "\
user@login-2:~/llm$ NCCL_DEBUG=INFO torchrun --nnodes 2 --nproc-per-node 2 --rdzv-endpoint 10.8.1.31:29400 pretrain.py
W1104 09:12:44.118000 139880 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1
sm-a31:90412:90412 [0] NCCL INFO Bootstrap : Using ibp12s0:10.8.1.31<0>
sm-a31:90412:90412 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation
sm-a31:90412:90412 [0] NCCL INFO cudaDriverVersion 12060
NCCL version 2.21.5+cuda12.4
sm-a31:90412:90540 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB ibp12s0:10.8.1.31<0>
sm-a31:90412:90540 [0] NCCL INFO Using network IB
sm-b07:71203:71330 [1] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB ibp12s0:10.8.1.47<0>
sm-b07:71203:71330 [1] NCCL INFO Using network IB
2024-11-04 09:12:51,402 - pretrain - INFO - building model: 7.2B parameters
sm-a31:90412:90540 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read
sm-a31:90413:90541 [1] NCCL INFO Channel 00/0 : 1[1] -> 2[0] [send] via NET/IB/1/GDRDMA
sm-b07:71203:71330 [1] NCCL INFO Channel 00/0 : 1[1] -> 2[0] [receive] via NET/IB/1/GDRDMA
sm-a31:90412:90540 [0] NCCL INFO comm 0x5601a2b0 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 1b000 commId 0x9c3e5a71d2f08b64 - Init COMPLETE
2024-11-04 09:14:03,877 - pretrain - INFO - step 10 loss 7.9132

sm-a31:90413:90622 [1] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.8.1.47<40022> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid fe80::5e25:73ff:fe1a:20c4 remoteGidsfe80::5e25:73ff:fe1a:8a10
sm-a31:90413:90622 [1] NCCL INFO transport/net.cc:1298 -> 6
sm-a31:90413:90622 [1] NCCL INFO proxy.cc:694 -> 6
Traceback (most recent call last):
  File \"/home/user/llm/pretrain.py\", line 214, in <module>
torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, remote process exited or there was a network error, NCCL version 2.21.5
";
    let d = doc(text);
    let logs = sections_of(&d, Kind::NcclLog);
    let hosts: Vec<_> = logs.iter().map(|s| s.host.as_deref()).collect();
    assert_eq!(hosts, [Some("sm-a31"), Some("sm-b07")]);
    // The program's lines inside the log are its own, listed, not unread.
    assert!(logs.iter().all(|s| s.warnings.is_empty()), "{logs:?}");
    let r = analyze(&[d], &Default::default());
    let err = of(&r, "NC001");
    assert_eq!(err.len(), 1);
    assert_eq!(err[0].subject.host.as_deref(), Some("sm-a31"));
    assert_eq!(err[0].severity, Severity::Error);
    assert_eq!(err[0].evidence[0].span.first_line, 18);
    // Both hosts chose IB: no socket fallback, nothing else above info.
    assert_eq!(fired(&r, Severity::Warning), ["NC001"]);
    assert!(of(&r, "IN002").is_empty());
}

/// `NCCL_DEBUG=INFO torchrun …` at a prompt: the `NAME=value` words are
/// the shell's environment, and the program is `torchrun`. Before, a line
/// of the program's own output under it was "output of `NCCL_DEBUG=INFO`,
/// which is not a supported tool".
#[test]
fn a_prompts_environment_assignments_are_not_its_program() {
    let text = "\
[alice@login01 ~]$ NCCL_DEBUG=INFO CUDA_VISIBLE_DEVICES=0 torchrun --nnodes 2 train.py
W1207 10:00:00.000000 140 torch/distributed/run.py:779] Setting OMP_NUM_THREADS to 1
gpu-a01:20211:20280 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.1.0.11<0>
gpu-a01:20211:20280 [0] NCCL INFO Using network IB
";
    let d = doc(text);
    let reasons: Vec<&str> = d.unrecognised.iter().map(|u| u.reason.as_str()).collect();
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(reasons[0].contains("`torchrun`"), "{reasons:?}");
    assert!(!reasons[0].contains("NCCL_DEBUG"), "{reasons:?}");
}

/// NCCL's IB async events as a training job's ranks print them, the
/// paste's last line cut inside a failed call's error: the port error of
/// the host whose ranks printed it is an error (a connection of that host
/// failed after it), the other host's port came back (a flap, a warning),
/// and the cut line is partial (IN001), not judged. Before, none of these lines was
/// read: only NC001's completion errors were.
#[test]
fn nccl_async_port_events_are_judged_and_a_cut_last_line_is_partial() {
    let text = "\
ml-c01:4410:4477 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB ib0:10.9.0.1<0>
ml-c01:4410:4477 [0] NCCL INFO Using network IB
ml-c02:5120:5190 [1] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB ib0:10.9.0.2<0>
ml-c02:5120:5190 [1] NCCL INFO Using network IB
ml-c01:4410:4461 [0] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_1:1 Got async event : port error
ml-c01:4411:4462 [1] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_1:1 Got async event : port error
ml-c01:4411:4470 [1] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.9.0.2<40001> with status=12 opcode=0 len=0 vendor err 129 (Send)
ml-c02:5120:5163 [1] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_0:1 Got async event : port error
ml-c02:5120:5163 [1] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_0:1 Got async event : port active
ml-c01:4410:4461 [0] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_0:1 Got async event : port active
ml-c02:5120:5190 [1] misc/ibvwrap.cc:160 NCCL WARN Call to ibv_reg_mr failed with error Cannot alloc";
    let r = report(text);
    let nc004 = of(&r, "NC004");
    let mut got: Vec<_> = nc004
        .iter()
        .map(|f| {
            (
                f.subject.host.as_deref(),
                f.subject.device.as_deref(),
                f.subject.port,
                f.severity,
            )
        })
        .collect();
    got.sort_by_key(|g| (g.0, g.1));
    // ml-c01's mlx5_1 went down and a connection failed; its mlx5_0 came
    // up (the start of that flap is not in the paste); ml-c02's mlx5_0
    // flapped.
    assert_eq!(
        got,
        [
            (Some("ml-c01"), Some("mlx5_0"), Some(1), Severity::Warning),
            (Some("ml-c01"), Some("mlx5_1"), Some(1), Severity::Error),
            (Some("ml-c02"), Some("mlx5_0"), Some(1), Severity::Warning),
        ],
        "{nc004:#?}"
    );
    let down = nc004
        .iter()
        .find(|f| f.severity == Severity::Error)
        .unwrap();
    assert!(down.message.contains("2 `port error`"), "{}", down.message);
    // The cut ibv_reg_mr line: partial, named by IN001, not judged.
    let in001 = of(&r, "IN001");
    assert_eq!(in001.len(), 1, "{:?}", r.findings);
    assert!(in001[0].evidence.iter().any(|e| e.span.first_line == 11));
    assert!(nc004.iter().all(|f| !f.message.contains("ibv_reg_mr")));
}

/// NC001's subject names the local device: the HCA when NCCL printed it,
/// else the device that a failed `ibv_modify_qp` of the same host names
/// for the same local GID (NCCL 2.24 on prints both), else the local GID;
/// the message names the remote peers (without each connection's port)
/// and their GIDs. Before, the subject was the host and the GPU only.
#[test]
fn nccl_completion_errors_name_the_local_device_and_the_remote_peer() {
    let text = "\
rc-07:3310:3390 [4] misc/ibvwrap.cc:376 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_4:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:10.50.4.7, remote GID ::ffff:10.50.4.31
rc-07:3310:3402 [4] transport/net_ib.cc:2001 NCCL WARN NET/IB: Got completion from peer 10.50.0.31<40211> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.50.4.7 remoteGids::ffff:10.50.4.31
rc-07:3310:3402 [4] transport/net_ib.cc:2001 NCCL WARN NET/IB: Got completion from peer 10.50.0.31<40219> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.50.4.7 remoteGids::ffff:10.50.4.31
rc-07:3310:3402 [5] transport/net_ib.cc:2001 NCCL WARN NET/IB: Got completion from peer 10.50.0.44<38101> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.50.5.7 remoteGids::ffff:10.50.5.44
";
    let r = report(text);
    let nc001 = of(&r, "NC001");
    let mut subjects: Vec<String> = nc001.iter().map(|f| f.subject.describe()).collect();
    subjects.sort();
    assert_eq!(
        subjects,
        ["local GID ::ffff:10.50.5.7 GPU 5", "mlx5_4 GPU 4"],
        "{nc001:#?}"
    );
    let m = &nc001
        .iter()
        .find(|f| f.subject.device.as_deref() == Some("mlx5_4"))
        .unwrap()
        .message;
    assert!(
        m.contains("remote peer(s) 10.50.0.31 (GID ::ffff:10.50.4.31)") && !m.contains("40219"),
        "{m}"
    );
    // The failed modify_qp is NC004's, with its errno's meaning.
    let nc004 = of(&r, "NC004");
    assert_eq!(nc004.len(), 1);
    assert_eq!(nc004[0].severity, Severity::Error);
    assert!(
        nc004[0].message.contains("110 ETIMEDOUT"),
        "{}",
        nc004[0].message
    );
}

/// `nvidia-smi` answered only by `No devices were found` (a driver
/// container whose startup probe fails on a node that `lspci` shows with
/// its GPU, NVIDIA/gpu-operator#653): the tool failing, a warning. Under
/// `topo -m` the same; under `-i 9` it says only that no GPU has index 9,
/// and in `nvidia-smi nvlink -i 7` output it stays the nvlink reader's
/// note. Before, the first was an unread line of "a tool that is not
/// supported" and "nothing to analyse", the second an empty matrix of 0
/// GPUs, the third a `-q` field cut before its value (IN001).
#[test]
fn nvidia_smi_finding_no_gpu_is_the_tool_failing() {
    let text = "\
[root@worker3 drivers]# lspci | grep -i nvidia
21:00.0 3D controller: NVIDIA Corporation GA100 [A100 PCIe 40GB] (rev a1)
[root@worker3 drivers]# nvidia-smi
No devices were found
[root@worker3 drivers]# nvidia-smi topo -m
No devices were found
";
    let r = report(text);
    // One failure of the host: the two runs say the same.
    let failed = of(&r, "IN003");
    assert_eq!(failed.len(), 1, "{:#?}", r.findings);
    assert_eq!(failed[0].severity, Severity::Warning);
    assert!(failed
        .iter()
        .all(|f| f.subject.host.as_deref() == Some("worker3")));
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
    let d = doc(text);
    assert!(
        d.unrecognised.iter().all(|u| u.span.first_line < 3),
        "{:#?}",
        d.unrecognised
    );

    for chosen in [
        "root@gpu-2:~# nvidia-smi -i 9 -q\nNo devices were found\n",
        "root@gpu-2:~# nvidia-smi nvlink -i 7 -s\nNo devices were found\n",
    ] {
        let r = report(chosen);
        assert!(
            fired(&r, Severity::Info).is_empty(),
            "{chosen}: {:#?}",
            r.findings
        );
    }
}

/// One `ibv_devinfo` device of one InfiniBand port, as the tool prints it.
fn devinfo(hca: &str, fw: &str, guid: &str, sys_guid: &str, state: &str) -> String {
    format!(
        "hca_id: {hca}\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t{fw}\n\
         \tnode_guid:\t\t\t{guid}\n\tsys_image_guid:\t\t\t{sys_guid}\n\tvendor_id:\t\t\t0x02c9\n\
         \tvendor_part_id:\t\t\t4123\n\thw_ver:\t\t\t\t0x0\n\tboard_id:\t\t\tMT_0000000225\n\
         \tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n\t\t\tstate:\t\t\t{state}\n\
         \t\t\tmax_mtu:\t\t4096 (5)\n\t\t\tactive_mtu:\t\t4096 (5)\n\t\t\tsm_lid:\t\t\t0\n\
         \t\t\tport_lid:\t\t65535\n\t\t\tport_lmc:\t\t0x00\n\t\t\tlink_layer:\t\tInfiniBand\n\n"
    )
}

/// Two nodes' `ibv_devinfo` listings in one unnamed paste (a notes page's
/// fences under `## <node>` headings, which are no host names we read),
/// cabled back to back with no subnet manager. `ibv_devinfo` prints no
/// port GUID: the node GUIDs tell the two `mlx5_1`s apart. Before, the
/// second node's `mlx5_1` hid the first's (its IB002 silently lost), and
/// IB005 compared the first node's firmware with the second's ("runs
/// 20.34.1002 while 2 other adapters on the host run 20.31.1014").
#[test]
fn two_nodes_ibv_devinfo_listings_under_headings_stay_two_machines() {
    let init = "PORT_INIT (2)";
    let text = format!(
        "# RDMA devices\n## Alder\n```\n{}{}```\n## Birch\n```\n{}{}```\n",
        devinfo(
            "mlx5_0",
            "20.34.1002",
            "f4c2:d503:00a1:5510",
            "f4c2:d503:00a1:5510",
            init
        ),
        devinfo(
            "mlx5_1",
            "20.34.1002",
            "f4c2:d503:00a1:5511",
            "f4c2:d503:00a1:5510",
            init
        ),
        devinfo(
            "mlx5_0",
            "20.31.1014",
            "f4c2:d503:00b2:6620",
            "f4c2:d503:00b2:6620",
            init
        ),
        devinfo(
            "mlx5_1",
            "20.31.1014",
            "f4c2:d503:00b2:6621",
            "f4c2:d503:00b2:6620",
            init
        ),
    );
    let r = report(&text);
    let init_ports = of(&r, "IB002");
    assert_eq!(init_ports.len(), 4, "{:#?}", r.findings);
    assert!(of(&r, "IB005").is_empty(), "{:#?}", r.findings);

    // One machine pasted twice (the same node GUIDs) is still one: its
    // adapters' firmware is compared as before.
    let once = format!(
        "{}{}",
        devinfo(
            "mlx5_0",
            "20.34.1002",
            "f4c2:d503:00a1:5510",
            "f4c2:d503:00a1:5510",
            init
        ),
        devinfo(
            "mlx5_1",
            "20.31.1014",
            "f4c2:d503:00a1:5511",
            "f4c2:d503:00a1:5510",
            init
        ),
    );
    let twice = format!("{once}{once}");
    let r = report(&twice);
    assert_eq!(of(&r, "IB002").len(), 2, "{:#?}", r.findings);
    assert_eq!(of(&r, "IB005").len(), 1, "{:#?}", r.findings);
}

/// A `--query-gpu` CSV row of `[GPU requires reset]` is nvidia-smi
/// printing NVML's error for every field of a GPU it cannot read: DG004,
/// as `ERR!` across the summary table's row. `[N/A]` (a field the GPU
/// lacks) is no fault. Before, the paste was "healthy".
#[test]
fn a_query_gpu_row_of_nvml_errors_is_a_gpu_nvidia_smi_cannot_read() {
    let text = "\
$ nvidia-smi --query-gpu=index,pci.bus_id,temperature.gpu,ecc.errors.uncorrected.volatile.total,retired_pages.pending --format=csv
index, pci.bus_id, temperature.gpu, ecc.errors.uncorrected.volatile.total, retired_pages.pending
0, 00000000:18:00.0, 33, 0, [N/A]
1, 00000000:2A:00.0, [GPU requires reset], [GPU requires reset], [GPU requires reset]
2, 00000000:3A:00.0, 31, 0, [N/A]
";
    let r = report(text);
    let err = of(&r, "DG004");
    assert_eq!(err.len(), 1, "{:#?}", r.findings);
    assert_eq!(err[0].severity, Severity::Error);
    assert_eq!(err[0].subject.gpu, Some(1));
    assert_eq!(err[0].subject.bus_id.as_deref(), Some("00000000:2A:00.0"));
    assert_eq!(err[0].evidence[0].span.first_line, 4);
    assert_eq!(fired(&r, Severity::Warning), ["DG004"]);
    // One field NVML could not read on a GPU whose other fields read: a
    // warning, not a GPU in a failed state; every field unreadable is.
    let one = "\
$ nvidia-smi --query-gpu=index,pci.bus_id,temperature.gpu,power.draw,utilization.gpu --format=csv
index, pci.bus_id, temperature.gpu, power.draw, utilization.gpu
0, 00000000:18:00.0, 33, [Unknown Error], 0 %
1, 00000000:2A:00.0, [Unknown Error], [Unknown Error], [Unknown Error]
";
    let r = report(one);
    let mut dg: Vec<_> = of(&r, "DG004")
        .iter()
        .map(|f| (f.subject.gpu, f.severity))
        .collect();
    dg.sort_by_key(|(gpu, _)| *gpu);
    assert_eq!(
        dg,
        [(Some(0), Severity::Warning), (Some(1), Severity::Error)],
        "{:#?}",
        r.findings
    );
}

/// node_exporter's InfiniBand metrics of one port, as `curl -s
/// localhost:9100/metrics | grep node_infiniband` prints them, each
/// sample stamped `ms` (milliseconds since the epoch).
fn node_infiniband(symbol_errors: u64, xmit_octets: &str, state: u32, ms: u64) -> String {
    format!(
        "# HELP node_infiniband_info Non-numeric data from /sys/class/infiniband/<device>, value is always 1.\n\
         # TYPE node_infiniband_info gauge\n\
         node_infiniband_info{{board_id=\"MT_0000000838\",device=\"mlx5_0\",firmware_version=\"28.39.1002\",hca_type=\"MT4129\"}} 1 {ms}\n\
         # HELP node_infiniband_link_downed_total Number of times the link failed to recover from an error state and went down\n\
         # TYPE node_infiniband_link_downed_total counter\n\
         node_infiniband_link_downed_total{{device=\"mlx5_0\",port=\"1\"}} 0 {ms}\n\
         # HELP node_infiniband_physical_state_id Physical state of the InfiniBand port\n\
         # TYPE node_infiniband_physical_state_id gauge\n\
         node_infiniband_physical_state_id{{device=\"mlx5_0\",port=\"1\"}} 5 {ms}\n\
         # HELP node_infiniband_port_data_transmitted_bytes_total Number of data octets transmitted on all links\n\
         # TYPE node_infiniband_port_data_transmitted_bytes_total counter\n\
         node_infiniband_port_data_transmitted_bytes_total{{device=\"mlx5_0\",port=\"1\"}} {xmit_octets} {ms}\n\
         # HELP node_infiniband_port_errors_received_total Number of packets containing an error that were received on this port\n\
         # TYPE node_infiniband_port_errors_received_total counter\n\
         node_infiniband_port_errors_received_total{{device=\"mlx5_0\",port=\"1\"}} 0 {ms}\n\
         # HELP node_infiniband_rate_bytes_per_second Maximum signal transfer rate\n\
         # TYPE node_infiniband_rate_bytes_per_second gauge\n\
         node_infiniband_rate_bytes_per_second{{device=\"mlx5_0\",port=\"1\"}} 5e+10 {ms}\n\
         # HELP node_infiniband_state_id State of the InfiniBand port (0: no change, 1: down, 2: init, 3: armed, 4: active, 5: act defer)\n\
         # TYPE node_infiniband_state_id gauge\n\
         node_infiniband_state_id{{device=\"mlx5_0\",port=\"1\"}} {state} {ms}\n\
         # HELP node_infiniband_symbol_error_total Number of minor link errors detected on one or more physical lanes.\n\
         # TYPE node_infiniband_symbol_error_total counter\n\
         node_infiniband_symbol_error_total{{device=\"mlx5_0\",port=\"1\"}} {symbol_errors} {ms}\n\
         # HELP node_infiniband_unicast_packets_transmitted_total Number of unicast packets transmitted (including errors)\n\
         # TYPE node_infiniband_unicast_packets_transmitted_total counter\n\
         node_infiniband_unicast_packets_transmitted_total{{device=\"mlx5_0\",port=\"1\"}} 3.1e+09 {ms}\n"
    )
}

/// Two scrapes a minute apart (their samples' time stamps say so) whose
/// symbol errors climb: the counter rule judges node_exporter's metrics as
/// it judges perfquery's, with a rate. The `grep node_infiniband` filter
/// keeps what is read: no part of the paste is left out.
#[test]
fn two_node_exporter_scrapes_a_minute_apart_give_a_symbol_error_rate() {
    let text = format!(
        "[root@gpu07 ~]# curl -s localhost:9100/metrics | grep node_infiniband\n{}\
         [root@gpu07 ~]# curl -s localhost:9100/metrics | grep node_infiniband\n{}",
        node_infiniband(100, "1.2e+12", 4, 1_765_101_600_000),
        node_infiniband(1300, "1.2024e+12", 4, 1_765_101_660_000)
    );
    let d = doc(&text);
    let sections = sections_of(&d, Kind::NodeExporter);
    assert_eq!(sections.len(), 2, "{:#?}", d.sections);
    assert!(sections.iter().all(|s| s.host.as_deref() == Some("gpu07")));
    assert!(sections.iter().all(|s| s.warnings.is_empty()));
    let r = analyze(&[d], &Default::default());
    let rate = r
        .measurements
        .counter_rates
        .iter()
        .find(|r| &*r.counter == "SymbolErrorCounter")
        .expect("a SymbolErrorCounter rate");
    assert_eq!(
        rate.interval_seconds,
        Some(60.0),
        "{}",
        rate.interval_source
    );
    assert_eq!(rate.increase, Some(1200));
    let growth = of(&r, "IB112");
    assert_eq!(growth.len(), 1, "{:#?}", r.findings);
    assert!(
        growth[0].message.contains("mlx5_0 port 1"),
        "{}",
        growth[0].message
    );
    assert!(
        growth[0].message.contains("20.0/s"),
        "{}",
        growth[0].message
    );
    assert_eq!(growth[0].subject.host.as_deref(), Some("gpu07"));
    assert!(of(&r, "IN001").is_empty(), "{:#?}", r.findings);
}

/// A whole scrape of a healthy port, other collectors' metrics around the
/// InfiniBand ones: no finding, the other metrics set aside and counted
/// once, not read as unreadable lines.
#[test]
fn a_healthy_node_exporter_scrape_gives_no_finding() {
    let other = "# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.\n\
                 # TYPE node_cpu_seconds_total counter\n\
                 node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 2.93842211e+06\n\
                 node_cpu_seconds_total{cpu=\"0\",mode=\"iowait\"} 187.33\n\
                 # HELP node_filesystem_avail_bytes Filesystem space available to non-root users in bytes.\n\
                 # TYPE node_filesystem_avail_bytes gauge\n\
                 node_filesystem_avail_bytes{device=\"/dev/nvme0n1p2\",fstype=\"ext4\",mountpoint=\"/\"} 4.2161156096e+11\n";
    let tail = "# HELP node_load1 1m load average.\n# TYPE node_load1 gauge\nnode_load1 12.44\n\
                # HELP process_open_fds Number of open file descriptors.\n# TYPE process_open_fds gauge\nprocess_open_fds 9\n";
    let scrape = node_infiniband(0, "8.8e+14", 4, 1_765_101_600_000)
        .replace(&" 1765101600000\n".to_string(), "\n");
    let text = format!("{other}{scrape}{tail}");
    let d = doc(&text);
    let sections = sections_of(&d, Kind::NodeExporter);
    assert_eq!(sections.len(), 1, "{:#?}", d.sections);
    assert!(
        sections[0].warnings.is_empty(),
        "{:?}",
        sections[0].warnings
    );
    let fabricscope::SectionData::NodeExporter(m) = &sections[0].data else {
        panic!("{:?}", sections[0].data)
    };
    // The other collectors' lines after the InfiniBand ones.
    assert_eq!(m.other_metric_lines(), 6);
    let r = analyze(&[d], &Default::default());
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

/// A paste cut inside its last metric line names the cut (IN001), and
/// judges what it holds.
#[test]
fn a_node_exporter_scrape_cut_in_its_last_line_is_partial() {
    let whole = node_infiniband(0, "8.8e+14", 4, 1_765_101_600_000);
    for cut in [
        "node_infiniband_symbol_error_total{device=\"mlx5_0\",po",
        "node_infiniband_symbol_error_total{device=\"mlx5_0\",port=\"1\"} ",
    ] {
        let at = whole.find("node_infiniband_symbol_error_total{").unwrap();
        let text = format!("{}{cut}", &whole[..at]);
        let r = report(&text);
        let partial = of(&r, "IN001");
        assert_eq!(partial.len(), 1, "{cut}: {:#?}", r.findings);
        assert!(
            partial[0].message.contains("node_exporter"),
            "{}",
            partial[0].message
        );
        assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
    }
}

/// A query's result across the fleet (`promtool query instant`) names
/// each series' host in its `instance` label: each host's ports are
/// judged as that host's.
#[test]
fn a_node_exporter_query_across_hosts_gives_findings_per_host() {
    let text = "$ promtool query instant http://prom:9090 '{__name__=~\"node_infiniband_(symbol_error_total|state_id|physical_state_id)\"}'\n\
        node_infiniband_physical_state_id{device=\"mlx5_0\", instance=\"gpu01:9100\", job=\"node\", port=\"1\"} => 5 @[1765101600]\n\
        node_infiniband_physical_state_id{device=\"mlx5_0\", instance=\"gpu02:9100\", job=\"node\", port=\"1\"} => 5 @[1765101600]\n\
        node_infiniband_physical_state_id{device=\"mlx5_0\", instance=\"gpu03:9100\", job=\"node\", port=\"1\"} => 2 @[1765101600]\n\
        node_infiniband_state_id{device=\"mlx5_0\", instance=\"gpu01:9100\", job=\"node\", port=\"1\"} => 4 @[1765101600]\n\
        node_infiniband_state_id{device=\"mlx5_0\", instance=\"gpu02:9100\", job=\"node\", port=\"1\"} => 4 @[1765101600]\n\
        node_infiniband_state_id{device=\"mlx5_0\", instance=\"gpu03:9100\", job=\"node\", port=\"1\"} => 1 @[1765101600]\n\
        node_infiniband_symbol_error_total{device=\"mlx5_0\", instance=\"gpu01:9100\", job=\"node\", port=\"1\"} => 0 @[1765101600]\n\
        node_infiniband_symbol_error_total{device=\"mlx5_0\", instance=\"gpu02:9100\", job=\"node\", port=\"1\"} => 65535 @[1765101600]\n\
        node_infiniband_symbol_error_total{device=\"mlx5_0\", instance=\"gpu03:9100\", job=\"node\", port=\"1\"} => 0 @[1765101600]\n";
    let d = doc(text);
    let hosts: Vec<Option<&str>> = sections_of(&d, Kind::NodeExporter)
        .iter()
        .map(|s| s.host.as_deref())
        .collect();
    assert_eq!(hosts, [Some("gpu01"), Some("gpu02"), Some("gpu03")]);
    let r = analyze(&[d], &Default::default());
    let hosts_of = |rule: &str| -> Vec<Option<String>> {
        of(&r, rule)
            .iter()
            .map(|f| f.subject.host.clone())
            .collect()
    };
    assert_eq!(hosts_of("IB101"), [Some("gpu02".to_owned())]);
    assert_eq!(hosts_of("IB111"), [Some("gpu02".to_owned())]);
    assert_eq!(hosts_of("IB001"), [Some("gpu03".to_owned())]);
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
}

/// bash's default prompt in a container (`sh-5.1# `, `bash-4.4$ `) runs
/// the command whose output follows, and a bare one after that output is
/// the prompt coming back. Before, neither was a prompt: the output had no
/// command and the bare prompt was an unread line of it (IN002).
#[test]
fn a_containers_sh_version_prompt_runs_the_command_under_it() {
    let text = "\
sh-5.1# ibstatus mlx5_3
Infiniband device 'mlx5_3' port 1 status:
\tdefault gid:\t fe80:0000:0000:0000:5a2b:9c03:00d1:7e40
\tbase lid:\t 0x11
\tsm lid:\t\t 0x2
\tstate:\t\t 1: DOWN
\tphys state:\t 2: Polling
\trate:\t\t 10 Gb/sec (4X SDR)
\tlink_layer:\t InfiniBand
sh-5.1# 
";
    let d = doc(text);
    let status = sections_of(&d, Kind::Ibstatus);
    assert_eq!(status.len(), 1, "{:#?}", d.sections);
    assert_eq!(status[0].command.as_deref(), Some("ibstatus mlx5_3"));
    let r = report(text);
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
    assert!(
        fired(&r, Severity::Error).contains(&"IB001"),
        "{:#?}",
        r.findings
    );
}

/// sudo's `[sudo] password for …:` between the command and its output is
/// the terminal's line: the command goes on under it. Before, it was read
/// as the host heading `[sudo]`: an unread line of an empty ibstat run
/// (IN002), and the output after it had no command.
#[test]
fn sudos_password_prompt_leaves_the_command_its_output() {
    let text = "\
ops@rack4-n2:~$ sudo ibstat mlx5_2
[sudo] password for ops: 
CA 'mlx5_2'
\tCA type: MT4129
\tNumber of ports: 1
\tFirmware version: 28.40.1000
\tHardware version: 0
\tNode GUID: 0x946dae0300f1c2a0
\tSystem image GUID: 0x946dae0300f1c2a0
\tPort 1:
\t\tState: Active
\t\tPhysical state: LinkUp
\t\tRate: 400
\t\tBase lid: 23
\t\tLMC: 0
\t\tSM lid: 1
\t\tCapability mask: 0xa751e84a
\t\tPort GUID: 0x946dae0300f1c2a0
\t\tLink layer: InfiniBand
";
    let d = doc(text);
    let ibstat = sections_of(&d, Kind::Ibstat);
    assert_eq!(ibstat.len(), 1, "{:#?}", d.sections);
    assert_eq!(ibstat[0].command.as_deref(), Some("sudo ibstat mlx5_2"));
    assert_eq!(ibstat[0].host.as_deref(), Some("rack4-n2"));
    let r = report(text);
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
}

/// An AsciiDoc page (`[source,terminal]` over a `----` block): the command
/// alone in one block, `+` and `.Example output`, then its output in the
/// next block. Before, the delimiters and the markup after a block were
/// unread lines of the output above them (IN002), and the prompt's block
/// was a run of its own that printed nothing.
#[test]
fn asciidoc_listing_blocks_frame_a_command_and_its_output() {
    let text = "\
. Show the RDMA links:
+
[source,terminal]
----
sh-5.1# rdma link show
----
+
.Example output
[source,terminal]
----
link mlx5_0/1 state ACTIVE physical_state LINK_UP 
link mlx5_1/1 subnet_prefix fe80:0000:0000:0000 lid 9 sm_lid 1 lmc 0 state DOWN physical_state POLLING 
link mlx5_2/1 state ACTIVE physical_state LINK_UP netdev net1
----
+
In this example, `mlx5_2` is the device of `net1`.
";
    let d = doc(text);
    let links = sections_of(&d, Kind::RdmaLink);
    assert_eq!(links.len(), 1, "{:#?}", d.sections);
    assert_eq!(links[0].command.as_deref(), Some("rdma link show"));
    assert!(links[0].warnings.is_empty(), "{:#?}", links[0].warnings);
    let r = report(text);
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
    assert!(
        fired(&r, Severity::Error).contains(&"IB001"),
        "{:#?}",
        r.findings
    );

    // Four dashes with no attribute line above them stay a rule of the
    // output (no block opens, so none closes at the next one).
    let plain = "\
$ rdma link show
link mlx5_0/1 state ACTIVE physical_state LINK_UP 
----
link mlx5_1/1 state ACTIVE physical_state LINK_UP 
";
    let d = doc(plain);
    assert_eq!(
        sections_of(&d, Kind::RdmaLink).len(),
        1,
        "{:#?}",
        d.sections
    );
}

/// A GPU's PCIe AER errors, its Xid 79 and the driver's failed re-init
/// (`dmesg | grep -i -e aer -e nvrm`): one incident for the GPU, the
/// detail lines its events' (none unread), the root port's own
/// corrected error a finding of its own, `info`.
#[test]
fn a_gpus_aer_errors_xid_and_failed_init_are_one_incident() {
    let text = "\
root@gpu-a17:~# dmesg | grep -i -e aer -e nvrm
[ 8811.402113] pcieport 0000:00:03.1: AER: Multiple Corrected error received: 0000:21:00.0
[ 8811.402180] pcieport 0000:00:03.1: PCIe Bus Error: severity=Corrected, type=Data Link Layer, (Transmitter ID)
[ 8811.402183] pcieport 0000:00:03.1:   device [1022:1483] error status/mask=00001000/00006000
[ 8811.402187] pcieport 0000:00:03.1:    [12] Timeout
[ 9102.551210] pcieport 0000:00:03.1: AER: Uncorrected (Fatal) error received: 0000:21:00.0
[ 9102.551260] nvidia 0000:21:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)
[ 9102.551263] nvidia 0000:21:00.0:   device [10de:2330] error status/mask=00004000/00000000
[ 9102.551266] nvidia 0000:21:00.0:    [14] CmpltTO                (First)
[ 9102.551270] nvidia 0000:21:00.0: AER:   TLP Header: 00000000 00000000 00000000 00000000
[ 9102.602311] NVRM: Xid (PCI:0000:21:00): 79, pid=4411, name=python3, GPU has fallen off the bus.
[ 9240.117004] NVRM: GPU 0000:21:00.0: RmInitAdapter failed! (0x26:0xffff:1477)
[ 9240.117190] NVRM: GPU 0000:21:00.0: rm_init_adapter failed, device minor number 2
root@gpu-a17:~# 
";
    let d = doc(text);
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    let r = analyze(&[d], &Default::default());
    let aer = of(&r, "IB015");
    assert_eq!(aer.len(), 2, "{aer:#?}");
    let gpu = aer
        .iter()
        .find(|f| f.subject.bus_id.as_deref() == Some("0000:21:00.0"))
        .expect("the GPU's AER finding");
    assert_eq!(gpu.severity, Severity::Error);
    assert!(gpu.message.contains("CmpltTO"), "{}", gpu.message);
    assert!(
        gpu.message.contains("root port 0000:00:03.1"),
        "{}",
        gpu.message
    );
    let port = aer.iter().find(|f| f.subject.bus_id.is_none()).unwrap();
    assert_eq!(port.severity, Severity::Info);
    let init = of(&r, "DG008");
    assert_eq!(init.len(), 1);
    assert_eq!(init[0].severity, Severity::Error);
    assert!(
        init[0].message.contains("minor number 2"),
        "{}",
        init[0].message
    );
    let rules_of = |i: &fabricscope::report::Incident| -> Vec<&str> {
        let mut v: Vec<&str> = i.members(&r.findings).map(|f| f.rule).collect();
        v.sort_unstable();
        v
    };
    assert!(
        r.incidents
            .iter()
            .any(|i| rules_of(i) == ["DG006", "DG008", "IB015"]),
        "{:#?}",
        r.incidents.iter().map(rules_of).collect::<Vec<_>>()
    );
}

/// An RmInitAdapter failure a later line shows overcome (the GPU's DRM
/// device registered) is no lasting failure: a warning, said so.
#[test]
fn an_init_failure_followed_by_the_gpu_up_is_a_warning() {
    let text = "\
[   12.904311] NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x26:0xffff:1477)
[   12.904400] NVRM: GPU 0000:3b:00.0: rm_init_adapter failed, device minor number 0
[   19.104520] [drm] Initialized nvidia-drm 0.0.0 20160202 for 0000:3b:00.0 on minor 1
";
    let r = report(text);
    let init = of(&r, "DG008");
    assert_eq!(init.len(), 1);
    assert_eq!(init[0].severity, Severity::Warning);
    assert!(
        init[0].message.contains("not a lasting failure"),
        "{}",
        init[0].message
    );
    // Without the later line, in a log that ran to its end (a prompt
    // follows), an error; in a paste that may be cut after the failure,
    // the missing bring-up is no evidence: a warning that says so.
    let failed: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
    let ended = format!("$ dmesg | grep -i nvrm\n{failed}$ \n");
    assert_eq!(of(&report(&ended), "DG008")[0].severity, Severity::Error);
    let cut = of(&report(&failed), "DG008")[0].clone();
    assert_eq!(cut.severity, Severity::Warning);
    assert!(cut.message.contains("may be cut"), "{}", cut.message);
}

/// dcgm-exporter's metrics of one GPU, as `curl -s localhost:9400/metrics`
/// prints them (the `default-counters.csv` set and the exporter's labels),
/// its last Xid `xid`.
fn dcgm_gpu(gpu: u32, bus: &str, xid: u32) -> String {
    let labels = format!(
        "gpu=\"{gpu}\",UUID=\"GPU-5d1e0c2a-77b1-4c0e-9a3f-0000000000{gpu:02}\",pci_bus_id=\"{bus}\",device=\"nvidia{gpu}\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"gpu11\",DCGM_FI_DRIVER_VERSION=\"550.90.07\""
    );
    let xid_labels = if xid == 0 {
        format!("{labels},err_code=\"0\",err_msg=\"No Error\"")
    } else {
        format!("{labels},err_code=\"{xid}\",err_msg=\"GPU has fallen off the bus\"")
    };
    format!(
        "DCGM_FI_DEV_SM_CLOCK{{{labels}}} 1980\n\
         DCGM_FI_DEV_GPU_TEMP{{{labels}}} 44\n\
         DCGM_FI_DEV_POWER_USAGE{{{labels}}} 512.337\n\
         DCGM_FI_DEV_PCIE_REPLAY_COUNTER{{{labels}}} 0\n\
         DCGM_FI_DEV_GPU_UTIL{{{labels}}} 100\n\
         DCGM_FI_DEV_XID_ERRORS{{{xid_labels}}} {xid}\n\
         DCGM_FI_DEV_FB_USED{{{labels}}} 71234\n\
         DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{{{labels}}} 8.1234567e+10\n\
         DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{{{labels}}} 0\n\
         DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS{{{labels}}} 3\n\
         DCGM_FI_DEV_ROW_REMAP_FAILURE{{{labels}}} 0\n\
         DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{labels}}} 0.981\n"
    )
}

/// A busy, healthy node's scrape (two GPUs, the exporter's own `go_*`
/// metrics after): no finding, the other metrics set aside and counted,
/// no line unread; the host is the exporter's `Hostname` label.
#[test]
fn a_healthy_dcgm_exporter_scrape_gives_no_finding() {
    let text = format!(
        "$ curl -s localhost:9400/metrics\n\
         # HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.\n\
         # TYPE DCGM_FI_DEV_XID_ERRORS gauge\n{}{}\
         # HELP go_goroutines Number of goroutines that currently exist.\n\
         # TYPE go_goroutines gauge\n\
         go_goroutines 23\n",
        dcgm_gpu(0, "00000000:18:00.0", 0),
        dcgm_gpu(1, "00000000:2A:00.0", 0)
    );
    let d = doc(&text);
    let sections = sections_of(&d, Kind::DcgmExporter);
    assert_eq!(sections.len(), 1, "{:#?}", d.sections);
    assert_eq!(sections[0].host.as_deref(), Some("gpu11"));
    assert!(
        sections[0].warnings.is_empty(),
        "{:?}",
        sections[0].warnings
    );
    let fabricscope::SectionData::DcgmExporter(m) = &sections[0].data else {
        panic!("{:?}", sections[0].data)
    };
    assert_eq!(m.other_metric_lines(), 3);
    assert_eq!(m.hosts[0].gpus.len(), 2);
    let r = analyze(&[d], &Default::default());
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    // The Xid and row remap rules read the gauges: checked, not skipped.
    for rule in ["DG003", "DG006"] {
        assert!(
            !r.skipped_rules.iter().any(|s| s.rule == rule),
            "{rule}: {:?}",
            r.skipped_rules
        );
    }
}

/// dcgm-exporter served on a port of its deployment's choosing (`:8080`,
/// a Kubernetes service's), its comments filtered out: the scrape is read
/// by its metric names, not taken for node_exporter's from its `/metrics`
/// URL, and the filter that left out only `#` lines hides no metric (no
/// IN001). Before, the DCGM lines were set aside under node_exporter's
/// claim of every `/metrics` URL and nothing was judged.
#[test]
fn a_dcgm_scrape_on_another_port_without_comments_is_read_whole() {
    for prompt in [
        "$ curl -s gpu11:8080/metrics | grep -v '^#'",
        "$ curl -s http://10.0.0.11/metrics | grep -v '^#' | grep -v '^$'",
    ] {
        let text = format!(
            "{prompt}\n{}{}",
            dcgm_gpu(0, "00000000:18:00.0", 0),
            dcgm_gpu(1, "00000000:2A:00.0", 79)
        );
        let r = report(&text);
        assert_eq!(of(&r, "DG006").len(), 1, "{prompt}: {:#?}", r.findings);
        assert!(of(&r, "IN001").is_empty(), "{prompt}: {:#?}", r.findings);
    }
    // A filter that keeps some metrics still leaves the others out.
    let text = format!(
        "$ curl -s gpu11:8080/metrics | grep -v '^#' | grep XID\n{}",
        dcgm_gpu(1, "00000000:2A:00.0", 79)
            .lines()
            .filter(|l| l.contains("XID"))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    );
    let r = report(&text);
    assert_eq!(of(&r, "DG006").len(), 1, "{:#?}", r.findings);
    assert_eq!(of(&r, "IN001").len(), 1, "{:#?}", r.findings);
}

/// A GPU whose last-Xid gauge reads 79: DG006 names the code from the Xid
/// table, says the gauge shows only the last code and not when, and is a
/// warning (the code may be older than the GPU's last reset).
#[test]
fn a_dcgm_exporter_last_xid_79_is_judged_with_its_caveat() {
    let text = format!(
        "$ curl -s localhost:9400/metrics\n{}{}",
        dcgm_gpu(0, "00000000:18:00.0", 0),
        dcgm_gpu(1, "00000000:2A:00.0", 79)
    );
    let r = report(&text);
    let xid = of(&r, "DG006");
    assert_eq!(xid.len(), 1, "{:#?}", r.findings);
    let f = xid[0];
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.subject.host.as_deref(), Some("gpu11"));
    assert_eq!(f.subject.gpu, Some(1));
    assert_eq!(f.subject.bus_id.as_deref(), Some("00000000:2A:00.0"));
    for words in [
        "Xid 79",
        "fallen off the bus",
        "only the last code",
        "does not show",
    ] {
        assert!(f.message.contains(words), "{words}: {}", f.message);
    }
    // The XID line of GPU 1: the command, GPU 0's 12 lines, then 6th.
    assert_eq!(f.evidence[0].span.first_line, 1 + 12 + 6);
    assert!(f.remediation.contains("grep -i xid"), "{}", f.remediation);
    assert_eq!(r.findings.len(), 1, "{:#?}", r.findings);
}

/// A query's result across hosts names each series' host in `instance`
/// (before the exporter's `Hostname`, as node_exporter's reader does):
/// each host's GPUs are judged as that host's.
#[test]
fn a_dcgm_exporter_query_across_hosts_gives_findings_per_host() {
    let text = "$ promtool query instant http://prom:9090 '{__name__=~\"DCGM_FI_DEV_(XID_ERRORS|ROW_REMAP_FAILURE)\"}'\n\
        DCGM_FI_DEV_ROW_REMAP_FAILURE{Hostname=\"dcgm-exporter-7xk2p\", UUID=\"GPU-a1\", gpu=\"0\", instance=\"gpu01:9400\", job=\"dcgm\", pci_bus_id=\"00000000:18:00.0\"} => 0 @[1765101600]\n\
        DCGM_FI_DEV_ROW_REMAP_FAILURE{Hostname=\"dcgm-exporter-9qm4t\", UUID=\"GPU-b1\", gpu=\"0\", instance=\"gpu02:9400\", job=\"dcgm\", pci_bus_id=\"00000000:18:00.0\"} => 1 @[1765101600]\n\
        DCGM_FI_DEV_XID_ERRORS{Hostname=\"dcgm-exporter-7xk2p\", UUID=\"GPU-a1\", err_code=\"48\", gpu=\"0\", instance=\"gpu01:9400\", job=\"dcgm\", pci_bus_id=\"00000000:18:00.0\"} => 48 @[1765101600]\n\
        DCGM_FI_DEV_XID_ERRORS{Hostname=\"dcgm-exporter-9qm4t\", UUID=\"GPU-b1\", err_code=\"0\", gpu=\"0\", instance=\"gpu02:9400\", job=\"dcgm\", pci_bus_id=\"00000000:18:00.0\"} => 0 @[1765101600]\n";
    let d = doc(text);
    let hosts: Vec<Option<&str>> = sections_of(&d, Kind::DcgmExporter)
        .iter()
        .map(|s| s.host.as_deref())
        .collect();
    assert_eq!(hosts, [Some("gpu01"), Some("gpu02")]);
    let r = analyze(&[d], &Default::default());
    let hosts_of = |rule: &str| -> Vec<(Option<String>, Severity)> {
        of(&r, rule)
            .iter()
            .map(|f| (f.subject.host.clone(), f.severity))
            .collect()
    };
    assert_eq!(
        hosts_of("DG006"),
        [(Some("gpu01".to_owned()), Severity::Warning)]
    );
    assert_eq!(
        hosts_of("DG003"),
        [(Some("gpu02".to_owned()), Severity::Error)]
    );
    assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
}

/// A scrape cut inside its last metric line names the cut (IN001), and
/// judges what it holds.
#[test]
fn a_dcgm_exporter_scrape_cut_in_its_last_line_is_partial() {
    let whole = dcgm_gpu(0, "00000000:18:00.0", 0);
    let at = whole.find("DCGM_FI_DEV_XID_ERRORS{").unwrap();
    let line_end = at + whole[at..].find('}').unwrap() + 1;
    for cut in [&whole[..at + 30], &whole[..line_end]] {
        let text = format!("$ curl -s localhost:9400/metrics\n{cut}");
        let r = report(&text);
        let partial = of(&r, "IN001");
        assert_eq!(partial.len(), 1, "{cut}: {:#?}", r.findings);
        assert!(
            partial[0].message.contains("dcgm-exporter"),
            "{}",
            partial[0].message
        );
        assert!(of(&r, "IN002").is_empty(), "{:#?}", r.findings);
        assert!(of(&r, "DG006").is_empty(), "{:#?}", r.findings);
    }
}

/// `journalctl -k -o short-full -g mlx5` on one host: the weekday, the
/// date, the zone. Before, no line was read (the paste was no tool's
/// output); now the host is named and the two downs three hours apart,
/// each back up, are separate events, not a flapping link.
#[test]
fn journalctl_short_full_lines_name_their_host_and_order_their_downs() {
    let text = "\
[root@gpu-q11 ~]# journalctl -k -o short-full -g mlx5
Tue 2026-12-08 07:14:02 UTC gpu-q11 kernel: mlx5_core 0000:c1:00.0 ibp193s0: Link down
Tue 2026-12-08 07:14:09 UTC gpu-q11 kernel: mlx5_core 0000:c1:00.0 ibp193s0: Link up
Tue 2026-12-08 10:31:40 UTC gpu-q11 kernel: mlx5_core 0000:c1:00.0 ibp193s0: Link down
Tue 2026-12-08 10:31:47 UTC gpu-q11 kernel: mlx5_core 0000:c1:00.0 ibp193s0: Link up
[root@gpu-q11 ~]# 
";
    let d = doc(text);
    let logs = sections_of(&d, Kind::KernelLog);
    assert_eq!(logs.len(), 1, "{:?}", d.unrecognised);
    assert_eq!(logs[0].host.as_deref(), Some("gpu-q11"));
    let r = analyze(&[d], &Default::default());
    let link = of(&r, "IB011");
    assert_eq!(link.len(), 1, "{:?}", r.findings);
    assert_eq!(link[0].severity, Severity::Info, "{}", link[0].message);
    assert!(link[0].message.contains("apart"), "{}", link[0].message);
}

/// A SONiC-style collector file (`host LEVEL kernel: [uptime] …`) of two
/// hosts: each host is a section of its own, one host's up is not the
/// other's. Before, nothing was read.
#[test]
fn leveled_syslog_lines_of_two_hosts_are_two_hosts_logs() {
    let text = "\
Dec  8 09:00:01.104211 rack3-n01 NOTICE kernel: [ 5120.410112] mlx5_core 0000:4b:00.0 ibp75s0: Link down
Dec  8 09:00:01.220931 rack3-n02 NOTICE kernel: [ 6402.118201] mlx5_core 0000:4b:00.0 ibp75s0: Link down
Dec  8 09:00:06.301145 rack3-n01 INFO kernel: [ 5125.607245] mlx5_core 0000:4b:00.0 ibp75s0: Link up
Dec  8 09:02:11.871002 rack3-n01 NOTICE kernel: [ 5255.177109] mlx5_core 0000:4b:00.0 ibp75s0: Link down
Dec  8 09:02:17.004513 rack3-n01 INFO kernel: [ 5260.310620] mlx5_core 0000:4b:00.0 ibp75s0: Link up
Dec  8 09:05:00.000000 rack3-n02 INFO kernel: [ 6701.000000] mlx5_core 0000:4b:00.0 ibp75s0: Link up
";
    let d = doc(text);
    let mut hosts: Vec<_> = sections_of(&d, Kind::KernelLog)
        .iter()
        .map(|s| s.host.clone())
        .collect();
    hosts.sort();
    assert_eq!(
        hosts,
        vec![Some("rack3-n01".to_owned()), Some("rack3-n02".to_owned())]
    );
    let r = analyze(&[d], &Default::default());
    let link = of(&r, "IB011");
    assert_eq!(link.len(), 2, "{:?}", r.findings);
    let severity_of = |host: &str| {
        link.iter()
            .find(|f| f.subject.host.as_deref() == Some(host))
            .map(|f| f.severity)
    };
    assert_eq!(severity_of("rack3-n01"), Some(Severity::Warning));
    assert_eq!(severity_of("rack3-n02"), Some(Severity::Info));
}

/// OpenWrt's `logread` (`Wed Dec  9 … 2026 kern.info kernel: [uptime]`):
/// the ctime-style time and the facility word, no host (the prompt names
/// it); and a syslog
/// file's `host kern.info kernel:`. Before, nothing was read.
#[test]
fn logread_lines_are_read_with_their_uptime() {
    let text = "\
root@edge-gw:~# logread | grep mlx5
Wed Dec  9 04:12:55 2026 kern.info kernel: [ 3301.220114] mlx5_core 0000:01:00.0 eth2: Link down
Wed Dec  9 04:13:01 2026 kern.info kernel: [ 3307.551902] mlx5_core 0000:01:00.0 eth2: Link up
root@edge-gw:~# 
";
    // An rsyslog template with the facility and level after the host.
    let facility = "\
$ grep mlx5 /var/log/kern.log
Dec  9 04:12:55 gpu-r02 kern.info kernel: mlx5_core 0000:01:00.0 eth2: Link down
Dec  9 04:13:01 gpu-r02 kern.info kernel: mlx5_core 0000:01:00.0 eth2: Link up
$ 
";
    for (text, host) in [(text, "edge-gw"), (facility, "gpu-r02")] {
        let r = report(text);
        let link = of(&r, "IB011");
        assert_eq!(link.len(), 1, "{text}: {:?}", r.findings);
        assert_eq!(link[0].severity, Severity::Info);
        assert_eq!(link[0].subject.host.as_deref(), Some(host));
        assert!(of(&r, "IN002").is_empty(), "{:?}", r.findings);
    }
}

/// `dmesg -x` and `dmesg -r` show user space's lines in the ring buffer
/// (`user  :warn  : …`, `<14>…`): a script that echoes an adapter's line
/// is not the adapter. Before, the `<14>` line was judged as the kernel's
/// (a second down, flapping) and the `user` lines were unread (IN002);
/// now they are other messages, and one down and up is what remains.
#[test]
fn another_facilitys_lines_in_dmesg_are_not_the_kernels() {
    let text = "\
$ dmesg -x | grep -E 'mlx5|ibp'
kern  :info  : [ 9120.400110] mlx5_core 0000:4b:00.0 ibp75s0: Link down
user  :notice: [ 9121.000000] linkcheck: mlx5_core 0000:4b:00.0 ibp75s0: Link down seen
kern  :info  : [ 9126.810552] mlx5_core 0000:4b:00.0 ibp75s0: Link up
$ 
";
    let raw = "\
$ dmesg -r | grep ibp75s0
<6>[ 9120.400110] mlx5_core 0000:4b:00.0 ibp75s0: Link down
<14>[ 9122.000000] mlx5_core 0000:4b:00.0 ibp75s0: Link down
<6>[ 9126.810552] mlx5_core 0000:4b:00.0 ibp75s0: Link up
$ 
";
    for text in [text, raw] {
        let r = report(text);
        assert!(of(&r, "IN002").is_empty(), "{text}: {:?}", r.findings);
        let link = of(&r, "IB011");
        assert_eq!(link.len(), 1, "{text}: {:?}", r.findings);
        assert_eq!(link[0].severity, Severity::Info, "{}", link[0].message);
        assert_eq!(link[0].evidence.len(), 2, "{:?}", link[0].evidence);
    }
}
