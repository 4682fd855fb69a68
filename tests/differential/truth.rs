//! `truth.json` as written by `scripts/ibsim/random-fabric.py`
//! (schema `fabricscope-ibsim-truth/1`): only the fields the comparison reads.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The schema this module reads; any other is refused, not guessed at.
pub const SCHEMA: &str = "fabricscope-ibsim-truth/1";

/// The ground truth of one random fabric.
#[derive(Debug, Deserialize)]
pub struct Truth {
    pub schema: String,
    pub seed: u64,
    /// The management host opensm runs on (no dump of its own).
    pub sm_host: String,
    /// The thresholds file as the generator read it: the counters ibqueryerrors checks.
    pub thresholds: BTreeMap<String, u64>,
    /// The switches, by simulator id (`sw01`).
    pub switches: BTreeMap<String, Switch>,
    /// Simulated HCA hosts that have a dump (`<host>.txt`), by name.
    pub hosts: BTreeMap<String, Host>,
    /// Hosts with nothing wrong in what they can see themselves.
    pub hosts_ok: Vec<String>,
    pub down_hca_ports: Vec<DownPort>,
    pub ibqueryerrors: Ibqueryerrors,
    pub injected_counters: Vec<Injected>,
    pub consistency: Consistency,
}

/// One simulated host.
#[derive(Debug, Deserialize)]
pub struct Host {
    /// The node description (`node02 mlx5_0`), as fabric-wide tools name it.
    pub desc: String,
    pub node_guid: String,
    pub ports: Vec<HostPort>,
    pub narrow: bool,
    pub peer_flagged: bool,
}

/// One switch.
#[derive(Debug, Deserialize)]
pub struct Switch {
    /// The node description (`MF0;sw01:MQM8700/U1`).
    pub desc: String,
    pub node_guid: String,
    pub lid: u32,
}

/// One HCA port of a host.
#[derive(Debug, Deserialize)]
pub struct HostPort {
    pub port: u32,
    pub port_guid: String,
    /// 0 when the port never got a LID (cut before the SM swept).
    pub lid: u32,
    /// The switch and port at the other end of the cable.
    pub switch: Option<String>,
    pub switch_port: Option<u32>,
    pub down: bool,
    pub cut_when: Option<String>,
    pub width: String,
    /// What ibqueryerrors printed for this port (over-threshold counters).
    pub flagged_counters: BTreeMap<String, u64>,
}

/// A down HCA port.
#[derive(Debug, Deserialize)]
pub struct DownPort {
    pub host: String,
    pub port: u32,
}

/// The genuine `ibqueryerrors --threshold-file` run, as parsed by the generator.
#[derive(Debug, Deserialize)]
pub struct Ibqueryerrors {
    pub flagged: Vec<Flagged>,
}

/// One `GUID 0x… port N: [Counter == value]…` line.
#[derive(Debug, Deserialize)]
pub struct Flagged {
    /// Simulator node id: a host name or a switch id (`sw01`).
    pub node: String,
    /// A port number, or `"ALL"` for a switch's AllPortSelect aggregate.
    pub port: serde_json::Value,
    /// The counters over threshold and their values.
    pub counters: BTreeMap<String, u64>,
}

impl Flagged {
    /// The port number, `None` for the `port ALL` aggregate.
    pub fn port_number(&self) -> Option<u32> {
        self.port.as_u64().and_then(|p| u32::try_from(p).ok())
    }
}

/// One PerformanceSet made on the simulator.
#[derive(Debug, Deserialize)]
pub struct Injected {
    pub node: String,
    pub port: u32,
    /// `PortCounters` or `PortCountersExtended`.
    pub attribute: String,
    pub field: String,
    /// What the field holds after ibsim clamped it to its width.
    pub expected_value: u64,
    pub saturated: bool,
    /// Data/packet counters: perfquery shows the value plus MAD traffic.
    #[serde(default)]
    pub moves_with_traffic: bool,
    /// `false` for the one field ibsim accepts but never reports.
    #[serde(default = "yes")]
    pub reported_by_simulator: bool,
}

fn yes() -> bool {
    true
}

impl Injected {
    /// Whether perfquery must print exactly `expected_value`: traffic moves
    /// data counters unless they are pinned at their maximum.
    pub fn value_is_exact(&self) -> bool {
        self.reported_by_simulator && (!self.moves_with_traffic || self.saturated)
    }
}

/// The generator's own self-check.
#[derive(Debug, Deserialize)]
pub struct Consistency {
    pub ok: bool,
    pub mismatches: Vec<serde_json::Value>,
}

impl Truth {
    /// Reads and checks `truth.json`.
    pub fn read(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let truth: Truth = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a truth file: {e}", path.display()))?;
        if truth.schema != SCHEMA {
            return Err(format!(
                "{}: schema {:?}, this test reads {SCHEMA:?}",
                path.display(),
                truth.schema
            ));
        }
        if !truth.consistency.ok {
            return Err(format!(
                "{}: the generator's self-check failed: {:?}",
                path.display(),
                truth.consistency.mismatches
            ));
        }
        // The per-host view must say what the ibqueryerrors lines say.
        let flagged = truth.flagged_hca_ports();
        for (host, h) in &truth.hosts {
            for p in &h.ports {
                let listed = flagged.get(&(host.as_str(), p.port)).copied();
                let expected = (!p.flagged_counters.is_empty()).then_some(&p.flagged_counters);
                if listed != expected {
                    return Err(format!(
                        "{}: {host} port {}: flagged_counters {:?} but ibqueryerrors lines {:?}",
                        path.display(),
                        p.port,
                        p.flagged_counters,
                        listed
                    ));
                }
            }
        }
        Ok(truth)
    }

    /// The HCA ports the genuine ibqueryerrors flagged: (host, port) → counters.
    pub fn flagged_hca_ports(&self) -> BTreeMap<(&str, u32), &BTreeMap<String, u64>> {
        self.ibqueryerrors
            .flagged
            .iter()
            .filter(|f| self.hosts.contains_key(&f.node))
            .filter_map(|f| Some(((f.node.as_str(), f.port_number()?), &f.counters)))
            .collect()
    }

    /// Switch port lines (and `port ALL` aggregates) ibqueryerrors printed.
    pub fn flagged_switch_lines(&self) -> impl Iterator<Item = &Flagged> {
        self.ibqueryerrors
            .flagged
            .iter()
            .filter(|f| !self.hosts.contains_key(&f.node))
    }

    /// Whether (host, port) is listed as down.
    pub fn is_down(&self, host: &str, port: u32) -> bool {
        self.down_hca_ports
            .iter()
            .any(|d| d.host == host && d.port == port)
    }
}
