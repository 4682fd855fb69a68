//! Which findings are about which simulated port.
//!
//! A finding names a port through its subject: host + port number, LID, or
//! GUID. The comparison accepts any of them, as long as nothing in the
//! subject contradicts the port (another port number, LID or GUID).

use fabricscope::{Finding, Severity};

/// A simulated HCA port as the ground truth knows it.
#[derive(Debug, Clone)]
pub struct PortId {
    pub host: String,
    /// The node description fabric-wide tools print (`node02 mlx5_0`).
    pub desc: String,
    pub port: u32,
    /// `None` when the port never got a LID.
    pub lid: Option<u32>,
    pub port_guid: u64,
    pub node_guid: u64,
    /// The switch port at the other end of the cable.
    pub peer: Option<SwitchPort>,
}

/// A switch port as the ground truth knows it.
#[derive(Debug, Clone)]
pub struct SwitchPort {
    pub desc: String,
    pub lid: u32,
    pub node_guid: u64,
    pub port: u32,
}

impl PortId {
    /// `node03 port 1 (LID 6, GUID 0x100007)`, for failure messages.
    pub fn describe(&self) -> String {
        let lid = self
            .lid
            .map_or_else(|| "no LID".to_owned(), |l| format!("LID {l}"));
        format!(
            "{} port {} ({lid}, port GUID {:#x})",
            self.host, self.port, self.port_guid
        )
    }
}

/// A GUID as tools print it (`0x0000000000100005`, `0x100005`).
pub fn guid_value(text: &str) -> Option<u64> {
    let hex = text
        .trim()
        .strip_prefix("0x")
        .or_else(|| text.trim().strip_prefix("0X"))?;
    u64::from_str_radix(hex, 16).ok()
}

/// True when the finding's subject designates this port: by port GUID or
/// node GUID, by LID, or by host (or node description) and port number.
pub fn names_port(f: &Finding, p: &PortId) -> bool {
    let s = &f.subject;
    let guid = s.guid.map(|g| Some(g.0));
    let guid_ok = match guid {
        None => true,
        Some(Some(g)) => g == p.port_guid || g == p.node_guid,
        Some(None) => false,
    };
    let lid_ok = s.lid.is_none_or(|l| Some(l) == p.lid);
    let port_ok = s.port.is_none_or(|n| n == p.port);
    if !(guid_ok && lid_ok && port_ok) {
        return false;
    }
    // The host that ran the tool, or the node description a fabric-wide
    // tool (iblinkinfo, ibqueryerrors) prints for the port's owner.
    let same_host =
        s.host.as_deref() == Some(p.host.as_str()) || s.device.as_deref() == Some(p.desc.as_str());
    let identified = guid.is_some() || (s.lid.is_some() && p.lid.is_some());
    identified || (same_host && s.port.is_some())
}

/// True when the finding is about the cable of this port: the port itself,
/// or the switch port at its other end (by switch description, LID or GUID,
/// and port number), as `iblinkinfo` reports a link from either end.
pub fn names_link(f: &Finding, p: &PortId) -> bool {
    if names_port(f, p) {
        return true;
    }
    let Some(sw) = &p.peer else {
        return false;
    };
    let s = &f.subject;
    let switch = s.device.as_deref() == Some(sw.desc.as_str())
        || s.lid == Some(sw.lid)
        || s.guid.map(|g| g.0) == Some(sw.node_guid);
    switch && s.port == Some(sw.port)
}

/// True when the finding is about this host at all (its name or node
/// description, one of its ports by LID or GUID, or the switch end of one of
/// its cables): what a "no warning" check must not see.
pub fn concerns_host(f: &Finding, host: &str, ports: &[PortId]) -> bool {
    f.subject.host.as_deref() == Some(host)
        || ports
            .iter()
            .any(|p| names_link(f, p) || f.subject.device.as_deref() == Some(p.desc.as_str()))
}

/// Warning or worse: what the requirement calls "reported". Of the fabric:
/// the input rules (IN0xx) speak of the capture, and in the simulator
/// `ibstatus` fails by construction (it reads sysfs, which ibsim does
/// not provide), which IN003 rightly says.
pub fn is_reported(f: &Finding) -> bool {
    f.severity >= Severity::Warning && !f.rule.starts_with("IN")
}

/// Whether ibqueryerrors' counter counts congestion rather than errors.
/// Issue 9 (item 5) changed the policy: a `PortXmitWait` count since the
/// last reset is congestion history, reported as `info` and never as a
/// warning (only its rate between snapshots is), so where ibqueryerrors
/// flags it the analyzer must *note* it, at info.
pub fn is_congestion(counter: &str) -> bool {
    counter == "PortXmitWait"
}

/// True when the finding's message or evidence names the counter.
pub fn mentions(f: &Finding, counter: &str) -> bool {
    f.message.contains(counter) || f.evidence.iter().any(|e| e.text.contains(counter))
}

/// True when the finding says the counter is saturated (pinned at its
/// maximum), in its message or in the evidence line naming the counter.
pub fn says_saturated(f: &Finding, counter: &str) -> bool {
    let saturated = |t: &str| t.to_ascii_lowercase().contains("saturat");
    (f.message.contains(counter) && saturated(&f.message))
        || f.evidence
            .iter()
            .any(|e| e.text.contains(counter) && saturated(&e.text))
}

/// `warning IB001 port-down [node03 ibsim0 port 1]: message`, for failure messages.
pub fn show(f: &Finding) -> String {
    format!(
        "{} {} {} [{} {}]: {}",
        f.severity,
        f.rule,
        f.name,
        f.subject.host.as_deref().unwrap_or("-"),
        f.subject.describe(),
        f.message
    )
}
