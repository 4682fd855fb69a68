//! Properties of the NCCL debug log parser: every non-blank line is
//! accounted for (a fact, a counted NCCL line, or a program line), a
//! generated completion error reads back, and no text makes it panic.

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
