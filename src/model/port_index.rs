//! One index of InfiniBand ports: which host, adapter (CA) and port a LID or
//! a port GUID belongs to, read from every port view in the input.
//!
//! `perfquery` names ports by LID (`# Port counters: Lid 12 port 1`), not by
//! adapter. Statistics (measurement subjects, fleet findings) and rules
//! (per-port findings) both give such a port its adapter name from this one
//! index, so the same port is named the same way everywhere.
//!
//! # Views
//! `ibstat`, `ibstatus` and `ibv_devinfo` sections: every port with a usable
//! base LID (not 0, not 65535, which mean "none assigned"), whether or not the
//! view also gives the port's rate. `iblinkinfo` and `ibqueryerrors` walk the
//! whole fabric and name nodes by description, not by host and CA: they are
//! not views of a host's own ports and are not read here.
//!
//! # Hosts
//! Keys are the host name the input gives, or `None` for sections without
//! one. Unnamed sections of several documents share the `None` host, as
//! statistics' subjects do (two anonymous pastes are measured as one
//! timeline), so both sides look a LID up the same way.
//!
//! # Conflicts
//! One precedence rule: **the latest view in input order wins** (documents in
//! the order given, sections and ports in reading order). Two views that give
//! the same (host, LID) to different (CA, port) — a subnet manager that
//! re-assigned the LID between snapshots, or two tools that disagree — are not
//! overwritten silently: each such change is kept in
//! [`PortIndex::conflicts`], with both claims, for the caller to report.

use crate::input::{Document, Section};
use crate::model::ib::Guid;
use crate::parse::SectionData;
use crate::span::LineSpan;
use std::collections::BTreeMap;

/// Which port a LID or GUID belongs to, and which view said so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortOwner<'a> {
    /// Adapter name (`mlx5_0`).
    pub device: &'a str,
    /// Port number on the adapter.
    pub port: u32,
    /// The port's GUID, when the view prints it (`ibstat`).
    pub guid: Option<Guid>,
    /// The view's tool name (`ibstat`, `ibstatus`, `ibv_devinfo`).
    pub view: &'static str,
    /// Index of the document the view was read from.
    pub doc: usize,
    /// Lines of the port in that document.
    pub span: LineSpan,
}

/// Two views that gave one (host, LID) to different ports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LidConflict<'a> {
    /// The host (`None`: unnamed).
    pub host: Option<&'a str>,
    /// The LID both claim.
    pub lid: u32,
    /// The claim that was replaced.
    pub earlier: PortOwner<'a>,
    /// The claim that wins (read later).
    pub later: PortOwner<'a>,
}

impl std::fmt::Display for LidConflict<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let on = self.host.map(|h| format!(" on {h}")).unwrap_or_default();
        write!(
            f,
            "LID {}{on} is {} port {} in {} ({}) but {} port {} in {} ({}): the later name is used; \
             the LID was probably re-assigned, so readings by this LID before and after may be of \
             two ports",
            self.lid,
            self.earlier.device,
            self.earlier.port,
            self.earlier.view,
            self.earlier.span,
            self.later.device,
            self.later.port,
            self.later.view,
            self.later.span,
        )
    }
}

/// Host → LID → port, and host → port GUID → port, from every port view.
#[derive(Debug, Clone, Default)]
pub struct PortIndex<'a> {
    /// Ports of named hosts, by host name (looked up by any `&str`).
    named: BTreeMap<&'a str, HostPorts<'a>>,
    /// Ports of sections without a host.
    unnamed: HostPorts<'a>,
    conflicts: Vec<LidConflict<'a>>,
}

/// One host's ports by LID and by GUID.
#[derive(Debug, Clone, Default)]
struct HostPorts<'a> {
    by_lid: BTreeMap<u32, PortOwner<'a>>,
    by_guid: BTreeMap<Guid, PortOwner<'a>>,
}

impl<'a> PortIndex<'a> {
    /// The index of every port view in `documents`, in the order given.
    #[must_use]
    pub fn of_documents(documents: impl IntoIterator<Item = &'a Document>) -> Self {
        let mut index = Self::default();
        for (doc, document) in documents.into_iter().enumerate() {
            for section in &document.sections {
                index.add_section(doc, section);
            }
        }
        index
    }

    /// Adds the ports one section describes (nothing for other tools).
    pub fn add_section(&mut self, doc: usize, section: &'a Section) {
        let host = section.host.as_deref();
        match &section.data {
            SectionData::Ibstat(ibstat) => {
                for ca in &ibstat.cas {
                    for p in &ca.ports {
                        self.add(
                            host,
                            p.base_lid,
                            owner(&ca.name, p.number, p.port_guid, "ibstat", doc, p.span),
                        );
                    }
                }
            }
            SectionData::Ibstatus(ibstatus) => {
                for p in &ibstatus.ports {
                    self.add(
                        host,
                        p.base_lid,
                        owner(&p.device, p.port, None, "ibstatus", doc, p.span),
                    );
                }
            }
            SectionData::RdmaLink(rdma) => {
                for p in &rdma.ports {
                    self.add(
                        host,
                        p.lid,
                        owner(&p.device, p.port, None, "rdma link", doc, p.span),
                    );
                }
            }
            SectionData::IbvDevinfo(devinfo) => {
                for dev in &devinfo.devices {
                    for p in dev.ports.iter().filter(|p| p.number_known()) {
                        self.add(
                            host,
                            p.port_lid,
                            owner(&dev.hca_id, p.number, None, "ibv_devinfo", doc, p.span),
                        );
                    }
                }
            }
            _ => {}
        }
    }

    fn add(&mut self, host: Option<&'a str>, lid: Option<u32>, new: PortOwner<'a>) {
        let ports = match host {
            Some(name) => self.named.entry(name).or_default(),
            None => &mut self.unnamed,
        };
        if let Some(guid) = new.guid.filter(|g| g.0 != 0) {
            ports.by_guid.insert(guid, new);
        }
        let Some(lid) = lid.filter(|l| *l != 0 && *l != 0xffff) else {
            return;
        };
        if let Some(earlier) = ports.by_lid.insert(lid, new) {
            if (earlier.device, earlier.port) != (new.device, new.port) {
                self.conflicts.push(LidConflict {
                    host,
                    lid,
                    earlier,
                    later: new,
                });
            }
        }
    }

    /// The port `lid` names on `host` (the latest view's claim).
    #[must_use]
    pub fn by_lid(&self, host: Option<&str>, lid: u32) -> Option<&PortOwner<'a>> {
        self.host(host)?.by_lid.get(&lid)
    }

    /// The port with GUID `guid` on `host`.
    #[must_use]
    pub fn by_guid(&self, host: Option<&str>, guid: Guid) -> Option<&PortOwner<'a>> {
        self.host(host)?.by_guid.get(&guid)
    }

    fn host(&self, host: Option<&str>) -> Option<&HostPorts<'a>> {
        match host {
            Some(name) => self.named.get(name),
            None => Some(&self.unnamed),
        }
    }

    /// True when some view gave `host` at least one LID: its own ports are
    /// known, so a LID that is not one of them was queried across the fabric.
    #[must_use]
    pub fn knows_lids_of(&self, host: Option<&str>) -> bool {
        self.host(host).is_some_and(|h| !h.by_lid.is_empty())
    }

    /// Every (host, LID) that two views gave to different ports, in the
    /// order the later claims were read.
    #[must_use]
    pub fn conflicts(&self) -> &[LidConflict<'a>] {
        &self.conflicts
    }

    /// True when no view gave any LID or GUID.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        let empty = |h: &HostPorts<'_>| h.by_lid.is_empty() && h.by_guid.is_empty();
        empty(&self.unnamed) && self.named.values().all(empty)
    }
}

fn owner<'a>(
    device: &'a str,
    port: u32,
    guid: Option<Guid>,
    view: &'static str,
    doc: usize,
    span: LineSpan,
) -> PortOwner<'a> {
    PortOwner {
        device,
        port,
        guid,
        view,
        doc,
        span,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str, host: Option<&str>) -> Document {
        let options = crate::ReadOptions::default().with_default_host(host.map(str::to_owned));
        crate::input::read_all(text, &options).unwrap_or_default()
    }

    const IBSTAT: &str = "CA 'mlx5_0'\n\tCA type: MT4123\n\tNumber of ports: 2\n\
        \tPort 1:\n\t\tState: Active\n\t\tBase lid: 7\n\t\tPort GUID: 0x0c42a10300a1b2c3\n\
        \tPort 2:\n\t\tState: Active\n\t\tBase lid: 8\n\t\tPort GUID: 0x0c42a10300a1b2c4\n";

    #[test]
    fn every_port_of_a_ca_is_indexed_by_lid_and_guid() {
        let d = doc(IBSTAT, Some("n1"));
        let index = PortIndex::of_documents([&d]);
        let port2 = index.by_lid(Some("n1"), 8).map(|o| (o.device, o.port));
        assert_eq!(port2, Some(("mlx5_0", 2)));
        let by_guid = index.by_guid(Some("n1"), Guid(0x0c42_a103_00a1_b2c3));
        assert_eq!(by_guid.map(|o| (o.device, o.port)), Some(("mlx5_0", 1)));
        assert!(index.knows_lids_of(Some("n1")));
        assert!(!index.knows_lids_of(Some("n2")));
        assert!(index.by_lid(None, 7).is_none(), "another host's LID");
        assert!(index.conflicts().is_empty());
    }

    #[test]
    fn the_latest_view_wins_and_the_change_is_recorded() {
        let first = doc(IBSTAT, Some("n1"));
        let later = doc(
            "Infiniband device 'mlx5_3' port 1 status:\n\tbase lid:\t 0x7\n\tstate:\t\t 4: ACTIVE\n",
            Some("n1"),
        );
        let index = PortIndex::of_documents([&first, &later]);
        let owner = index.by_lid(Some("n1"), 7).copied();
        assert_eq!(
            owner.map(|o| (o.device, o.view, o.doc)),
            Some(("mlx5_3", "ibstatus", 1))
        );
        let [conflict] = index.conflicts() else {
            panic!("one conflict: {:?}", index.conflicts())
        };
        assert_eq!((conflict.host, conflict.lid), (Some("n1"), 7));
        assert_eq!(conflict.earlier.device, "mlx5_0");
        assert_eq!(conflict.later.device, "mlx5_3");
        assert!(conflict
            .to_string()
            .starts_with("LID 7 on n1 is mlx5_0 port 1 in ibstat"));
        // The same claim read again is no conflict.
        let again = PortIndex::of_documents([&first, &first]);
        assert!(again.conflicts().is_empty());
    }
}
