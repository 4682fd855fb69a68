//! NCCL's debug log: `NCCL_DEBUG=INFO` (or `WARN`) lines as every rank
//! prints them, `gpu01:12345:12407 [0] NCCL INFO NET/IB : Using
//! [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>`, and a `WARN` line's source
//! location before the level (`[0] transport/net_ib.cc:1295 NCCL WARN …`).
//!
//! Shapes from NCCL's source (`src/transport/net_ib.cc`, from 2.29
//! `src/transport/net_ib/*.cc`, `src/misc/ibvwrap.cc`,
//! `src/include/ibvwrap.h`, `src/init.cc`, `src/debug.cc`,
//! github.com/NVIDIA/nccl, releases 2.4 to 2.30) and the logs pasted in its
//! issues (NVIDIA/nccl#226, #230, #905, #952, #1129, #1405, #1710, #1814,
//! #2013; NVIDIA/nccl-tests#185, #188, #227; Lightning-AI/lit-llama#380).
//! The async events' words are rdma-core's `ibv_event_type_str`
//! (`libibverbs/enum_strs.c`); the errors' are glibc's `strerror`.
//!
//! Detection is a search for ` NCCL ` (memchr's SIMD search) before any
//! other test: it runs on lines of every paste, nearly none of them NCCL's.

use super::{Block, Line, Parsed, Spec};
use crate::diag::Warning;
use crate::model::nccl_log::{
    ChannelLink, CompletionError, EnvSetting, IbAsyncEvent, NcclLog, NcclVersion, NcclWarning,
    NetDevices, NetworkChoice, Origin, VerbsFailure,
};
use crate::model::partial::{Partial, PartialReason};
use std::fmt::Write as _;

pub(crate) const FORMAT: Spec<NcclLog> = Spec {
    // `torchrun`, `mpirun`, `python` print it among their own output: no
    // command claims the format; lines are told by their prefix.
    command: |_| false,
    starts: super::any_byte,
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &[],
};

/// The prefix and level of an NCCL line, and the message after them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NcclLine<'a> {
    /// `gpu01` of `gpu01:12345:12407 [0]`; `None` for a bare
    /// `NCCL version …` line.
    pub host: Option<&'a str>,
    /// The process id.
    pub pid: Option<u32>,
    /// The CUDA device in brackets.
    pub cuda_dev: Option<u32>,
    /// `INFO`, `WARN`, `TRACE`, `ABORT`; `VERSION` for the bare version line.
    pub level: &'a str,
    /// The text after the level.
    pub message: &'a str,
}

/// The NCCL line `text` is, if it is one: a ` NCCL ` found first, then the
/// prefix before it checked (`host:pid:tid [dev]`, then an optional
/// source location) and an upper-case level after it; or a bare `NCCL
/// version 2.x…` line.
#[must_use]
pub fn split_line(text: &str) -> Option<NcclLine<'_>> {
    let t = text.trim_start_matches([' ', '\t']);
    let Some(at) = nccl_word().find(t.as_bytes()) else {
        return bare_version(t);
    };
    let before = without_launcher_prefixes(t.get(..at)?);
    if before.is_empty() {
        // `2024-05-14T08:12:01Z NCCL version 2.18.1+cuda12.1`: the bare
        // version line behind a launcher's prefix.
        return bare_version(t.get(at + 1..)?);
    }
    let after = t.get(at + 6..)?;
    let (level, message) = after.split_once(' ').unwrap_or((after, ""));
    if level.is_empty() || !level.bytes().all(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let (host, pid, cuda_dev) = prefix(before)?;
    Some(NcclLine {
        host: Some(host),
        pid: Some(pid),
        cuda_dev: Some(cuda_dev),
        level,
        message: message.trim(),
    })
}

/// The searcher for ` NCCL `, built once: asked of nearly every line of
/// every paste, it must not be built per line.
fn nccl_word() -> &'static memchr::memmem::Finder<'static> {
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b" NCCL "));
    &FINDER
}

/// `NCCL version 2.4.8+cuda10.1` as old releases print it, alone: the
/// version is the line's last word (`NCCL version 2.18 is installed` is
/// prose).
fn bare_version(t: &str) -> Option<NcclLine<'_>> {
    // Behind a launcher's prefix (`without_launcher_prefixes`), which
    // opens with one of these bytes: most lines, which do not, are turned
    // away by the first compare.
    let t = if t.starts_with(['[', '(', '>']) || t.starts_with(|c: char| c.is_ascii_digit()) {
        without_launcher_prefixes(t)
    } else {
        t
    };
    let rest = t.strip_prefix("NCCL version ")?.trim_end();
    (rest.starts_with(|c: char| c.is_ascii_digit()) && !rest.contains(' ')).then_some(NcclLine {
        host: None,
        pid: None,
        cuda_dev: None,
        level: "VERSION",
        message: t.trim_end(),
    })
}

/// What a launcher or a log collector writes before NCCL's own prefix,
/// removed from the front of `before` (the text before ` NCCL `) one
/// piece after another: a time stamp in brackets (`[2026-01-04 21:33:04]
/// `), a `kubectl logs --prefix` pod (`[pod/worker-0/trainer] `), an
/// RFC 3339 time stamp (`kubectl logs --timestamps`:
/// `2024-05-14T08:12:01.123456789Z `), Ray's worker tag (`(RayWorkerWrapper
/// pid=581, ip=10.0.0.18) `) and the text of a colour escape whose escape
/// byte a copy lost (`[36m`, `[0m`). Before, such a line was no NCCL
/// line: the paste had "no output of a supported tool", and NCCL's
/// warnings in it were not judged.
fn without_launcher_prefixes(mut s: &str) -> &str {
    loop {
        let rest = if let Some(inner) = s.strip_prefix('[') {
            // A colour escape's text (`[36m`, `[1;32m`), or a bracket
            // group closed before any other `]` and followed by a space
            // (`[pod-name]:12:34 [0]` is NCCL's own redacted host).
            let digits = inner
                .bytes()
                .take_while(|b| b.is_ascii_digit() || *b == b';')
                .count();
            if digits > 0 && inner.as_bytes().get(digits) == Some(&b'm') {
                inner.get(digits + 1..)
            } else {
                inner
                    .find(']')
                    .filter(|&close| inner.as_bytes().get(close + 1) == Some(&b' '))
                    .and_then(|close| inner.get(close + 2..))
            }
        } else if let Some((tag, rest)) = s.split_once(") ") {
            // Ray's `(Worker pid=N[, ip=…]) `, or its end when a copy
            // lost its start (`WorkerWrapper pid=N) `).
            let ray_tag =
                tag.trim_start_matches('(')
                    .split_once(" pid=")
                    .is_some_and(|(name, pid)| {
                        (tag.starts_with('(') || name.bytes().all(|b| b.is_ascii_alphanumeric()))
                            && pid.starts_with(|c: char| c.is_ascii_digit())
                    });
            ray_tag.then_some(rest)
        } else if rfc3339_stamp(s) {
            Some(s.split_once(' ').map_or("", |(_, rest)| rest))
        } else {
            // One quoted line (a quote mark the mail-quoting repair,
            // which needs a run of three, leaves).
            s.strip_prefix("> ")
        };
        match rest {
            Some(rest) => s = rest.trim_start_matches([' ', '\t']),
            None => return s,
        }
    }
}

/// Whether `s` opens with `2024-05-14T08:12:01.123456789Z` or
/// `2024-05-14T08:12:01+02:00`: a date, `T` and a time.
fn rfc3339_stamp(s: &str) -> bool {
    let b = s.as_bytes();
    matches!(
        b,
        [y0, y1, y2, y3, b'-', m0, m1, b'-', d0, d1, b'T', h0, h1, b':', ..]
            if [y0, y1, y2, y3, m0, m1, d0, d1, h0, h1].iter().all(|c| c.is_ascii_digit())
    )
}

/// `gpu01:12345:12407 [0]` with an optional source location after it
/// (`transport/net_ib.cc:1295`): host, pid and CUDA device.
fn prefix(before: &str) -> Option<(&str, u32, u32)> {
    let (ids, rest) = before.split_once(' ')?;
    let mut parts = ids.rsplitn(3, ':');
    let _tid: u32 = parts.next()?.parse().ok()?;
    let pid: u32 = parts.next()?.parse().ok()?;
    let host = parts.next().filter(|h| !h.is_empty())?;
    // `mpirun --tag-output` puts the rank and stream before the host:
    // `[1,0]<stdout>:gpu01:12345:12407 [0]`.
    let host = match host.split_once(">:") {
        Some((tag, h)) if tag.starts_with('[') && tag.contains("]<") && !h.is_empty() => h,
        _ => host,
    };
    let rest = rest.strip_prefix('[')?;
    let (dev, location) = rest.split_once(']')?;
    let dev: u32 = dev.parse().ok()?;
    // Nothing but a source location may follow: one word holding no space.
    let location = location.trim();
    if location.contains(' ') {
        return None;
    }
    Some((host, pid, dev))
}

/// Whether `text` is an NCCL line: what the input layer asks of each line
/// of an open NCCL section to go on without detection.
pub(crate) fn is_nccl_line(text: &str) -> bool {
    split_line(text).is_some()
}

fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let first = lines.first()?;
    // Each line is a block of its own key: a line only continues the
    // section, whatever host or rank printed it.
    split_line(first.text()).map(|_| Block::keyed(format!("line {}", first.number)))
}

/// Reads the NCCL lines of a section; the lines among them that are not
/// NCCL's are listed as the program's.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<NcclLog> {
    let mut out = NcclLog::default();
    let mut warnings = Vec::new();
    let last = crate::parse::text::last_text_line(lines);
    for line in lines.iter().filter(|l| !l.is_blank()) {
        match split_line(line.text()) {
            Some(l) => read(&mut out, line, &l, Some(line.number) == last),
            None => out.program_lines.push(line.number),
        }
    }
    if out.hosts.is_empty() && out.versions.is_empty() && !lines.is_empty() {
        if let Some(first) = lines.iter().find(|l| !l.is_blank()) {
            warnings.push(Warning::unreadable(
                first.span(),
                "no NCCL line (`host:pid:tid [dev] NCCL INFO …`) in the section",
            ));
        }
    }
    Parsed {
        value: out,
        warnings,
    }
}

/// Files the facts of one NCCL line; `last` when it is the block's last
/// line, which the end of the paste may have cut.
fn read(out: &mut NcclLog, line: &Line<'_>, l: &NcclLine<'_>, last: bool) {
    if let Some(host) = l.host {
        if !out.hosts.iter().any(|h| h == host) {
            out.hosts.push(host.to_owned());
        }
    }
    let at = Origin {
        host: l.host.map(str::to_owned),
        pid: l.pid,
        cuda_dev: l.cuda_dev,
        span: line.span(),
    };
    let m = l.message;
    if l.level == "WARN" {
        if let Some(c) = completion_error(m, &at) {
            out.completion_errors.push(c);
        } else if let Some(e) = async_event(m, &at, last) {
            out.ib_async_events.push(e);
        } else if let Some(v) = verbs_failure(m, &at, last) {
            out.verbs_failures.push(v);
        }
        out.warnings.push(NcclWarning {
            at,
            text: m.to_owned(),
        });
        return;
    }
    if let Some(v) = version(m) {
        out.versions.push(NcclVersion {
            at,
            version: v.to_owned(),
        });
    } else if let Some(n) = m.strip_prefix("Using network ") {
        out.networks.push(NetworkChoice {
            at,
            network: n.trim().to_owned(),
        });
    } else if let Some(d) = net_devices(m, &at) {
        out.net_devices.push(d);
    } else if let Some(c) = channel(m, &at) {
        out.channels.push(c);
    } else if let Some((name, value)) = env_setting(m) {
        out.env.push(EnvSetting {
            at,
            name: name.to_owned(),
            value: value.to_owned(),
        });
    } else {
        out.other_nccl_lines += 1;
    }
}

/// `NCCL_IB_GID_INDEX set by environment to 3.` (`src/misc/param.cc`):
/// the variable and its value.
fn env_setting(m: &str) -> Option<(&str, &str)> {
    let (name, value) = m.split_once(" set by environment to ")?;
    let name = name.trim();
    let upper = |b: u8| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_';
    (!name.is_empty() && name.bytes().all(upper))
        .then(|| (name, value.trim().trim_end_matches('.')))
}

/// `NCCL version 2.18.5+cuda12.2` (after the prefix, or alone).
fn version(m: &str) -> Option<&str> {
    let v = m.strip_prefix("NCCL version ")?;
    let v = v.split_whitespace().next()?;
    v.starts_with(|c: char| c.is_ascii_digit()).then_some(v)
}

/// `NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB ib0:…`,
/// `NET/Socket : Using [0]eth0:10.0.0.1<0>`, `NET/IB : No device found.`
fn net_devices(m: &str, at: &Origin) -> Option<NetDevices> {
    let rest = m.strip_prefix("NET/")?;
    let (transport, what) = rest.split_once(':')?;
    let transport = transport.trim();
    if transport.is_empty() || transport.contains(' ') || transport == "Plugin" {
        return None;
    }
    let what = what.trim();
    let devices = if what.starts_with("No device found") {
        Vec::new()
    } else {
        let list = what.strip_prefix("Using ")?;
        let list = list.split("; OOB").next().unwrap_or(list);
        let devices: Vec<String> = list
            .split_whitespace()
            .filter_map(|w| {
                let w = w.strip_prefix('[')?;
                let (index, name) = w.split_once(']')?;
                (index.bytes().all(|b| b.is_ascii_digit()) && !index.is_empty() && !name.is_empty())
                    .then(|| name.trim_end_matches(';').to_owned())
            })
            .collect();
        if devices.is_empty() {
            return None;
        }
        devices
    };
    Some(NetDevices {
        at: at.clone(),
        transport: transport.to_owned(),
        devices,
    })
}

/// `Channel 00/0 : 0[0] -> 1[1] via P2P/IPC`, `Channel 02/0 : 1[1] -> 2[0]
/// [send] via NET/IB/0/GDRDMA`, the older `Channel 00 : 0[1b000] -> 1[1c000]
/// via P2P/IPC`.
fn channel(m: &str, at: &Origin) -> Option<ChannelLink> {
    let rest = m.strip_prefix("Channel ")?;
    let (head, rest) = rest.split_once(" : ")?;
    let number = head.split('/').next()?.trim().parse().ok()?;
    let (ranks, via) = rest.split_once(" via ")?;
    let (from, to) = ranks.split_once(" -> ")?;
    let rank = |s: &str| -> Option<u32> { s.trim().split('[').next()?.parse().ok() };
    let (to, direction) = match to.trim().split_once(' ') {
        Some((to, dir)) => (to, Some(dir.trim().trim_matches(['[', ']']).to_owned())),
        None => (to, None),
    };
    let transport = via.split_whitespace().next()?;
    Some(ChannelLink {
        at: at.clone(),
        channel: number,
        from_rank: rank(from)?,
        to_rank: rank(to)?,
        direction,
        transport: transport.to_owned(),
    })
}

/// The word after `key` in `m`.
fn word_after<'a>(m: &'a str, key: &str) -> Option<&'a str> {
    let at = m.find(key)?;
    m.get(at + key.len()..)?
        .split_whitespace()
        .next()
        .map(|w| w.trim_end_matches(','))
}

/// The number at the start of `s` (`12` of `12,` or `129`).
fn leading_number(s: &str) -> Option<u32> {
    let end = s
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(s.len());
    s.get(..end)?.parse().ok()
}

/// The IB transport's completion error, in each release's wording:
/// `Got completion from peer P with status=12 opcode=0 len=0 vendor err
/// 129 (Send) localGid G remoteGidsG hca mlx5_0`, the newest
/// `status=IBV_WC_RETRY_EXC_ERR(12) … vendor_err=129`, and the oldest
/// `Got completion with error 12, opcode 0, len 0, vendor err 129`.
fn completion_error(m: &str, at: &Origin) -> Option<CompletionError> {
    let (_, rest) = m.split_once("Got completion ")?;
    let peer = rest
        .strip_prefix("from peer ")
        .and_then(|p| p.split(" with").next())
        .map(str::to_owned);
    let status = if let Some(s) = word_after(rest, "status=") {
        match s.split_once('(') {
            Some((_, n)) => leading_number(n),
            None => leading_number(s),
        }
    } else {
        word_after(rest, "with error ").and_then(leading_number)
    }?;
    let vendor_err = word_after(rest, "vendor err ")
        .or_else(|| word_after(rest, "vendor_err="))
        .and_then(leading_number);
    let direction = ["(Send)", "(Recv)"]
        .iter()
        .find(|d| rest.contains(**d))
        .map(|d| d.trim_matches(['(', ')']).to_owned());
    let remote_gid = rest.find("remoteGid").and_then(|i| {
        let r = rest.get(i + "remoteGid".len()..)?;
        let r = r.strip_prefix('s').unwrap_or(r);
        r.split_whitespace().next().map(str::to_owned)
    });
    Some(CompletionError {
        at: at.clone(),
        status,
        peer,
        vendor_err,
        direction,
        local_gid: word_after(rest, "localGid ").map(str::to_owned),
        remote_gid,
        ib_device: word_after(rest, " hca ").map(str::to_owned),
    })
}

/// The events' words as rdma-core's `ibv_event_type_str` prints them
/// (`libibverbs/enum_strs.c`), and NCCL's own `GID table changed` (2.28
/// on): a last line whose event is none of these was cut.
pub(crate) const ASYNC_EVENTS: &[&str] = &[
    "CQ error",
    "local work queue catastrophic error",
    "invalid request local work queue error",
    "local access violation work queue error",
    "communication established",
    "send queue drained",
    "path migrated",
    "path migration request error",
    "local catastrophic error",
    "port active",
    "port error",
    "LID change",
    "P_Key change",
    "SM change",
    "SRQ catastrophic error",
    "SRQ limit reached",
    "last WQE reached",
    "client reregistration",
    "GID table change",
    "WQ fatal",
    "unknown",
    "GID table changed",
];

/// An IB device's async event, in each release's wording (see
/// [`IbAsyncEvent`]): `NET/IB : Got async event : port error`,
/// `NET/IB : mlx5_0:1 Got async event : port error`, `… async fatal
/// event: local catastrophic error`, `… async fatal event on QP (0x…)
/// qpn=… : …`, `… Got async error event: port error`, `… Got non-fatal
/// async event: port error(10)`, `… GID table changed`, `… unknown event
/// type (25)`.
fn async_event(m: &str, at: &Origin, last: bool) -> Option<IbAsyncEvent> {
    let rest = m.strip_prefix("NET/IB")?.trim_start();
    let rest = rest.strip_prefix(':')?.trim_start();
    let (device, port, body) = match rest.split_once(' ') {
        Some((w, body)) if w != "Got" => {
            let (d, p) = w.rsplit_once(':')?;
            (Some(d), Some(p.parse::<u32>().ok()?), body.trim_start())
        }
        _ => (None, None, rest),
    };
    let event = if let Some(e) = body
        .strip_prefix("Got async event : ")
        .or_else(|| body.strip_prefix("Got async error event: "))
    {
        e.trim()
    } else if let Some(e) = body.strip_prefix("Got non-fatal async event: ") {
        // `port error(10)`: the event's number after its words.
        let e = e.trim();
        match e.rsplit_once('(') {
            Some((words, n)) if n.trim_end_matches(')').bytes().all(|b| b.is_ascii_digit()) => {
                words
            }
            _ => e,
        }
    } else if body.starts_with("async fatal event") {
        // The event's words follow the last `: ` (after the QP or CQ's
        // pointer and, from 2.30, its numbers).
        body.rsplit_once(": ").map(|(_, e)| e.trim())?
    } else if body == "GID table changed" || body.starts_with("unknown event type") {
        body.trim()
    } else {
        return None;
    };
    let known = ASYNC_EVENTS.contains(&event) || event.starts_with("unknown event type (");
    let partial = (last && !known).then(|| {
        Partial::new(
            PartialReason::CutLine,
            vec!["the event's words".to_owned()],
            at.span.first_line,
        )
    });
    Some(IbAsyncEvent {
        at: at.clone(),
        device: device.map(str::to_owned),
        port,
        event: event.to_owned(),
        partial,
    })
}

/// Linux errno numbers, names and `strerror` texts (glibc) of the errors
/// verbs calls fail with.
pub(crate) const ERRNOS: &[(u32, &str, &str)] = &[
    (1, "EPERM", "Operation not permitted"),
    (2, "ENOENT", "No such file or directory"),
    (5, "EIO", "Input/output error"),
    (6, "ENXIO", "No such device or address"),
    (11, "EAGAIN", "Resource temporarily unavailable"),
    (12, "ENOMEM", "Cannot allocate memory"),
    (13, "EACCES", "Permission denied"),
    (14, "EFAULT", "Bad address"),
    (16, "EBUSY", "Device or resource busy"),
    (19, "ENODEV", "No such device"),
    (22, "EINVAL", "Invalid argument"),
    (24, "EMFILE", "Too many open files"),
    (28, "ENOSPC", "No space left on device"),
    (95, "EOPNOTSUPP", "Operation not supported"),
    (101, "ENETUNREACH", "Network is unreachable"),
    (104, "ECONNRESET", "Connection reset by peer"),
    (110, "ETIMEDOUT", "Connection timed out"),
    (113, "EHOSTUNREACH", "No route to host"),
];

/// The errno of a `strerror` text.
fn errno_of(text: &str) -> Option<u32> {
    ERRNOS
        .iter()
        .find(|(_, _, t)| *t == text)
        .map(|(n, _, _)| *n)
}

/// A verbs call reported failed (see [`VerbsFailure`]).
fn verbs_failure(m: &str, at: &Origin, last: bool) -> Option<VerbsFailure> {
    let mut v = VerbsFailure {
        at: at.clone(),
        call: String::new(),
        errno: None,
        error: None,
        device: None,
        port: None,
        transition: None,
        local_gid: None,
        remote_gid: None,
        partial: None,
    };
    if let Some(rest) = m.strip_prefix("Call to ") {
        // `Call to ibv_modify_qp failed …`, `Call to ibv_poll_cq() returned -1`.
        let (call, after) = rest.split_once(' ')?;
        let call = call.trim_end_matches("()");
        if !is_verbs_call(call) {
            return None;
        }
        v.call = call.to_owned();
        if let Some(r) = after.strip_prefix("returned ") {
            v.error = Some(format!("returned {}", r.trim()));
        } else {
            let after = after.strip_prefix("failed")?;
            read_failure_reason(&mut v, after.trim());
        }
    } else if let Some((call, after)) = m
        .split_once("() failed")
        .filter(|(c, _)| is_verbs_call(c) && !c.contains(' '))
    {
        // `ibv_post_send() failed with error …, Bad WR 0x…, First WR 0x…`.
        v.call = call.to_owned();
        let after = after.trim();
        let after = after.split(", Bad WR").next().unwrap_or(after);
        read_failure_reason(&mut v, after);
    } else {
        let rest = m.strip_prefix("NET/IB")?.trim_start();
        let rest = rest.strip_prefix(':')?.trim_start();
        if let Some(d) = rest.strip_prefix("Unable to open device ") {
            v.call = "ibv_open_device".to_owned();
            v.device = Some(d.trim().to_owned());
        } else if let Some(d) = rest.strip_prefix("Unable to query device ") {
            v.call = "ibv_query_device".to_owned();
            v.device = Some(d.trim().to_owned());
        } else if let Some(p) = rest
            .strip_prefix("Unable to query port_num ")
            .or_else(|| rest.strip_prefix("Unable to query port "))
        {
            v.call = "ibv_query_port".to_owned();
            v.port = Some(p.trim().parse().ok()?);
        } else if let Some(e) = rest.strip_prefix("mlx5dv_create_qp failed to create QP: ") {
            v.call = "mlx5dv_create_qp".to_owned();
            v.error = Some(e.trim().to_owned());
            v.errno = errno_of(e.trim());
        } else {
            return None;
        }
    }
    let cut = v.errno.is_none()
        && v.error
            .as_deref()
            .is_some_and(|e| !e.starts_with("returned "));
    if last && cut {
        v.partial = Some(Partial::new(
            PartialReason::CutLine,
            vec!["the error".to_owned()],
            at.span.first_line,
        ));
    }
    Some(v)
}

/// `ibv_…` and `mlx5dv_…` names: the verbs library's calls (`Call to
/// connect returned …` is NCCL's socket code, not verbs).
fn is_verbs_call(name: &str) -> bool {
    (name.starts_with("ibv_") || name.starts_with("mlx5dv_"))
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// What follows `failed`: nothing, `with error TEXT`, `with error TEXT
/// errno N`, or (modify_qp, 2.24 on) `with N TEXT, on dev D:P, curr state
/// S, next state T, local GID index I, local GID G, remote GID R`.
fn read_failure_reason(v: &mut VerbsFailure, after: &str) {
    if after.is_empty() {
        return;
    }
    if let Some(e) = after.strip_prefix("with error ") {
        let e = e.trim();
        let (text, errno) = match e.rsplit_once(" errno ") {
            Some((t, n)) => (t.trim(), n.trim().parse().ok()),
            None => (e, None),
        };
        v.errno = errno.or_else(|| errno_of(text));
        v.error = Some(text.to_owned());
        return;
    }
    if let Some(e) = after.strip_prefix("with ") {
        let (head, details) = e.split_once(", ").unwrap_or((e, ""));
        if let Some((n, text)) = head.split_once(' ') {
            if let Ok(n) = n.parse::<u32>() {
                v.errno = Some(n);
                v.error = Some(text.trim().to_owned());
                read_qp_details(v, details);
                return;
            }
        }
    }
    v.error = Some(after.to_owned());
}

/// `on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 3,
/// local GID ::ffff:10.0.0.1, remote GID ::ffff:10.0.0.2` (`N/A` where
/// NCCL could not tell).
fn read_qp_details(v: &mut VerbsFailure, details: &str) {
    let given = |s: &str| (s != "N/A" && !s.is_empty()).then(|| s.to_owned());
    let (mut curr, mut next) = (None, None);
    for part in details.split(", ").map(str::trim) {
        if let Some(d) = part.strip_prefix("on dev ") {
            match d.rsplit_once(':') {
                Some((dev, port)) => {
                    v.device = given(dev);
                    v.port = port.parse().ok();
                }
                None => v.device = given(d),
            }
        } else if let Some(s) = part.strip_prefix("curr state ") {
            curr = given(s);
        } else if let Some(s) = part.strip_prefix("next state ") {
            next = given(s);
        } else if let Some(g) = part.strip_prefix("local GID ") {
            if !g.starts_with("index ") {
                v.local_gid = given(g);
            }
        } else if let Some(g) = part.strip_prefix("remote GID ") {
            // A GID the paste's end cut after a colon (`::ffff:`) is no GID.
            v.remote_gid = given(g).filter(|g| !g.ends_with(':'));
        }
    }
    v.transition = match (curr, next) {
        (Some(c), Some(n)) => Some(format!("{c} -> {n}")),
        (None, Some(n)) => Some(format!("-> {n}")),
        _ => None,
    };
}

/// `3 host(s), NCCL 2.18.5+cuda12.2; network IB; 48 channel link(s); 2 warning(s)`.
#[must_use]
pub fn summary(log: &NcclLog) -> String {
    let mut s = format!("NCCL log of {} host(s)", log.hosts.len());
    if let Some(v) = log.versions.first().map(|v| &v.version) {
        let _ = write!(s, ", NCCL {v}");
    }
    let mut nets: Vec<&str> = log.networks.iter().map(|n| n.network.as_str()).collect();
    nets.sort_unstable();
    nets.dedup();
    if !nets.is_empty() {
        let _ = write!(s, "; network {}", nets.join(", "));
    }
    if !log.channels.is_empty() {
        let _ = write!(s, "; {} channel link(s)", log.channels.len());
    }
    if !log.completion_errors.is_empty() {
        let _ = write!(s, "; {} completion error(s)", log.completion_errors.len());
    }
    if !log.ib_async_events.is_empty() {
        let _ = write!(s, "; {} IB async event(s)", log.ib_async_events.len());
    }
    if !log.verbs_failures.is_empty() {
        let _ = write!(s, "; {} failed verbs call(s)", log.verbs_failures.len());
    }
    if !log.warnings.is_empty() {
        let _ = write!(s, "; {} warning(s)", log.warnings.len());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;

    fn read(text: &str) -> NcclLog {
        parse(&lines_of(text)).value
    }

    #[test]
    fn the_prefix_names_host_pid_and_device() {
        let l = split_line("node-7.cluster:4021:4102 [3] NCCL INFO Using network IB").unwrap();
        assert_eq!(l.host, Some("node-7.cluster"));
        assert_eq!(l.pid, Some(4021));
        assert_eq!(l.cuda_dev, Some(3));
        assert_eq!(l.level, "INFO");
        assert_eq!(l.message, "Using network IB");
        // A WARN line's source location sits between the device and NCCL.
        let w = split_line("n1:1:2 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : x").unwrap();
        assert_eq!((w.level, w.message), ("WARN", "NET/IB : x"));
    }

    #[test]
    fn launchers_prefixes_before_the_nccl_prefix_are_not_the_host() {
        fn host(text: &str) -> Option<&str> {
            split_line(text).and_then(|l| l.host)
        }
        // `mpirun --tag-output`: rank and stream glued to the host.
        assert_eq!(
            host("[1,0]<stdout>:job-worker-0:22:28 [0] NCCL INFO Using network Socket"),
            Some("job-worker-0")
        );
        // Ray's worker tag, with and without the node's address.
        assert_eq!(
            host("(RayWorkerWrapper pid=581, ip=10.2.0.18) k8s17:581:581 [0] NCCL INFO P2P Chunksize set to 131072"),
            Some("k8s17")
        );
        assert_eq!(
            host("WorkerWrapper pid=2361) k8s19:2361:2361 [0] NCCL INFO Channel"),
            Some("k8s19")
        );
        // A colour escape whose escape byte was lost, around Ray's tag;
        // a redacted `[pod-name]` host stays the host.
        let l = split_line(
            " [36m(RayWorkerVllm pid=5310) [0m [pod-name]:5310:5433 [7] NCCL INFO NET/IB : No device found. [32m [repeated 12x across cluster] [0m",
        )
        .unwrap();
        assert_eq!((l.host, l.cuda_dev), (Some("[pod-name]"), Some(7)));
        // A bracketed time stamp, in a one-line quote, before a WARN line
        // with its source location.
        let l = split_line(
            "> [2026-01-04 21:33:04] train-master-0:617:2799 [3] transport/net_ib.cc:2360 NCCL WARN NET/IB: Got completion from peer 10.0.0.2<1> with status=12 opcode=1 len=0 vendor err 129 (Send) hca mlx5_6",
        )
        .unwrap();
        assert_eq!((l.host, l.level), (Some("train-master-0"), "WARN"));
        // `kubectl logs --prefix` and `--timestamps`.
        assert_eq!(
            host("[pod/w-0/trainer] w-0:52:52 [0] NCCL INFO Using network IB"),
            Some("w-0")
        );
        assert_eq!(
            host("2024-05-14T08:12:01.123456789Z w-0:52:52 [0] NCCL INFO Using network IB"),
            Some("w-0")
        );
        let v = split_line("2024-05-14T08:12:01.623456789Z NCCL version 2.18.1+cuda12.1").unwrap();
        assert_eq!(v.level, "VERSION");
        // What is not such a prefix still makes the line no NCCL line.
        for text in [
            "(note) n1:1:2 [0] NCCL INFO no pid in the tag",
            "[note] see n1:1:2 [0] NCCL INFO prose after the bracket",
            "2024-05-14 n1:1:2 [0] NCCL INFO a date without its time",
        ] {
            assert!(split_line(text).is_none(), "{text:?}");
        }
    }

    #[test]
    fn prose_mentioning_nccl_is_no_nccl_line() {
        for text in [
            "I set NCCL INFO level and nothing happened",
            "see the NCCL WARN below",
            "n1:1:x [0] NCCL INFO bad tid",
            "n1:1:2 [a] NCCL INFO bad device",
            "n1:1:2 [0] NCCL info lower-case level",
            "n1:1:2 [0] two words NCCL INFO no",
            "NCCL version is old",
            "",
        ] {
            assert!(split_line(text).is_none(), "{text:?}");
        }
        assert!(split_line("NCCL version 2.4.8+cuda10.1").is_some());
        assert!(split_line("NCCL version 2.18 is installed").is_none());
    }

    #[test]
    fn network_devices_and_channels_are_read() {
        let log = read(
            "g1:10:10 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/RoCE [RO]; OOB ib0:10.1.0.1<0>\n\
             g1:10:10 [0] NCCL INFO Using network IB\n\
             g2:20:20 [1] NCCL INFO NET/IB : No device found.\n\
             g2:20:20 [1] NCCL INFO NET/Socket : Using [0]eth0:10.2.0.2<0>\n\
             g2:20:20 [1] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so)\n\
             g1:10:11 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read\n\
             g1:10:11 [0] NCCL INFO Channel 03/0 : 1[1] -> 2[0] [send] via NET/IB/0/GDRDMA\n\
             g1:10:11 [0] NCCL INFO Channel 01 : 0[1b000] -> 1[1c000] via SHM/direct/direct\n\
             g1:10:11 [0] NCCL INFO Channel 00/02 :    0   1\n",
        );
        assert_eq!(log.hosts, ["g1", "g2"]);
        assert_eq!(log.networks.len(), 1);
        assert_eq!(log.networks[0].network, "IB");
        assert_eq!(log.net_devices.len(), 3);
        assert_eq!(log.net_devices[0].devices, ["mlx5_0:1/IB", "mlx5_3:1/RoCE"]);
        assert!(log.net_devices[1].devices.is_empty());
        assert_eq!(log.net_devices[2].transport, "Socket");
        assert_eq!(log.channels.len(), 3);
        let send = &log.channels[1];
        assert_eq!((send.channel, send.from_rank, send.to_rank), (3, 1, 2));
        assert_eq!(send.direction.as_deref(), Some("send"));
        assert_eq!(send.transport, "NET/IB/0/GDRDMA");
        assert_eq!(log.channels[2].transport_family(), "SHM");
        // The plugin line and the ring listing are read, not facts.
        assert_eq!(log.other_nccl_lines, 2);
    }

    #[test]
    fn completion_errors_of_every_release_are_read() {
        let log = read(
            "h1:5:6 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer 10.3.0.9<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid fd00:10::3:ff22 remoteGidsfd00:10::3:ff1f\n\
             h1:5:6 [4] net_ib.cc:2001 NCCL WARN NET/IB: Got completion from peer 10.3.0.9<1> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129  localGid ::ffff:10.3.0.1 remoteGids::ffff:10.3.0.9 hca mlx5_2\n\
             h1:5:6 [4] net_ib.cc:900 NCCL WARN NET/IB : Got completion with error 5, opcode 0, len 0, vendor err 249\n\
             h1:5:6 [4] misc/ibvwrap.cc:262 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out\n",
        );
        assert_eq!(log.warnings.len(), 4);
        let c = &log.completion_errors;
        assert_eq!(c.len(), 3);
        assert_eq!(c[0].status, 12);
        assert_eq!(c[0].peer.as_deref(), Some("10.3.0.9<54862>"));
        assert_eq!(c[0].vendor_err, Some(129));
        assert_eq!(c[0].direction.as_deref(), Some("Recv"));
        assert_eq!(c[0].local_gid.as_deref(), Some("fd00:10::3:ff22"));
        assert_eq!(c[0].remote_gid.as_deref(), Some("fd00:10::3:ff1f"));
        assert_eq!(c[0].at.cuda_dev, Some(4));
        assert_eq!((c[1].status, c[1].vendor_err), (12, Some(129)));
        assert_eq!(c[1].ib_device.as_deref(), Some("mlx5_2"));
        assert_eq!(c[1].remote_gid.as_deref(), Some("::ffff:10.3.0.9"));
        assert_eq!(
            (c[2].status, c[2].vendor_err, c[2].peer.as_deref()),
            (5, Some(249), None)
        );
    }

    #[test]
    fn async_events_of_every_release_are_read() {
        let log = read(
            "h1:5:6 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error\n\
             h1:5:7 [1] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_2:1 Got async event : port active\n\
             h1:5:7 [1] transport/net_ib.cc:140 NCCL WARN NET/IB : mlx5_3:1 async fatal event: local catastrophic error\n\
             h1:5:7 [1] transport/net_ib.cc:150 NCCL WARN NET/IB : mlx5_3:1 async fatal event on QP (0x55d0c1a0): local access violation work queue error\n\
             h1:5:7 [1] transport/net_ib/common.cc:150 NCCL WARN NET/IB : mlx5_3:1 async fatal event on QP (0x55d0c1a0) qpn=812 handle=3 send_cq=1 recv_cq=1 state=6 sq_psn=77 rq_psn=78: local work queue catastrophic error\n\
             h1:5:7 [1] transport/net_ib.cc:170 NCCL WARN NET/IB : mlx5_4:1 Got async error event: LID change\n\
             h1:5:7 [1] transport/net_ib.cc:175 NCCL WARN NET/IB : mlx5_4:2 Got non-fatal async event: port error(10)\n\
             h1:5:7 [1] transport/net_ib.cc:160 NCCL WARN NET/IB : mlx5_4:1 GID table changed\n\
             h1:5:7 [1] transport/net_ib.cc:180 NCCL WARN NET/IB : mlx5_4:1 unknown event type (25)\n\
             h1:5:7 [1] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\n\
             h1:5:7 [1] NCCL WARN NET/IB : req 1/2 tag 7 peer 10.0.0.2<1> collective mismatch error\n",
        );
        let e = &log.ib_async_events;
        let got: Vec<(Option<&str>, Option<u32>, &str)> = e
            .iter()
            .map(|e| (e.device.as_deref(), e.port, e.event.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (None, None, "port error"),
                (Some("mlx5_2"), Some(1), "port active"),
                (Some("mlx5_3"), Some(1), "local catastrophic error"),
                (
                    Some("mlx5_3"),
                    Some(1),
                    "local access violation work queue error"
                ),
                (
                    Some("mlx5_3"),
                    Some(1),
                    "local work queue catastrophic error"
                ),
                (Some("mlx5_4"), Some(1), "LID change"),
                (Some("mlx5_4"), Some(2), "port error"),
                (Some("mlx5_4"), Some(1), "GID table changed"),
                (Some("mlx5_4"), Some(1), "unknown event type (25)"),
            ]
        );
        assert!(e.iter().all(|e| e.partial.is_none()));
        assert_eq!(e[1].at.cuda_dev, Some(1));
        // The INFO device list and other WARN lines are not events.
        assert_eq!(log.net_devices.len(), 1);
        assert_eq!(log.warnings.len(), 10);
        assert!(log.verbs_failures.is_empty());
    }

    #[test]
    fn failed_verbs_calls_of_every_release_are_read() {
        let log = read(
            "h1:5:6 [0] misc/ibvwrap.cc:280 NCCL WARN Call to ibv_create_qp failed\n\
             h1:5:6 [0] misc/ibvwrap.cc:160 NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory\n\
             h1:5:6 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out errno 110\n\
             h1:5:6 [3] misc/ibvwrap.cc:262 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_1:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:10.9.0.1, remote GID ::ffff:10.9.0.2\n\
             h1:5:6 [0] include/ibvwrap.h:73 NCCL WARN ibv_post_send() failed with error Invalid argument, Bad WR 0x7f00, First WR 0x7f00\n\
             h1:5:6 [0] misc/ibvwrap.cc:201 NCCL WARN Call to ibv_poll_cq() returned -1\n\
             h1:5:6 [0] transport/net_ib.cc:193 NCCL WARN NET/IB : Unable to open device mlx5_5\n\
             h1:5:6 [0] transport/net_ib.cc:207 NCCL WARN NET/IB : Unable to query port_num 2\n\
             h1:5:6 [0] socket.cc:400 NCCL WARN Call to connect returned Connection refused, retrying\n\
             h1:5:6 [0] NCCL INFO Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_1:1, retrying 1/3 after 500 msec of sleep\n",
        );
        let v = &log.verbs_failures;
        let got: Vec<(&str, Option<u32>, Option<&str>)> = v
            .iter()
            .map(|v| (v.call.as_str(), v.errno, v.error.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("ibv_create_qp", None, None),
                ("ibv_reg_mr", Some(12), Some("Cannot allocate memory")),
                ("ibv_modify_qp", Some(110), Some("Connection timed out")),
                ("ibv_modify_qp", Some(110), Some("Connection timed out")),
                ("ibv_post_send", Some(22), Some("Invalid argument")),
                ("ibv_poll_cq", None, Some("returned -1")),
                ("ibv_open_device", None, None),
                ("ibv_query_port", None, None),
            ]
        );
        let qp = &v[3];
        assert_eq!((qp.device.as_deref(), qp.port), (Some("mlx5_1"), Some(1)));
        assert_eq!(qp.transition.as_deref(), Some("INIT -> RTR"));
        assert_eq!(qp.local_gid.as_deref(), Some("::ffff:10.9.0.1"));
        assert_eq!(qp.remote_gid.as_deref(), Some("::ffff:10.9.0.2"));
        assert_eq!(qp.at.cuda_dev, Some(3));
        assert_eq!(v[6].device.as_deref(), Some("mlx5_5"));
        assert_eq!(v[7].port, Some(2));
        assert!(v.iter().all(|v| v.partial.is_none()));
        // The socket call and the INFO retry line are no verbs failures.
        assert_eq!(log.warnings.len(), 9);
        assert_eq!(log.other_nccl_lines, 1);
    }

    #[test]
    fn settings_from_the_environment_are_read() {
        let p = parse(&lines_of(
            "gpu1:212:290 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to 3.\n\
             gpu1:212:290 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ens9f0\n\
             gpu1:212:290 [0] NCCL INFO the value set by environment to 3.\n",
        ));
        let env = &p.value.env;
        assert_eq!(env.len(), 2, "{env:?}");
        assert_eq!(
            (env[0].name.as_str(), env[0].value.as_str()),
            ("NCCL_IB_GID_INDEX", "3")
        );
        assert_eq!(env[1].value, "ens9f0");
        assert_eq!(p.value.other_nccl_lines, 1, "not a variable's name");
    }

    #[test]
    fn a_last_line_cut_inside_its_event_or_error_is_partial() {
        let log = read(
            "h1:5:6 [0] NCCL WARN NET/IB : mlx5_0:1 Got async event : port error\n\
             h1:5:6 [0] NCCL WARN NET/IB : mlx5_0:1 Got async event : port\n",
        );
        let e = &log.ib_async_events;
        assert!(e[0].partial.is_none());
        assert_eq!(
            e[1].partial.as_ref().unwrap().reason,
            PartialReason::CutLine
        );
        let log = read("h1:5:6 [0] NCCL WARN Call to ibv_reg_mr failed with error Cannot alloc\n");
        assert!(log.verbs_failures[0].partial.is_some());
        // The same words on a line that is not the last are whole.
        let log = read(
            "h1:5:6 [0] NCCL WARN NET/IB : mlx5_0:1 Got async event : port\n\
             h1:5:6 [0] NCCL INFO proxy.cc:694 -> 6\n",
        );
        assert!(log.ib_async_events[0].partial.is_none());
    }

    #[test]
    fn the_programs_lines_are_listed_not_dropped() {
        let log = read(
            "n1:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n\
             INFO:train:epoch 1\n\
             \n\
             NCCL version 2.18.5+cuda12.2\n\
             n1:1:1 [0] NCCL INFO NCCL version 2.18.5+cuda12.2\n",
        );
        assert_eq!(log.program_lines, [2]);
        assert_eq!(log.versions.len(), 2);
        assert_eq!(log.versions[0].at.host, None);
        assert_eq!(log.versions[1].version, "2.18.5+cuda12.2");
        assert_eq!(log.other_nccl_lines, 1);
    }

    #[test]
    fn detection_keys_each_line_by_its_number() {
        let lines = lines_of("a:1:1 [0] NCCL INFO x\na:1:1 [0] NCCL INFO y\n");
        let first = detect(&lines).unwrap();
        let second = detect(&lines[1..]).unwrap();
        assert_ne!(first.key, second.key);
        assert!(detect(&lines_of("CA 'mlx5_0'")).is_none());
    }
}
