//! InfiniBand HCAs: what `ibstat`'s `CA type` means and how fast its ports
//! can run.
//!
//! `CA type` is sysfs `hca_type`: `MT` and the PCI device id in decimal
//! (research notes, ib-formats-and-heuristics, "CA type ↔ hardware"). The
//! rate is the fastest 4X InfiniBand rate the adapter supports, as
//! `ibstat`'s `Rate:` prints it. It is an upper bound, not a verdict: a 2X
//! splitter cable gives HDR100 (`Rate: 100`) or NDR200 (`Rate: 200`) by
//! design, and a fleet may run an HCA below its best on purpose. The input's
//! own majority (peer ports and hosts) wins over this table.

use serde::Serialize;

/// One HCA model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HcaSpec {
    /// `ibstat` `CA type` (`MT4123`).
    pub ca_type: &'static str,
    /// Product name (`ConnectX-6`).
    pub product: &'static str,
    /// The fastest InfiniBand generation (`HDR`); `None` for Ethernet-only
    /// adapters and virtual functions of unknown generation.
    pub generation: Option<&'static str>,
    /// The fastest 4X rate in Gb/s as `ibstat` prints it (`200`).
    pub max_ib_rate_gbps: Option<f64>,
    /// Where the values come from.
    pub source: &'static str,
    /// Anything a rule author must know.
    pub note: &'static str,
}

/// The entry for a `CA type` (`MT4123`, `mt4123` or `4123`).
#[must_use]
pub fn hca_expected_rate(ca_type: &str) -> Option<&'static HcaSpec> {
    let t = ca_type.trim();
    let digits = t
        .get(..2)
        .filter(|p| p.eq_ignore_ascii_case("MT"))
        .map_or(t, |_| t.get(2..).unwrap_or_default());
    HCAS.iter().find(|h| h.ca_type.get(2..) == Some(digits))
}

const TYPES: &str = "research notes ib-formats-and-heuristics (CA type table)";

/// The virtual functions' device ids (vendor 15b3, `MT4116` = 0x1014 …).
const PCI_IDS: &str = "PCI ID repository (pci.ids), vendor 15b3 Mellanox Technologies";

/// Known HCAs, by device id.
pub static HCAS: &[HcaSpec] = &[
    HcaSpec {
        ca_type: "MT26428",
        product: "ConnectX-2",
        generation: Some("QDR"),
        max_ib_rate_gbps: Some(40.0),
        source: "research notes (CA type table); Mellanox ConnectX-2 VPI product brief",
        note: "mlx4 driver.",
    },
    HcaSpec {
        ca_type: "MT4099",
        product: "ConnectX-3",
        generation: Some("FDR"),
        max_ib_rate_gbps: Some(56.0),
        source: "research notes (CA type table); Mellanox ConnectX-3 VPI product brief",
        note: "FDR10 ports print `Rate: 40 (FDR10)`.",
    },
    HcaSpec {
        ca_type: "MT4103",
        product: "ConnectX-3 Pro",
        generation: Some("FDR"),
        max_ib_rate_gbps: Some(56.0),
        source: "research notes (CA type table); Mellanox ConnectX-3 Pro product brief",
        note: "",
    },
    HcaSpec {
        ca_type: "MT4113",
        product: "Connect-IB",
        generation: Some("FDR"),
        max_ib_rate_gbps: Some(56.0),
        source: "research notes (CA type table); Mellanox Connect-IB product brief",
        note: "",
    },
    HcaSpec {
        ca_type: "MT4115",
        product: "ConnectX-4",
        generation: Some("EDR"),
        max_ib_rate_gbps: Some(100.0),
        source: "research notes (CA type table); Mellanox ConnectX-4 VPI product brief",
        note: "",
    },
    HcaSpec {
        ca_type: "MT4116",
        product: "ConnectX-4 Virtual Function",
        generation: Some("EDR"),
        max_ib_rate_gbps: Some(100.0),
        source: PCI_IDS,
        note: "A virtual function: on a hypervisor its port stays Down until a guest uses it.",
    },
    HcaSpec {
        ca_type: "MT4117",
        product: "ConnectX-4 Lx",
        generation: None,
        max_ib_rate_gbps: None,
        source: "research notes (CA type table); Mellanox ConnectX-4 Lx EN product brief",
        note: "Ethernet only: ports are RoCE (`Link layer: Ethernet`).",
    },
    HcaSpec {
        ca_type: "MT4118",
        product: "ConnectX-4 Lx Virtual Function",
        generation: None,
        max_ib_rate_gbps: None,
        source: PCI_IDS,
        note: "A virtual function: on a hypervisor its port stays Down until a guest uses it. Ethernet only.",
    },
    HcaSpec {
        ca_type: "MT4119",
        product: "ConnectX-5",
        generation: Some("EDR"),
        max_ib_rate_gbps: Some(100.0),
        source: "research notes (CA type table); Mellanox ConnectX-5 VPI product brief",
        note: "",
    },
    HcaSpec {
        ca_type: "MT4120",
        product: "ConnectX-5 Virtual Function",
        generation: Some("EDR"),
        max_ib_rate_gbps: Some(100.0),
        source: PCI_IDS,
        note: "A virtual function: on a hypervisor its port stays Down until a guest uses it.",
    },
    HcaSpec {
        ca_type: "MT4121",
        product: "ConnectX-5 Ex",
        generation: Some("EDR"),
        max_ib_rate_gbps: Some(100.0),
        source: "research notes (CA type table); Mellanox ConnectX-5 Ex VPI product brief",
        note: "",
    },
    HcaSpec {
        ca_type: "MT4122",
        product: "ConnectX-5 Ex Virtual Function",
        generation: Some("EDR"),
        max_ib_rate_gbps: Some(100.0),
        source: PCI_IDS,
        note: "A virtual function: on a hypervisor its port stays Down until a guest uses it.",
    },
    HcaSpec {
        ca_type: "MT4123",
        product: "ConnectX-6",
        generation: Some("HDR"),
        max_ib_rate_gbps: Some(200.0),
        source: "research notes (CA type table); NVIDIA ConnectX-6 VPI product brief",
        note: "HDR100 (2X splitter) ports print `Rate: 100` by design.",
    },
    HcaSpec {
        ca_type: "MT4124",
        product: "ConnectX-6 Virtual Function",
        generation: Some("HDR"),
        max_ib_rate_gbps: Some(200.0),
        source: "research notes (CA type table: Azure HDR VMs); NVIDIA ConnectX-6 VPI product brief",
        note: "Seen on Azure HDR VM sizes (ND A100 v4: 8 × 200).",
    },
    HcaSpec {
        ca_type: "MT4125",
        product: "ConnectX-6 Dx",
        generation: None,
        max_ib_rate_gbps: None,
        source: "research notes (CA type table); NVIDIA ConnectX-6 Dx EN product brief",
        note: "Ethernet only.",
    },
    HcaSpec {
        ca_type: "MT4126",
        product: "ConnectX mlx5 generic Virtual Function",
        generation: None,
        max_ib_rate_gbps: None,
        source: TYPES,
        note: "A virtual function of any recent ConnectX: the generation cannot be told from the type.",
    },
    HcaSpec {
        ca_type: "MT4127",
        product: "ConnectX-6 Lx",
        generation: None,
        max_ib_rate_gbps: None,
        source: "research notes (CA type table); NVIDIA ConnectX-6 Lx EN product brief",
        note: "Ethernet only.",
    },
    HcaSpec {
        ca_type: "MT4129",
        product: "ConnectX-7",
        generation: Some("NDR"),
        max_ib_rate_gbps: Some(400.0),
        source: "research notes (CA type table); NVIDIA ConnectX-7 product brief",
        note: "NDR200 (2X splitter) ports print `Rate: 200` by design.",
    },
    HcaSpec {
        ca_type: "MT4131",
        product: "ConnectX-8",
        generation: Some("XDR"),
        max_ib_rate_gbps: Some(800.0),
        source: "research notes (CA type table); NVIDIA ConnectX-8 SuperNIC product brief",
        note: "",
    },
    HcaSpec {
        ca_type: "MT41682",
        product: "BlueField",
        generation: Some("EDR"),
        max_ib_rate_gbps: Some(100.0),
        source: "research notes (CA type table); Mellanox BlueField product brief",
        note: "",
    },
    HcaSpec {
        ca_type: "MT41686",
        product: "BlueField-2",
        generation: Some("HDR"),
        max_ib_rate_gbps: Some(200.0),
        source: "research notes (CA type table); NVIDIA BlueField-2 DPU product brief",
        note: "Many BlueField-2 cards are Ethernet-only models.",
    },
    HcaSpec {
        ca_type: "MT41692",
        product: "BlueField-3",
        generation: Some("NDR"),
        max_ib_rate_gbps: Some(400.0),
        source: "research notes (CA type table); NVIDIA BlueField-3 DPU product brief",
        note: "",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_accept_every_spelling() {
        for t in ["MT4123", "mt4123", " 4123 "] {
            assert_eq!(
                hca_expected_rate(t).map(|h| h.product),
                Some("ConnectX-6"),
                "{t}"
            );
        }
        assert_eq!(
            hca_expected_rate("MT4129").and_then(|h| h.max_ib_rate_gbps),
            Some(400.0)
        );
        assert_eq!(
            hca_expected_rate("MT41692").and_then(|h| h.generation),
            Some("NDR")
        );
        assert_eq!(
            hca_expected_rate("MT4125").and_then(|h| h.max_ib_rate_gbps),
            None
        );
        assert!(hca_expected_rate("MT9999").is_none());
        assert!(hca_expected_rate("").is_none());
        assert!(hca_expected_rate("MT").is_none());
    }

    #[test]
    fn table_is_sourced_unique_and_rates_match_generations() {
        let rate_of = |g: &str| match g {
            "QDR" => 40.0,
            "FDR" => 56.0,
            "EDR" => 100.0,
            "HDR" => 200.0,
            "NDR" => 400.0,
            "XDR" => 800.0,
            other => panic!("unknown generation {other}"),
        };
        let mut seen = std::collections::HashSet::new();
        for h in HCAS {
            assert!(seen.insert(h.ca_type), "duplicate {}", h.ca_type);
            assert!(h.ca_type.starts_with("MT"), "{}", h.ca_type);
            assert!(!h.source.trim().is_empty(), "{}", h.ca_type);
            assert_eq!(
                h.generation.map(rate_of),
                h.max_ib_rate_gbps,
                "{}",
                h.ca_type
            );
        }
    }
}
