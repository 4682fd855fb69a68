//! Render-then-parse round trips for the ibstatus, ibv_devinfo and iblinkinfo
//! models: any model the tools could print must come back unchanged (spans
//! aside) and without warnings.

// Test code: a failed unwrap or index is a failed test.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use fabricscope::model::ib::{Guid, LinkLayer, PhysState, PortState};
use fabricscope::model::iblinkinfo::{
    Iblinkinfo, LinkNode, LinkPort, LinkWidth, NodeType, RemotePort,
};
use fabricscope::model::ibstatus::{Ibstatus, IbstatusPort, SysfsRate};
use fabricscope::model::ibv_devinfo::{ExtraField, GidEntry, IbvDevice, IbvDevinfo, IbvPort};
use fabricscope::parse::{iblinkinfo, ibstatus, ibv_devinfo, lines_of};
use fabricscope::LineSpan;
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;

fn port_state() -> impl Strategy<Value = PortState> {
    prop_oneof![
        Just(PortState::Down),
        Just(PortState::Initializing),
        Just(PortState::Armed),
        Just(PortState::Active),
        Just(PortState::Unknown),
    ]
}

fn phys_state() -> impl Strategy<Value = PhysState> {
    prop_oneof![
        Just(PhysState::NoStateChange),
        Just(PhysState::Sleep),
        Just(PhysState::Polling),
        Just(PhysState::Disabled),
        Just(PhysState::PortConfigurationTraining),
        Just(PhysState::LinkUp),
        Just(PhysState::LinkErrorRecovery),
        Just(PhysState::PhyTest),
        Just(PhysState::Unknown),
    ]
}

fn link_layer() -> impl Strategy<Value = LinkLayer> {
    prop_oneof![
        Just(LinkLayer::Infiniband),
        Just(LinkLayer::Ethernet),
        Just(LinkLayer::Unknown),
    ]
}

fn device_name() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_]{0,10}"
}

/// Free text as a tool would print it: no line breaks, no surrounding blanks.
fn words(max: usize) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("[A-Za-z0-9_.()/ -]{{0,{max}}}"))
        .unwrap()
        .prop_map(|s| s.trim().to_owned())
}

fn gid() -> impl Strategy<Value = String> {
    vec("[0-9a-f]{4}", 8).prop_map(|groups| groups.join(":"))
}

/// Numbers that print and read back exactly with one decimal.
fn tenths() -> impl Strategy<Value = f64> {
    (0u32..100_000).prop_map(|n| f64::from(n) / 10.0)
}

fn sysfs_rate() -> impl Strategy<Value = SysfsRate> {
    (
        (0u32..10_000).prop_map(|n| f64::from(n) / 2.0),
        option::of((1u32..=12, option::of("[A-Z][A-Z0-9]{1,5}"))),
    )
        .prop_map(|(rate_gbps, width)| SysfsRate {
            rate_gbps,
            width: width.as_ref().map(|(lanes, _)| format!("{lanes}X")),
            lanes: width.as_ref().map(|(lanes, _)| *lanes),
            generation: width.and_then(|(_, generation)| generation),
        })
}

fn ibstatus_port() -> impl Strategy<Value = IbstatusPort> {
    (
        device_name(),
        1u32..=255,
        option::of(gid()),
        option::of(any::<u32>()),
        option::of(any::<u32>()),
        option::of(port_state()),
        option::of(phys_state()),
        option::of(sysfs_rate()),
        option::of(link_layer()),
    )
        .prop_map(
            |(device, port, default_gid, base_lid, sm_lid, state, phys, rate, link_layer)| {
                IbstatusPort {
                    default_gid,
                    base_lid,
                    sm_lid,
                    state,
                    physical_state: phys,
                    rate,
                    link_layer,
                    ..IbstatusPort::new(device, port, LineSpan::line(1))
                }
            },
        )
}

fn ibstatus_model() -> impl Strategy<Value = Ibstatus> {
    (
        vec(ibstatus_port(), 0..6),
        option::of("[A-Za-z][A-Za-z0-9 '/()]{0,30}".prop_map(|s| s.trim().to_owned())),
    )
        .prop_map(|(ports, fatal_error)| Ibstatus {
            ports,
            fatal_error,
            headerless_ports: Vec::new(),
        })
}

fn unspan_ibstatus(mut m: Ibstatus) -> Ibstatus {
    for p in &mut m.ports {
        p.span = LineSpan::line(1);
    }
    m
}

/// A field the model does not name: the `x_` prefix keeps it clear of the
/// labels the parser knows.
fn extra_field(with_items: bool) -> impl Strategy<Value = ExtraField> {
    // Flag lines are printed only under an empty or hex-valued heading.
    let value = prop_oneof![
        words(20),
        Just(String::new()),
        any::<u32>().prop_map(|v| format!("0x{v:08x}")),
    ];
    let labelled = ("x_[a-z_]{1,12}", value, vec("[A-Z][A-Z0-9_]{0,14}", 0..4)).prop_map(
        move |(label, value, items)| {
            let takes_items = value.is_empty() || value.starts_with("0x");
            ExtraField {
                label,
                value: Some(value),
                items: if with_items && takes_items {
                    items
                } else {
                    Vec::new()
                },
            }
        },
    );
    let statement = "x_[a-z_]{1,12}".prop_map(|label| ExtraField {
        label: format!("{label} not supported"),
        value: None,
        items: Vec::new(),
    });
    if with_items {
        prop_oneof![3 => labelled, 1 => statement].boxed()
    } else {
        labelled.boxed()
    }
}

fn gid_entry() -> impl Strategy<Value = GidEntry> {
    (
        0u32..256,
        gid(),
        option::of(prop_oneof![Just("RoCE v1"), Just("RoCE v2")]),
    )
        .prop_map(|(index, gid, kind)| GidEntry {
            index,
            gid,
            kind: kind.map(str::to_owned),
        })
}

fn ibv_port() -> impl Strategy<Value = IbvPort> {
    (
        (
            1u32..=255,
            option::of(port_state()),
            option::of(any::<u32>()),
            option::of(any::<u32>()),
            option::of(any::<u32>()),
            option::of(any::<u32>()),
            option::of(any::<u32>()),
            option::of(link_layer()),
        ),
        (
            option::of(1u32..=12),
            option::of(tenths()),
            option::of(tenths()),
            option::of(phys_state()),
            vec(gid_entry(), 0..3),
            vec(extra_field(false), 0..3),
        ),
    )
        .prop_map(
            |(
                (number, state, max_mtu, active_mtu, sm_lid, port_lid, port_lmc, link_layer),
                (width, speed, effective, phys_state, gids, extra),
            )| IbvPort {
                number,
                state,
                max_mtu,
                active_mtu,
                sm_lid,
                port_lid,
                port_lmc,
                link_layer,
                active_width_lanes: width,
                active_speed_gbps: speed,
                effective_speed_gbps: effective,
                phys_state,
                gids,
                extra,
                span: LineSpan::line(1),
            },
        )
}

/// Words, never empty: a value ibv_devinfo always prints (`transport`,
/// `fw_ver`, `hw_ver`), whose empty form is a cut line.
fn filled_words(max: usize) -> impl Strategy<Value = String> {
    words(max).prop_map(|s| if s.is_empty() { "0".to_owned() } else { s })
}

fn ibv_device() -> impl Strategy<Value = IbvDevice> {
    (
        (
            device_name(),
            option::of(filled_words(20)),
            option::of(filled_words(20)),
            option::of(any::<u64>()),
            option::of(any::<u64>()),
            option::of(any::<u32>()),
            option::of(any::<u32>()),
        ),
        (
            option::of(filled_words(10)),
            option::of(words(20)),
            option::of(any::<u32>()),
            any::<bool>(),
            vec(extra_field(true), 0..5),
            vec(ibv_port(), 0..3),
        ),
    )
        .prop_map(
            |(
                (hca_id, transport, fw_ver, node_guid, sys_image_guid, vendor_id, vendor_part_id),
                (hw_ver, board_id, phys_port_cnt, heading, extra, ports),
            )| IbvDevice {
                hca_id,
                transport,
                fw_ver,
                node_guid: node_guid.map(Guid),
                sys_image_guid: sys_image_guid.map(Guid),
                vendor_id,
                vendor_part_id,
                hw_ver,
                board_id,
                // ibv_devinfo prints the ports it announces: a device that
                // announces ports and lists none is a cut paste, which the
                // parser marks partial, not output the tool prints.
                phys_port_cnt: phys_port_cnt.filter(|&n| n == 0 || !ports.is_empty()),
                device_ports_heading: heading,
                extra,
                ports,
                span: LineSpan::line(1),
                partial: None,
            },
        )
}

fn ibv_model() -> impl Strategy<Value = IbvDevinfo> {
    let error = prop_oneof![
        Just("No IB devices found".to_owned()),
        (1u32..4).prop_map(|n| format!("Failed to query port {n} props")),
        device_name().prop_map(|d| format!("IB device '{d}' wasn't found")),
    ];
    (
        vec(ibv_device(), 0..3),
        option::of((any::<u32>(), vec(device_name(), 0..4))),
        vec(error, 0..2),
    )
        .prop_map(|(mut devices, list, errors)| IbvDevinfo {
            devices: {
                whole_ports(&mut devices);
                devices
            },
            listed_count: list.as_ref().map(|(count, _)| *count),
            listed: list.map(|(_, names)| names).unwrap_or_default(),
            errors,
        })
}

/// ibv_devinfo prints every field of a port block, in a fixed order: a
/// block that stops before its last field (`link_layer`, with `-v` the
/// GID table after `phys_state`) is a cut or trimmed paste, which the
/// parser marks partial, not output the tool prints. Every port of
/// `devices` is made to end as the tool ends it.
fn whole_ports(devices: &mut [IbvDevice]) {
    for port in devices.iter_mut().flat_map(|d| d.ports.iter_mut()) {
        port.link_layer.get_or_insert(LinkLayer::Infiniband);
        let verbose = port.active_width_lanes.is_some()
            || port.active_speed_gbps.is_some()
            || port.effective_speed_gbps.is_some()
            || port.phys_state.is_some()
            || !port.extra.is_empty();
        if verbose && port.gids.is_empty() {
            port.gids.push(GidEntry {
                index: 0,
                gid: "fe80:0000:0000:0000:0c42:a103:00a1:b2c3".to_owned(),
                kind: None,
            });
        }
    }
}

fn unspan_ibv(mut m: IbvDevinfo) -> IbvDevinfo {
    for d in &mut m.devices {
        d.span = LineSpan::line(1);
        for p in &mut d.ports {
            p.span = LineSpan::line(1);
        }
    }
    m
}

/// Speeds as libibmad and iblinkinfo print them.
const SPEEDS: &[&str] = &[
    "2.5 Gbps",
    "5.0 Gbps",
    "10.0 Gbps",
    "10.0 Gbps (FDR10)",
    "14.0625 Gbps",
    "25.78125 Gbps",
    "53.125 Gbps",
    "106.25 Gbps",
    "212.5 Gbps",
    "undefined (3)",
    "Extended speed",
];

const WIDTHS: &[&str] = &["1X", "2X", "4X", "8X", "12X", "undefined (3)"];

const COULD_BE_SPEEDS: &[&str] = &[
    "25.78125 Gbps",
    "106.25 Gbps",
    "FDR10",
    "FDR10 (Found link at QDR but expected speed is FDR10)",
];

fn lane_gbps(text: &str) -> Option<f64> {
    let (number, rest) = text.split_once(' ')?;
    if rest.starts_with("Gbps") {
        number.parse().ok()
    } else {
        None
    }
}

fn desc() -> impl Strategy<Value = String> {
    "[A-Za-z][A-Za-z0-9;:/ _.-]{0,24}".prop_map(|s| s.trim().to_owned())
}

fn remote(with_guid: bool) -> impl Strategy<Value = RemotePort> {
    (
        any::<u64>(),
        0u32..=0xffff,
        0u32..=255,
        option::of(0u32..=99),
        prop_oneof![desc(), Just(String::new())],
    )
        .prop_map(move |(guid, lid, port, ext_port, desc)| RemotePort {
            guid: with_guid.then_some(Guid(guid)),
            lid,
            port,
            ext_port,
            desc,
        })
}

/// One port; `lid` and `guid` are fixed by the node the port belongs to.
fn link_port(lid: Option<u32>, guid: Option<Guid>, line_form: bool) -> BoxedStrategy<LinkPort> {
    (
        (
            0u32..=0xffff,
            0u32..=255,
            option::of(0u32..=99),
            option::of((0..WIDTHS.len(), 0..SPEEDS.len())),
            port_state(),
            phys_state(),
            option::of((0u32..=31, 0u32..=7)),
        ),
        (
            prop_oneof![
                2 => remote(line_form).prop_map(Some),
                1 => Just(None),
            ],
            any::<bool>(),
            option::of(prop_oneof![Just("4X"), Just("12X")]),
            option::of(0..COULD_BE_SPEEDS.len()),
        ),
    )
        .prop_map(
            move |(
                (own_lid, port, ext_port, link, state, phys, extra),
                (remote, not_available, could_width, could_speed),
            )| {
                let mut p = LinkPort::new(lid.unwrap_or(own_lid), port, LineSpan::line(1));
                p.guid = guid;
                p.ext_port = ext_port;
                if let Some((w, s)) = link {
                    let speed = SPEEDS.get(s).copied().unwrap_or("");
                    p.width = Some(LinkWidth::parse(WIDTHS.get(w).copied().unwrap_or("4X")));
                    p.speed_gbps_per_lane = lane_gbps(speed);
                    p.speed_text = Some(speed.to_owned());
                }
                p.state = state;
                p.physical_state = phys;
                if let Some((hoq, stall)) = extra {
                    p.hoq = Some(hoq);
                    p.vl_stall = Some(stall);
                }
                if remote.is_some() {
                    p.could_be_width = could_width.map(LinkWidth::parse);
                    if let Some(i) = could_speed {
                        let text = COULD_BE_SPEEDS.get(i).copied().unwrap_or("");
                        p.could_be_speed = Some(text.to_owned());
                        p.could_be_speed_gbps_per_lane = lane_gbps(text);
                    }
                } else {
                    p.port_not_available = not_available;
                }
                p.remote = remote;
                p
            },
        )
        .boxed()
}

/// Grouped form with `CA:`/`Switch:`/`Router:` headers.
fn headed_node() -> impl Strategy<Value = LinkNode> {
    (
        prop_oneof![
            Just(NodeType::Ca),
            Just(NodeType::Switch),
            Just(NodeType::Router)
        ],
        any::<u64>(),
        desc(),
        option::of(any::<u64>()),
    )
        .prop_flat_map(|(node_type, guid, desc, port_guid)| {
            let guid = (node_type == NodeType::Switch).then_some(Guid(guid));
            vec(link_port(None, port_guid.map(Guid), false), 1..5).prop_map(move |ports| LinkNode {
                node_type: Some(node_type),
                guid,
                desc: Some(desc.clone()),
                ports,
                span: LineSpan::line(1),
            })
        })
}

/// `-l` lines: every line carries the node GUID and description.
fn line_form_node(guid: u64) -> impl Strategy<Value = LinkNode> {
    desc().prop_flat_map(move |desc| {
        vec(link_port(None, Some(Guid(guid)), true), 1..5).prop_map(move |ports| LinkNode {
            node_type: None,
            guid: Some(Guid(guid)),
            desc: Some(desc.clone()),
            ports,
            span: LineSpan::line(1),
        })
    })
}

/// Grep-filtered switch lines: no header, grouped by the shared LID.
fn bare_node(lid: u32) -> impl Strategy<Value = LinkNode> {
    vec(link_port(Some(lid), None, false), 1..5).prop_map(|ports| LinkNode {
        ports,
        span: LineSpan::line(1),
        ..LinkNode::default()
    })
}

fn iblinkinfo_model() -> impl Strategy<Value = Iblinkinfo> {
    let headed = vec(headed_node(), 0..4).boxed();
    let lines = proptest::sample::subsequence((1u64..40).collect::<Vec<_>>(), 0..4)
        .prop_flat_map(|guids| guids.into_iter().map(line_form_node).collect::<Vec<_>>())
        .boxed();
    let bare = proptest::sample::subsequence((0u32..40).collect::<Vec<_>>(), 0..4)
        .prop_flat_map(|lids| lids.into_iter().map(bare_node).collect::<Vec<_>>())
        .boxed();
    prop_oneof![headed, lines, bare].prop_map(|nodes| Iblinkinfo { nodes })
}

fn unspan_iblinkinfo(mut m: Iblinkinfo) -> Iblinkinfo {
    for n in &mut m.nodes {
        n.span = LineSpan::line(1);
        for p in &mut n.ports {
            p.span = LineSpan::line(1);
        }
    }
    m
}

proptest! {
    #[test]
    fn ibstatus_round_trip(model in ibstatus_model()) {
        let text = ibstatus::render(&model);
        let parsed = ibstatus::parse(&lines_of(&text));
        prop_assert!(parsed.warnings.iter().all(|w| model.fatal_error.is_some()
            && w.kind == fabricscope::WarningKind::Truncated), "{:?}\n{}", parsed.warnings, text);
        prop_assert_eq!(unspan_ibstatus(parsed.value), model, "{}", text);
    }

    #[test]
    fn ibv_devinfo_round_trip(model in ibv_model()) {
        let text = ibv_devinfo::render(&model);
        let parsed = ibv_devinfo::parse(&lines_of(&text));
        prop_assert_eq!(parsed.warnings.len(), model.errors.len(), "{:?}\n{}", parsed.warnings, text);
        prop_assert_eq!(unspan_ibv(parsed.value), model, "{}", text);
    }

    /// A paste that begins inside a device's first port block, below its
    /// `port:` line: the port is read whole under a device with no name
    /// and a port with no number, marked cut at the top; every port and
    /// device after it is read as the whole output reads it; no line is
    /// unread.
    #[test]
    fn ibv_devinfo_cut_inside_its_first_port_keeps_every_field(
        mut devices in vec(ibv_device(), 1..3),
    ) {
        prop_assume!(!devices[0].ports.is_empty());
        whole_ports(&mut devices);
        let model = IbvDevinfo { devices, ..IbvDevinfo::default() };
        let text = ibv_devinfo::render(&model);
        let first_field = text
            .find("\t\tport:\t")
            .and_then(|at| text[at..].find('\n').map(|end| at + end + 1));
        prop_assume!(first_field.is_some());
        let tail = &text[first_field.unwrap_or_default()..];
        prop_assume!(["state", "max_mtu", "active_mtu", "sm_lid", "port_lid", "port_lmc", "link_layer"]
            .iter()
            .any(|l| tail.starts_with(&format!("\t\t\t{l}:"))));
        let parsed = ibv_devinfo::parse(&lines_of(tail));
        prop_assert!(
            parsed.warnings.iter().all(|w| w.kind == fabricscope::WarningKind::Truncated),
            "{:?}\n{}", parsed.warnings, tail
        );
        let got = unspan_ibv(parsed.value);
        prop_assert_eq!(got.devices.len(), model.devices.len(), "{}", tail);
        let cut = &got.devices[0];
        prop_assert!(cut.begins_inside_a_port());
        prop_assert_eq!(cut.hca_id.as_str(), ibv_devinfo::UNKNOWN_HCA);
        let whole = &model.devices[0].ports;
        prop_assert_eq!(
            &cut.ports[0],
            &IbvPort { number: IbvPort::UNKNOWN_NUMBER, ..whole[0].clone() },
            "{}", tail
        );
        prop_assert_eq!(&cut.ports[1..], &whole[1..], "{}", tail);
        prop_assert_eq!(&got.devices[1..], &model.devices[1..], "{}", tail);
    }

    #[test]
    fn iblinkinfo_round_trip(model in iblinkinfo_model()) {
        let text = iblinkinfo::render(&model);
        let parsed = iblinkinfo::parse(&lines_of(&text));
        prop_assert!(parsed.warnings.is_empty(), "{:?}\n{}", parsed.warnings, text);
        prop_assert_eq!(unspan_iblinkinfo(parsed.value), model, "{}", text);
    }

    /// Whatever the input, the parsers return: no panic, and every warning
    /// points at a line of the input.
    #[test]
    fn parsers_never_panic(text in "[ -~\t\n]{0,400}") {
        let lines = lines_of(&text);
        let count = lines.len();
        for warnings in [
            ibstatus::parse(&lines).warnings,
            ibv_devinfo::parse(&lines).warnings,
            iblinkinfo::parse(&lines).warnings,
        ] {
            prop_assert!(warnings.iter().all(|w| w.span.last_line <= count));
        }
    }
}
