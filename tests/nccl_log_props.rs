//! Properties of the NCCL debug log parser: every non-blank line is
//! accounted for (a fact, a counted NCCL line, or a program line), a
//! generated completion error, async event or failed verbs call reads
//! back, a cut event line is partial, and no text makes it panic.

// Test helpers fail loudly on bad fixtures, like the tests they serve.
#![allow(clippy::panic, clippy::unwrap_used, clippy::indexing_slicing)]

use fabricscope::model::nccl_log::NcclLog;
use fabricscope::parse::lines_of;
use fabricscope::parse::nccl_log::{parse, split_line};
use proptest::prelude::*;

/// Lines the parser files as facts or counts, and those it lists.
fn accounted(log: &NcclLog) -> usize {
    // A WARN line is one warning (a completion error is also a warning).
    log.versions.len()
        + log.networks.len()
        + log.net_devices.len()
        + log.channels.len()
        + log.warnings.len()
        + log.other_nccl_lines
        + log.program_lines.len()
}

fn nccl_line() -> impl Strategy<Value = String> {
    let host = "[a-z][a-z0-9-]{0,12}";
    let message = prop::sample::select(vec![
        "INFO Using network IB",
        "INFO Using network Socket",
        "INFO NET/IB : No device found.",
        "INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB ib0:10.0.0.1<0>",
        "INFO NET/Socket : Using [0]eth0:10.0.0.1<0>",
        "INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
        "INFO Channel 01/0 : 1[1] -> 2[0] [send] via NET/IB/0/GDRDMA",
        "INFO Channel 00 : 0[1b000] -> 1[1c000] via SHM/direct/direct",
        "INFO Channel 00/02 :    0   1",
        "INFO NCCL version 2.21.5+cuda12.4",
        "INFO proxy.cc:694 -> 6",
        "WARN NET/IB : Got completion from peer 10.0.0.2<1> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::1 remoteGids::2",
        "WARN NET/IB: Got completion from peer 10.0.0.2<1> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129  hca mlx5_0",
        "WARN Call to ibv_modify_qp failed with error Connection timed out",
        "WARN NET/IB : Got async event : port error",
        "WARN NET/IB : mlx5_3:1 Got async event : port active",
        "WARN NET/IB : mlx5_0:1 async fatal event: local catastrophic error",
        "WARN NET/IB : mlx5_0:1 Got non-fatal async event: SM change(14)",
        "WARN NET/IB : mlx5_0:1 GID table changed",
        "WARN Call to ibv_create_qp failed",
        "WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_1:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:10.0.0.1, remote GID N/A",
        "WARN NET/IB : Unable to open device mlx5_4",
        "INFO Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_1:1, retrying 1/2 after 500 msec of sleep",
        "WARN",
        "INFO",
    ]);
    (
        host,
        0u32..99999,
        0u32..99999,
        0u32..16,
        prop::bool::ANY,
        message,
    )
        .prop_map(|(h, pid, tid, dev, loc, m)| {
            let loc = if loc { " transport/net_ib.cc:1696" } else { "" };
            format!("{h}:{pid}:{tid} [{dev}]{loc} NCCL {m}")
        })
}

fn any_line() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => nccl_line(),
        1 => "[ -~]{0,60}",
        1 => Just("NCCL version 2.4.8+cuda10.1".to_owned()),
        1 => Just("Traceback (most recent call last):".to_owned()),
    ]
}

proptest! {
    #[test]
    fn every_line_is_accounted_for(lines in prop::collection::vec(any_line(), 0..40)) {
        let text = lines.join("\n");
        let log = parse(&lines_of(&text)).value;
        let non_blank = text.lines().filter(|l| !l.trim().is_empty()).count();
        prop_assert_eq!(accounted(&log), non_blank);
    }

    #[test]
    fn any_text_is_read_without_panic(text in "\\PC{0,400}") {
        let _ = parse(&lines_of(&text));
        for line in text.lines() {
            let _ = split_line(line);
        }
    }

    /// Every async event line reads back its device, port and event, in
    /// each release's wording; an event line that is not the last is
    /// never partial, whatever its words.
    #[test]
    fn an_async_event_reads_back(
        event in prop::sample::select(vec!["port error", "port active", "local catastrophic error", "LID change", "client reregistration", "GID table change"]),
        form in 0usize..4,
        device in "mlx5_[0-9]{1,2}",
        port in 1u32..3,
        dev in 0u32..8,
    ) {
        let body = match form {
            0 => format!("Got async event : {event}"),
            1 => format!("{device}:{port} Got async event : {event}"),
            2 => format!("{device}:{port} Got async error event: {event}"),
            _ => format!("{device}:{port} Got non-fatal async event: {event}(10)"),
        };
        let text = format!(
            "g1:100:200 [{dev}] transport/net_ib.cc:101 NCCL WARN NET/IB : {body}\ng1:100:200 [{dev}] NCCL INFO proxy.cc:694 -> 6\n"
        );
        let log = parse(&lines_of(&text)).value;
        prop_assert_eq!(log.ib_async_events.len(), 1);
        let e = &log.ib_async_events[0];
        prop_assert_eq!(e.event.as_str(), event);
        prop_assert!(e.partial.is_none());
        if form == 0 {
            prop_assert_eq!((e.device.as_deref(), e.port), (None, None));
        } else {
            prop_assert_eq!((e.device.as_deref(), e.port), (Some(device.as_str()), Some(port)));
        }
        prop_assert_eq!(e.at.cuda_dev, Some(dev));
    }

    /// A failed call's errno reads back from its number or its text.
    #[test]
    fn a_failed_verbs_call_reads_back(
        errno in prop::sample::select(vec![(12u32, "Cannot allocate memory"), (110, "Connection timed out"), (22, "Invalid argument"), (19, "No such device")]),
        call in prop::sample::select(vec!["ibv_create_qp", "ibv_reg_mr", "ibv_modify_qp", "ibv_create_cq"]),
        form in 0usize..3,
    ) {
        let (n, t) = errno;
        let reason = match form {
            0 => format!("with error {t}"),
            1 => format!("with error {t} errno {n}"),
            _ => format!("with {n} {t}, on dev mlx5_2:1, curr state RTR, next state RTS, local GID index 0, local GID fe80::1, remote GID fe80::2"),
        };
        let text = format!("g1:1:2 [0] misc/ibvwrap.cc:1 NCCL WARN Call to {call} failed {reason}\n");
        let log = parse(&lines_of(&text)).value;
        prop_assert_eq!(log.verbs_failures.len(), 1);
        let v = &log.verbs_failures[0];
        prop_assert_eq!(v.call.as_str(), call);
        prop_assert_eq!(v.errno, Some(n));
        prop_assert_eq!(v.error.as_deref(), Some(t));
        prop_assert!(v.partial.is_none());
    }

    /// The paste's end may cut an event line anywhere after its opener:
    /// the event read is then one of the events' words, or the line is
    /// partial; never a made-up event judged whole.
    #[test]
    fn a_cut_event_line_is_whole_or_partial(cut in 0usize..30) {
        let full = "port error";
        let body = format!("Got async event : {}", full.get(..cut.min(full.len())).unwrap_or(full));
        let text = format!("g1:1:2 [0] NCCL WARN NET/IB : mlx5_0:1 {body}");
        let log = parse(&lines_of(&text)).value;
        for e in &log.ib_async_events {
            prop_assert!(e.event == "port error" || e.partial.is_some(), "{:?}", e);
        }
    }

    #[test]
    fn a_completion_error_reads_back(
        status in 0u32..22,
        vendor in 0u32..300,
        port in 1u32..65535,
        dev in 0u32..8,
        host in "[a-z][a-z0-9.-]{0,20}",
    ) {
        let text = format!(
            "{host}:100:200 [{dev}] transport/net_ib.cc:1 NCCL WARN NET/IB : Got completion from peer 10.1.2.3<{port}> with status={status} opcode=0 len=0 vendor err {vendor} (Recv) localGid fe80::1 remoteGidsfe80::2"
        );
        let log = parse(&lines_of(&text)).value;
        prop_assert_eq!(log.completion_errors.len(), 1);
        let c = &log.completion_errors[0];
        prop_assert_eq!(c.status, status);
        prop_assert_eq!(c.vendor_err, Some(vendor));
        let peer = format!("10.1.2.3<{port}>");
        prop_assert_eq!(c.peer.as_deref(), Some(peer.as_str()));
        prop_assert_eq!(c.at.cuda_dev, Some(dev));
        prop_assert_eq!(c.at.host.as_deref(), Some(host.as_str()));
    }
}
