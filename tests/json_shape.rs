//! The JSON shape of `fabricscope parse` is a contract other tools depend on.
//! This test derives the shape (every key path and its JSON type) of each
//! section kind from real outputs and compares it with `docs/json-shape.md`.
//! A renamed or removed field fails here; run with `UPDATE_DOCS=1` to accept
//! an intended change, and say so in the changelog.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Inputs covering every kind and the optional parts of each model.
fn inputs() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let files = [
        "ibsim/port_down/node02_ibstat.txt",
        "ibsim/port_down/node02_ibstat_ca_port.txt",
        "ibsim/healthy/ibstat_l.txt",
        "ibsim/healthy/ibstat_p.txt",
        "ibsim/narrow_link/iblinkinfo.txt",
        "ibsim/narrow_link/iblinkinfo_l.txt",
        "ibsim/counters/node03_perfquery.txt",
        "ibsim/counters/node03_perfquery_x.txt",
        "ibsim/counters/node02_perfquery_E.txt",
        "ibsim/counters/ibqueryerrors_thresholds.txt",
        "ibsim/counters/ibqueryerrors_r.txt",
        "rules/IB006/fires_ibportstate_port_and_peer_at_1x.txt",
        "wild/gpud943-sysfs-counters-loop-saturated.txt",
        "rules/IB101/fires_node_exporter_query_across_hosts.txt",
        "rules/IB101/quiet_node_exporter_scrape_all_zero.txt",
        "wild/gcm-ibdiagnet2-pm-multi-block.txt",
        "rules/IB006/fires_ibdiagnet_speed_and_width.txt",
        "rules/IB116/fires_grew_during_the_run.txt",
        "rules/IB116/fires_value_over_the_limit.txt",
        "own/h200-x2-driver580/nvlink_s.txt",
        "own/h200-x2-driver580/nvlink_e.txt",
        "own/h200-x2-driver580/nvlink_ec.txt",
        "own/h200-x2-driver580/nvlink_c.txt",
        "own/h200-x2-driver580/nvlink_R.txt",
        "own/h200-x2-driver580/nvlink_gt_r.txt",
        "own/h200-x2-driver580/nvlink_info.txt",
        "own/h200-x2-driver580/nvlink_gLowPwrInfo.txt",
        "gpu/h200-x2/topo_m.txt",
        "gpu/h200-x2/topo_p2p_a.txt",
        "gpu/h200-x2/q.txt",
        "rules/DG004/fires_err_row.txt",
        "rules/DG006/fires_dmesg_t_fallen_off.txt",
        "rules/DG006/fires_journal_ecc.txt",
        "rules/DG006/fires_nvswitch_sxid.txt",
        "rules/DG006/unjudged_cut_before_code.txt",
        "rules/IB011/fires_flapping_dmesg.txt",
        "rules/IB011/unjudged_cut_state.txt",
        "rules/IB012/fires_module_errors.txt",
        "rules/IB012/fires_pcie_narrow.txt",
        "rules/IB012/quiet_probe.txt",
        "rules/NC001/fires_retry_exceeded.txt",
        "rules/NC001/fires_flushed_only.txt",
        "rules/NC002/fires_no_ib_device.txt",
        "rules/NC004/fires_failed_verbs_calls.txt",
        "rules/NC004/fires_port_flap_recovered.txt",
        "rules/NC004/unjudged_cut_inside_the_event.txt",
        "rules/NC005/fires_gid_index_names_v1.txt",
        "gpu/h200-x2/query_csv.txt",
        "gpu/h200-x2/smi_L.txt",
        "gpu/h200-x2/during_dmon_all.txt",
        "rules/DG001/fires_memory_fail_dcgm4.txt",
        "rules/DG001/fires_pcie_fail_dcgm3.txt",
        "rules/DG002/fires_nvlink_failure_pcie_warning.txt",
        "rules/ML002/fires_effective_ber_above_spec.txt",
        "rules/ML004/fires_rx_low_one_lane.txt",
        "rules/IB008/fires_topology_one_lane_link.txt",
        "rules/IB008/fires_ports_sdr_link.txt",
        "rules/IB009/fires_fans_out_of_range_and_hot.txt",
        "rules/IB009/fires_psu_without_dc_power.txt",
    ];
    let mut texts: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(root.join(f)).unwrap_or_else(|e| panic!("{f}: {e}")))
        .collect();
    texts.push("$ date\nMon Nov 30 00:53:23 UTC 2026\n".to_owned());
    texts.push(
        "sminfo: sm lid 1 sm guid 0x98039b03009fcfd6, activity count 5209141 priority 15 state 3 SMINFO_MASTER\n"
            .to_owned(),
    );
    texts.push(
        "0000:3b:00.0 mlx5_0 (MT4123 - MCX653105A-HDAT) ConnectX-6 VPI adapter card fw 20.31.1014 port 1 (ACTIVE) ==> ib0 (Up)\nmlx5_1 port 1 ==> ens1f0np0 (Down)\n"
            .to_owned(),
    );
    texts.push(
        "Infiniband device 'mlx5_0' port 1 status:\n\tdefault gid:\t fe80:0000:0000:0000:0002:c903:00a1:b2c3\n\tbase lid:\t 0x11\n\tsm lid:\t\t 0x1\n\tstate:\t\t 4: ACTIVE\n\tphys state:\t 5: LinkUp\n\trate:\t\t 200 Gb/sec (4X HDR)\n\tlink_layer:\t InfiniBand\n"
            .to_owned(),
    );
    texts.push(
        "$ mst status -v\nMST modules:\n------------\n    MST PCI module is not loaded\n    MST PCI configuration module loaded\nPCI devices:\n------------\nDEVICE_TYPE             MST                           PCI       RDMA            NET                                     NUMA\nConnectX7(rev:0)        /dev/mst/mt4129_pciconf0      ba:00.0   mlx5_0          net-ibp186s0                            1\n\n"
            .to_owned(),
    );
    texts.push(
        "$ mst status\nMST devices:\n------------\n/dev/mst/mt4123_pciconf0         - PCI configuration cycles access.\n                                   domain:bus:dev.fn=0000:4b:00.0 addr.reg=88 data.reg=92 cr_bar.gw_offset=-1\n                                   Chip revision is: 00\n\nCables:\n-------------------\nmt4123_pciconf0_cable_0\n\nInband devices:\n---------------\n/dev/mst/CA_MT4123_gpu-b2_HCA-1_lid-0x0011\n"
            .to_owned(),
    );
    texts.push(
        "$ mlxcables\nQuerying Cables ....\n\nCable #1:\n---------\nCable name    : mt4123_pciconf0_cable_0\n>> No FW data to show\n-------- Cable EEPROM --------\nIdentifier                     : QSFP28 (11h)\nTechnology                     : Copper cable unequalized (a0h)\nCompliance                     : 100GBASE-CR4, HDR,EDR\nAttenuation: 2.5GHz            : 4dB\nOUI                            : 0x0002c9\nVendor                         : Mellanox\nSerial number                  : MT2231VS04417\nPart number                    : MCP1650-H001E30\nRevision                       : A3\nWavelength [nm]                : N/A\nTemperature [c]                : 38 C\nDigital Diagnostic Monitoring  : YES\nLength [m]                     : 1 m\n"
            .to_owned(),
    );
    texts.push(
        "$ rdma link show\nlink mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 17 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP netdev ibp12s0\n"
            .to_owned(),
    );
    texts.push(
        "hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t20.36.1010\n\tnode_guid:\t\t\t0c42:a103:00a1:b2c3\n\tsys_image_guid:\t\t\t0c42:a103:00a1:b2c3\n\tvendor_id:\t\t\t0x02c9\n\tvendor_part_id:\t\t\t4123\n\thw_ver:\t\t\t\t0x0\n\tboard_id:\t\t\tMT_0000000223\n\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tmax_mtu:\t\t4096 (5)\n\t\t\tactive_mtu:\t\t4096 (5)\n\t\t\tsm_lid:\t\t\t1\n\t\t\tport_lid:\t\t17\n\t\t\tport_lmc:\t\t0x00\n\t\t\tlink_layer:\t\tInfiniBand\n"
            .to_owned(),
    );
    texts.push(
        "$ dcgmi nvlink -s\n+----------------------+\n|  NvLink Link Status  |\n+----------------------+\nGPUs:\n    gpuId 0:\n        U U U U U U U U U U U U U U U U U U\nNvSwitches:\n    No NvSwitches found.\n\nKey: Up=U, Down=D, Disabled=X, Not Supported=_\n"
            .to_owned(),
    );
    texts.push(
        "$ dcgmi dmon -e 1009,1010\n# Entity           PCITX           PCIRX           NVLTX           NVLRX\n      Id               B               B               B               B\n    GPU 0     1234567.000        2000.000  51234567890.000             N/A\n"
            .to_owned(),
    );
    // A topo -m of PCIe GPUs pasted without its legend: whether it is the
    // `-mp` view is unknown (`pci_only` null; an NVLink cell would say no).
    texts.push(
        "$ nvidia-smi topo -m\n\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tSYS\t0-15\nGPU1\tSYS\t X \t16-31\n"
            .to_owned(),
    );
    let errors = fabricscope::model::dcgmi_nvlink::DcgmiNvlinkErrors {
        gpu: Some(0),
        links: vec![fabricscope::model::dcgmi_nvlink::DcgmiLinkErrors {
            link: 0,
            crc_flit: Some(12),
            crc_data: Some(3),
            replay: Some(0),
            recovery: Some(1),
            span: fabricscope::LineSpan::line(1),
        }],
    };
    let rendered = fabricscope::parse::dcgmi_nvlink::render_errors(&errors);
    texts.push(format!("$ dcgmi nvlink -e -g 0\n{rendered}"));
    // Fragments and cut pastes: the `partial` objects of every model.
    for f in [
        "fragments/topo_m_without_header.txt",
        "fragments/ibstat_port_without_ca.txt",
        "fragments/perfquery_header_lost.txt",
        "rules/IN001/fires_topo_cut_mid_row.txt",
        "rules/IN001/fires_ibstat_cut_in_port.txt",
        "rules/IN001/fires_sysfs_cut_in_value.txt",
        "rules/IN001/fires_node_exporter_cut_in_labels.txt",
        "rules/DG006/fires_dcgm_exporter_last_xid.txt",
        "rules/DG003/fires_dcgm_exporter_remap_failure.txt",
        "rules/DG005/fires_dcgm_exporter_dbe_volatile.txt",
        "rules/IN001/fires_dcgm_exporter_cut_in_labels.txt",
        "rules/IB001/fires_ibstat_grep_state_no_headers.txt",
        "rules/IB001/fires_ibstatus_block_without_header.txt",
    ] {
        texts.push(std::fs::read_to_string(root.join(f)).unwrap_or_else(|e| panic!("{f}: {e}")));
    }
    texts.push(
        "\tport:\t1\n\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\tlink_layer:\t\tInfiniBand\n".to_owned(),
    );
    // A node_exporter scrape with another collector's metrics (set aside)
    // and a port's value cut by the paste's end.
    texts.push(
        "node_infiniband_symbol_error_total{device=\"mlx5_0\",port=\"1\"} 0\nnode_load1 0.52\n\
         node_infiniband_link_downed_total{device=\"mlx5_0\",port=\"1\"} \n"
            .to_owned(),
    );
    // A dcgm-exporter query across two hosts: NVLink totals, a blank,
    // another exporter's metric set aside, a GPU's value cut by the end.
    texts.push(
        "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL{gpu=\"0\",UUID=\"GPU-a\",instance=\"gpu01:9400\"} => 3 @[1765101600]\n\
         DCGM_FI_DEV_ROW_REMAP_PENDING{gpu=\"0\",UUID=\"GPU-a\",instance=\"gpu01:9400\"} => 1 @[1765101600]\n\
         DCGM_FI_DEV_MEMORY_TEMP{gpu=\"0\",UUID=\"GPU-b\",Hostname=\"gpu02\"} 9223372036854775794\n\
         go_goroutines 8\n\
         DCGM_FI_DEV_XID_ERRORS{gpu=\"1\",UUID=\"GPU-c\",Hostname=\"gpu02\"} \n"
            .to_owned(),
    );
    // A Module Info lane printed N/A: `values` holds null in its place.
    texts.push(
        "Module Info\n-----------\nRx Power Current [dBm]             : 1.2,N/A,0.9,1.1 [-10.41..6]\n"
            .to_owned(),
    );
    texts
}

/// The JSON type of a value, as the shape lists it.
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Collects `path -> {types}`. Objects used as maps (several keys, all
/// values of one shape, e.g. counters keyed by the tool's names) collapse to
/// `path.*` so the shape lists the map, not every counter name.
fn walk(path: &str, v: &Value, out: &mut BTreeMap<String, BTreeSet<&'static str>>) {
    out.entry(path.to_owned()).or_default().insert(type_name(v));
    match v {
        Value::Array(items) => {
            for item in items {
                walk(&format!("{path}[]"), item, out);
            }
        }
        Value::Object(map) => {
            let mut shapes = map.values().map(|x| {
                let mut s = BTreeMap::new();
                walk("", x, &mut s);
                s
            });
            let first = shapes.next();
            let is_map = map.len() >= 4 && first.is_some_and(|f| shapes.all(|s| s == f));
            for (k, x) in map {
                let key = if is_map { "*" } else { k.as_str() };
                walk(&format!("{path}.{key}"), x, out);
            }
        }
        _ => {}
    }
}

fn render_shape() -> String {
    let options = fabricscope::ReadOptions::default();
    let mut document = BTreeMap::new();
    let mut per_kind: BTreeMap<String, BTreeMap<String, BTreeSet<&'static str>>> = BTreeMap::new();
    for text in inputs() {
        let doc = fabricscope::read_all(&text, &options).unwrap();
        let mut json = serde_json::to_value(&doc).unwrap();
        let sections = json["sections"].take();
        json["sections"] = Value::Array(vec![]);
        walk("", &json, &mut document);
        for s in sections.as_array().unwrap() {
            let kind = s["kind"].as_str().unwrap().to_owned();
            walk("section", s, per_kind.entry(kind).or_default());
        }
    }
    let mut md = String::from(
        "# JSON shape of `fabricscope parse` (generated)\n\n\
         Generated by `tests/json_shape.rs` from real outputs; do not edit by hand\n\
         (`UPDATE_DOCS=1 cargo test --test json_shape`). Each line is a key path and\n\
         the JSON types seen there; `[]` is an array element, `*` any key of a map\n\
         (such as counters keyed by the tool's own names). See `docs/json.md` for the\n\
         meaning of the fields.\n\n## Document\n\n```text\n",
    );
    let line = |md: &mut String, path: &str, types: &BTreeSet<&str>| {
        let types: Vec<&str> = types.iter().copied().collect();
        md.push_str(&format!(
            "{} : {}\n",
            if path.is_empty() { "." } else { path },
            types.join(" | ")
        ));
    };
    for (path, types) in &document {
        line(&mut md, path, types);
    }
    md.push_str("```\n");
    for (kind, shape) in &per_kind {
        md.push_str(&format!("\n## Section kind `{kind}`\n\n```text\n"));
        for (path, types) in shape {
            line(&mut md, path, types);
        }
        md.push_str("```\n");
    }
    md
}

#[test]
fn json_shape_matches_the_documented_contract() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/json-shape.md");
    let now = render_shape();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &now).unwrap();
        return;
    }
    let documented = std::fs::read_to_string(&path).unwrap_or_default();
    if documented != now {
        let diff: Vec<String> = now
            .lines()
            .filter(|l| !documented.lines().any(|d| d == *l))
            .map(|l| format!("+ {l}"))
            .chain(
                documented
                    .lines()
                    .filter(|l| !now.lines().any(|n| n == *l))
                    .map(|l| format!("- {l}")),
            )
            .take(40)
            .collect();
        panic!(
            "the JSON shape changed; if intended, run UPDATE_DOCS=1 cargo test --test json_shape\n{}",
            diff.join("\n")
        );
    }
}

#[test]
fn every_kind_is_covered_by_the_shape_inputs() {
    let options = fabricscope::ReadOptions::default();
    let seen: BTreeSet<String> = inputs()
        .iter()
        .flat_map(|t| fabricscope::read_all(t, &options).unwrap().sections)
        .map(|s| s.kind.name().to_owned())
        .collect();
    for name in fabricscope::parse::supported_formats() {
        assert!(
            seen.contains(name),
            "no shape input produces a `{name}` section"
        );
    }
}

/// docs/json.md lists the section kinds for readers; the registry is the
/// truth, so a format added there without the docs fails here.
#[test]
fn docs_list_every_section_kind() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/json.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let row = doc
        .lines()
        .find(|l| l.starts_with("| `sections[].kind` |"))
        .expect("docs/json.md has a `sections[].kind` row");
    let listed: BTreeSet<&str> = row
        .split('`')
        .skip(3)
        .step_by(2)
        .filter(|w| !w.is_empty())
        .collect();
    let registry: BTreeSet<&str> = fabricscope::parse::supported_formats()
        .into_iter()
        .collect();
    assert_eq!(
        listed, registry,
        "docs/json.md's kind list differs from the parser registry"
    );
}
