//! `ibv_devinfo`: RDMA devices and ports as libibverbs reports them.
//!
//! Forms handled (rdma-core `libibverbs/examples/devinfo.c`):
//! - plain: `hca_id:` blocks with device fields (`transport`, `fw_ver`,
//!   `node_guid` as `0002:c903:00a1:b2c3`, `vendor_id`, `phys_port_cnt`…) and
//!   `port:` blocks (`state: PORT_ACTIVE (4)`, `max_mtu`, `sm_lid`,
//!   `port_lid`, `port_lmc`, `link_layer`);
//! - `-v`: dozens more device fields, capability flag names one per line under
//!   their heading (`device_cap_flags: 0x…`, `general_odp_caps:`), statements
//!   such as `core clock not supported`, and per port `active_width`,
//!   `active_speed`, `effective_speed`, `phys_state` and `GID[  0]:` lines;
//! - older libibverbs' `Device ports:` heading before the first port;
//! - `-l`: `2 HCAs found:` then one device name a line.
//!
//! Fields the model does not name go into `extra` in order instead of being
//! warned about; only lines that fit no shape at all are warnings.

use crate::diag::WarningKind;
use crate::model::ib::{Guid, LinkLayer, PhysState, PortState};
use crate::model::ibv_devinfo::{ExtraField, GidEntry, IbvDevice, IbvDevinfo, IbvPort};
use crate::model::partial::{Partial, PartialReason};
use crate::parse::text::{
    begins_only, blank_identifier, blank_value, cut_value, decimal_f64, decimal_u32, hex_u32,
    label_value, read_each_line, redacted_identifier, settle_blank_value, without_note, Unread,
};
use crate::parse::{Block, Line, Parsed, Spec};

pub(crate) const FORMAT: Spec<IbvDevinfo> = Spec {
    command: |argv| argv.first() == Some(&"ibv_devinfo"),
    starts: may_start,
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &[
        "hca_id",
        "transport",
        "fw_ver",
        "node_guid",
        "sys_image_guid",
        "vendor_id",
        "vendor_part_id",
        "hw_ver",
        "board_id",
        "phys_port_cnt",
        "max_mtu",
        "active_mtu",
        "sm_lid",
        "port_lid",
        "port_lmc",
        "link_layer",
    ],
};

/// Reads `ibv_devinfo` output.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<IbvDevinfo> {
    // ibv_devinfo indents everything under `hca_id:`. Once a device's
    // fields came indented, an unindented line other than a new `hca_id:`
    // or a failure is text after the output (`sminfo: …`, the author's
    // prose), not a field of the last port. A paste that lost all its
    // indentation never sets this.
    let mut indented_seen = false;
    let mut parsed = read_each_line(lines, |line, out: &mut IbvDevinfo, unread: &mut Unread| {
        let raw = line.text();
        let indented = raw.starts_with([' ', '\t']);
        let t = raw.trim();
        if !indented
            && indented_seen
            && !t.starts_with("hca_id:")
            && !is_failure(t)
            && list_heading(t).is_none()
        {
            unread.line(
                line,
                "an unindented line after ibv_devinfo's indented fields: not its output",
            );
            return;
        }
        indented_seen |= indented && !out.devices.is_empty();
        read_line(line, out, unread);
    });
    for device in &mut parsed.value.devices {
        settle_blank_value(&mut device.partial, lines, &mut parsed.warnings);
    }
    parsed.map(mark_portless_devices).map(mark_cut_ports)
}

/// The port fields devinfo.c prints for every port, in order, each with
/// whether a whole block always shows it; `-v` goes on with
/// [`VERBOSE_PORT_FIELDS`].
const PORT_FIELDS: &[(&str, bool)] = &[
    ("state", true),
    ("max_mtu", true),
    ("active_mtu", true),
    ("sm_lid", true),
    ("port_lid", true),
    ("port_lmc", true),
    ("link_layer", true),
];

/// What `-v` prints after [`PORT_FIELDS`], in order. `port_cap_flags2`
/// and `effective_speed` are newer (or printed only when the verb
/// answers), `phys_state` only for an InfiniBand transport, and the GID
/// table only its non-zero entries: none of them is required.
const VERBOSE_PORT_FIELDS: &[(&str, bool)] = &[
    ("max_msg_sz", true),
    ("port_cap_flags", true),
    ("port_cap_flags2", false),
    ("max_vl_num", true),
    ("bad_pkey_cntr", true),
    ("qkey_viol_cntr", true),
    ("sm_sl", true),
    ("pkey_tbl_len", true),
    ("gid_tbl_len", true),
    ("subnet_timeout", true),
    ("init_type_reply", true),
    ("active_width", true),
    ("active_speed", true),
    ("effective_speed", false),
    ("phys_state", false),
    ("GID", false),
];

/// Marks each port block that stops before fields ibv_devinfo always
/// prints: what it lacks is unknown, not absent. The output's last port
/// was cut there by the end of the paste (or of the section); a port
/// before it, ended by the next `port:` or `hca_id:` line, was trimmed
/// by the author (`...` for the rest, or a grep that kept `port:` and
/// `state:`). Before, a block that stopped after `state:` and `max_mtu:`
/// on whole lines was read as a whole port, and a trimmed port before
/// the last one as a port without a link layer: an InfiniBand fault,
/// though it may be RoCE.
///
/// As for ibstat, devinfo.c prints its fields in a fixed order, so a cut
/// block shows a prefix of them: it is cut when it lacks the last field
/// (`link_layer`, or `port_lmc` when no port of the output prints a link
/// layer, as libibverbs before 1.1.4 did not; with `-v`, `active_speed`,
/// and `phys_state` on an InfiniBand transport), and it lacks every
/// field after the last one it shows. A block that shows its last field
/// but skips some in between was trimmed in the middle, and is judged
/// whole. When several ports of one device were cut, every port of it
/// is read in part (a device holds one [`Partial`]).
fn mark_cut_ports(mut out: IbvDevinfo) -> IbvDevinfo {
    let prints_link_layer = out
        .devices
        .iter()
        .flat_map(|d| &d.ports)
        .any(|p| p.link_layer.is_some());
    for device in &mut out.devices {
        if device.partial.is_some() {
            continue;
        }
        let infiniband = device
            .transport
            .as_deref()
            .is_some_and(|t| t.starts_with("InfiniBand"));
        let mut cut = device.ports.iter().filter_map(|port| {
            missing_port_fields(port, prints_link_layer, infiniband)
                .map(|missing| (port.span.last_line, missing))
        });
        let Some((line, mut missing)) = cut.next() else {
            continue;
        };
        // Several ports cut: the line of the device's header, which is in
        // none of them, makes every port of it read in part.
        let mut at = line;
        for (_, more) in cut {
            at = device.span.first_line;
            for field in more {
                if !missing.contains(&field) {
                    missing.push(field);
                }
            }
        }
        device.partial = Some(Partial::new(
            PartialReason::MissingFields,
            missing.into_iter().map(str::to_owned).collect(),
            at,
        ));
    }
    out
}

/// The fields `port` lacks after the last one it shows, when it lacks
/// the last one ibv_devinfo always prints ([`mark_cut_ports`]).
fn missing_port_fields(
    port: &IbvPort,
    prints_link_layer: bool,
    infiniband: bool,
) -> Option<Vec<&'static str>> {
    let shows = |label: &str| match label {
        "GID" => !port.gids.is_empty(),
        "effective_speed" => port.effective_speed_gbps.is_some(),
        _ => port_field_is_set(port, label) || port.extra.iter().any(|f| f.label == label),
    };
    let verbose = VERBOSE_PORT_FIELDS.iter().any(|(label, _)| shows(label));
    let required = |(label, always): &(&'static str, bool)| match *label {
        "link_layer" => prints_link_layer,
        "phys_state" => verbose && infiniband,
        _ => *always,
    };
    let order: Vec<(&'static str, bool)> = PORT_FIELDS
        .iter()
        .chain(if verbose { VERBOSE_PORT_FIELDS } else { &[] })
        .map(|f| (f.0, required(f)))
        .collect();
    let last_required = order.iter().rposition(|(_, req)| *req)?;
    let after = order
        .iter()
        .rposition(|(l, _)| shows(l))
        .map_or(0, |i| i + 1);
    // A block that shows its last required field, or one printed after
    // it (`phys_state`, a GID), reached its end.
    if after > last_required {
        return None;
    }
    Some(
        order
            .iter()
            .skip(after)
            .filter(|(_, req)| *req)
            .map(|(l, _)| *l)
            .collect(),
    )
}

/// Whether `t`, an unindented line met after ibv_devinfo's indented
/// fields, may still be the tool's: a new `hca_id:`, a failure, the `-l`
/// heading, or a field or statement that lost its indentation
/// (`state: PORT_DOWN (1)`, `GID[  0]: …`, `core clock not supported`:
/// its labels are lower case, digits and `_`).
/// Anything else is not its output; the input layer sets such a line aside
/// when it reads as the author's prose ([`crate::input`]'s
/// `prose_after_output`), and this parser reports the rest unread.
pub(crate) fn may_be_its_unindented_line(t: &str) -> bool {
    t.starts_with("hca_id:")
        || is_failure(t)
        || list_heading(t).is_some()
        || t.ends_with(" not supported")
        || label_value(t).is_some_and(|(label, _)| {
            gid_index(label).is_some()
                || label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        })
}

/// A device that announces ports (`phys_port_cnt`) and shows none lacks
/// them: ibv_devinfo prints every port (or, with `-i`, the one asked for)
/// after the device's fields, so the paste stopped before them (or they
/// were filtered out). Its ports are unknown, not absent.
fn mark_portless_devices(mut out: IbvDevinfo) -> IbvDevinfo {
    for device in &mut out.devices {
        let announced = device.phys_port_cnt.unwrap_or(0);
        if device.ports.is_empty() && announced > 0 && device.partial.is_none() {
            device.partial = Some(Partial::new(
                PartialReason::MissingFields,
                (1..=announced.min(64))
                    .map(|n| format!("port {n}"))
                    .collect(),
                device.span.last_line,
            ));
        }
    }
    out
}

fn read_line(line: &Line<'_>, out: &mut IbvDevinfo, unread: &mut Unread) {
    // An author's ` # note` after a header (`hca_id: mlx4_0 # 驱动名称`,
    // `port: 1 # 连接`) or a value (`link_layer: InfiniBand # …`):
    // ibv_devinfo prints no ` #` itself. Before, the note made `port` no
    // number and the link layer unknown.
    let t = without_note(line.text().trim());
    if let Some(count) = list_heading(t) {
        out.listed_count = Some(count);
        return;
    }
    if is_failure(t) {
        unread.warn(
            WarningKind::Truncated,
            line.span(),
            format!("ibv_devinfo failed: {t}"),
        );
        out.errors.push(t.to_owned());
        return;
    }
    let labelled = label_value(t);
    if let Some(("hca_id", name)) = labelled {
        out.devices.push(IbvDevice {
            hca_id: name.to_owned(),
            span: line.span(),
            ..IbvDevice::default()
        });
        return;
    }
    if out.devices.is_empty()
        && out.listed_count.is_none()
        && labelled.is_some_and(|(label, value)| {
            is_port_field_line(line.text())
                || (label == "state" && value.starts_with("PORT_"))
                || is_gid_field(label, value)
                || (is_verbose_port_label(label) && is_verbose_field_line(line.text()))
        })
    {
        open_port_cut_at_the_top(line, out, unread);
    }
    if let (Some((label, _)), Some(port)) = (labelled, cut_port_of(out)) {
        if port_field_is_set(port, label) {
            // `ibv_devinfo | grep state` without its `hca_id:` lines, or
            // the next port of a cut paste: another port's field, whose
            // port is not in the paste. Read into the first, it would
            // hide the state that port showed.
            unread.line(
                line,
                &format!("a second `{label}` before the first `hca_id:`: whose port it is is not in the paste"),
            );
            return;
        }
    }
    if out.devices.is_empty()
        && out.listed_count.is_none()
        && labelled
            .is_some_and(|(label, _)| is_devinfo_label(label) || is_verbose_field_line(line.text()))
    {
        // Output pasted from the middle of a device: read it under a
        // device whose name is unknown, and say so.
        out.devices.push(IbvDevice {
            hca_id: UNKNOWN_HCA.to_owned(),
            span: line.span(),
            partial: Some(Partial::new(
                PartialReason::NoHeader,
                vec!["hca_id (device name)".to_owned()],
                line.number,
            )),
            ..IbvDevice::default()
        });
        unread.warn(
            WarningKind::Truncated,
            line.span(),
            "ibv_devinfo output without its `hca_id:` line: the device is unknown",
        );
    }
    let Some(device) = out.devices.last_mut() else {
        if out.listed_count.is_some() && is_device_name(t) {
            out.listed.push(t.to_owned());
        } else {
            unread.line(line, "not ibv_devinfo output (expected `hca_id:`)");
        }
        return;
    };
    device.span = device.span.join(line.span());
    match labelled {
        Some(("port", number)) => match decimal_u32(number) {
            Ok(n) => device.ports.push(IbvPort {
                number: n,
                span: line.span(),
                ..IbvPort::default()
            }),
            Err(e) => unread.number(line, "port", e),
        },
        Some(("Device ports", "")) if device.ports.is_empty() => device.device_ports_heading = true,
        Some((label, value))
            if device.ports.is_empty() && FILTERED_PORT_LABELS.contains(&label) =>
        {
            open_filtered_port(line, device, unread);
            match device.ports.last_mut() {
                Some(port) => {
                    read_port_field(line, (label, value), port, &mut device.partial, unread)
                }
                None => read_device_field(line, label, value, device, unread),
            }
        }
        Some((label, value)) => match device.ports.last_mut() {
            // ibv_devinfo prints each of these once a port: a second one
            // is another port's (`ibv_devinfo | grep state` appended below
            // a whole output, or a block whose `port:` line was trimmed).
            // Before, it overwrote the port's own: an Active port followed
            // by `state: PORT_DOWN (1)` was read Down.
            Some(port) if port_field_is_set(port, label) => unread.line(
                line,
                &format!(
                    "a second `{label}` after port {}'s: another port's, whose `port:` line is not in the paste",
                    port.number
                ),
            ),
            Some(port) => {
                port.span = port.span.join(line.span());
                read_port_field(line, (label, value), port, &mut device.partial, unread);
            }
            None => read_device_field(line, label, value, device, unread),
        },
        None => read_bare_line(line, t, device, unread),
    }
}

/// A port field before any `hca_id:` or device field: the paste begins
/// inside a port block, its `hca_id:`, the device's fields and the
/// `port:` line cut from the top. Read as the only port of a device whose
/// name is unknown, numbered [`IbvPort::UNKNOWN_NUMBER`]: kept (a
/// `PORT_DOWN` there is said by IN001), not judged, since nothing tells
/// it from any other port of this host or of another snapshot.
fn open_port_cut_at_the_top(line: &Line<'_>, out: &mut IbvDevinfo, unread: &mut Unread) {
    out.devices.push(IbvDevice {
        hca_id: UNKNOWN_HCA.to_owned(),
        span: line.span(),
        ports: vec![IbvPort {
            number: IbvPort::UNKNOWN_NUMBER,
            span: line.span(),
            ..IbvPort::default()
        }],
        partial: Some(Partial::new(
            PartialReason::NoHeader,
            vec![CUT_AT_THE_TOP.to_owned()],
            line.number,
        )),
        ..IbvDevice::default()
    });
    unread.warn(
        WarningKind::Truncated,
        line.span(),
        "ibv_devinfo output that begins inside a port block (cut at the top): its device and port number are unknown, and it is not judged",
    );
}

/// What a paste that begins inside a port block lacks.
pub const CUT_AT_THE_TOP: &str = "`hca_id:`, device and `port:` lines: cut at the top";

/// The port of a paste that begins inside its block, while it is the
/// last thing read (no `hca_id:` or `port:` line after it yet).
fn cut_port_of(out: &IbvDevinfo) -> Option<&IbvPort> {
    match out.devices.as_slice() {
        [device] => device.ports.last().filter(|p| !p.number_known()),
        _ => None,
    }
}

/// Whether `port` already holds the field `label` names (only the fields
/// every port block prints once).
fn port_field_is_set(port: &IbvPort, label: &str) -> bool {
    match label {
        "state" => port.state.is_some(),
        "phys_state" => port.phys_state.is_some(),
        "max_mtu" => port.max_mtu.is_some(),
        "active_mtu" => port.active_mtu.is_some(),
        "sm_lid" => port.sm_lid.is_some(),
        "port_lid" => port.port_lid.is_some(),
        "port_lmc" => port.port_lmc.is_some(),
        "link_layer" => port.link_layer.is_some(),
        "active_width" => port.active_width_lanes.is_some(),
        "active_speed" => port.active_speed_gbps.is_some(),
        _ => false,
    }
}

/// devinfo.c's messages on stderr, after which a device or the whole run
/// stops: `No IB devices found`, `Failed to open device`, `Failed to query
/// port 1 props`, `IB device 'x' wasn't found`, `Failed to get IB devices
/// list: …`.
fn is_failure(t: &str) -> bool {
    t == "No IB devices found"
        || t.starts_with("Failed to ")
        || (t.starts_with("IB device '") && t.ends_with("' wasn't found"))
}

/// `2 HCAs found:` / `1 HCA found:` → the count.
fn list_heading(t: &str) -> Option<u32> {
    let rest = t
        .strip_suffix(" HCAs found:")
        .or_else(|| t.strip_suffix(" HCA found:"))?;
    decimal_u32(rest).ok()
}

fn is_device_name(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= 64
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
}

/// A line without a colon: a flag under the previous heading, or a statement.
fn read_bare_line(line: &Line<'_>, t: &str, device: &mut IbvDevice, unread: &mut Unread) {
    if !device.ports.is_empty() {
        unread.line(line, "not an ibv_devinfo `label: value` line");
        return;
    }
    if is_statement(t) {
        device.extra.push(ExtraField {
            label: t.to_owned(),
            value: None,
            items: Vec::new(),
        });
        return;
    }
    match device.extra.last_mut() {
        Some(heading) if heading_takes_items(heading) => heading.items.push(t.to_owned()),
        // Vendor builds (MLNX_OFED) print lines such as `Multi-Packet RQ
        // supported` or `log max atomic inline   5`: kept as statements.
        Some(_) => device.extra.push(ExtraField {
            label: t.to_owned(),
            value: None,
            items: Vec::new(),
        }),
        None => unread.line(line, "flag line without a heading before it"),
    }
}

/// Flag names follow a heading with no value (`general_odp_caps:`) or a hex
/// mask (`device_cap_flags: 0xed721c36`).
fn heading_takes_items(heading: &ExtraField) -> bool {
    heading
        .value
        .as_deref()
        .is_some_and(|v| v.is_empty() || v.starts_with("0x") || v.starts_with("0X"))
}

/// devinfo.c's sentences: `core clock not supported`, `tag matching not supported`.
fn is_statement(t: &str) -> bool {
    t.ends_with(" not supported")
}

/// Port fields that never appear among a device's own: under a device
/// with no `port:` line yet they come from a filtered paste
/// (`ibv_devinfo | grep -E "hca_id|state"`).
const FILTERED_PORT_LABELS: &[&str] = &[
    "state",
    "phys_state",
    "sm_lid",
    "port_lid",
    "port_lmc",
    "link_layer",
    "active_width",
    "active_speed",
    "max_mtu",
    "active_mtu",
];

/// A port field under a device before any `port:` line: read as the
/// device's only port when it has one (`phys_port_cnt: 1`, or an `mlx5_*`
/// device: mlx5 makes each port of a card a device of its own), with the
/// device marked as lacking the port's header; otherwise nothing is opened
/// and the field is kept with the device's.
fn open_filtered_port(line: &Line<'_>, device: &mut IbvDevice, unread: &mut Unread) {
    if !crate::model::ib::has_one_port(device.phys_port_cnt, &device.hca_id) {
        return;
    }
    device.ports.push(IbvPort {
        number: 1,
        span: line.span(),
        ..IbvPort::default()
    });
    if device.partial.is_none() {
        device.partial = Some(Partial::new(
            PartialReason::NoHeader,
            vec!["`port: 1` line and the fields filtered out".to_owned()],
            line.number,
        ));
    }
    unread.warn(
        WarningKind::Truncated,
        line.span(),
        format!(
            "port fields of {} without a `port:` line (a filtered paste): read as its only port",
            device.hca_id
        ),
    );
}

fn read_device_field(
    line: &Line<'_>,
    label: &str,
    value: &str,
    device: &mut IbvDevice,
    unread: &mut Unread,
) {
    // ibv_devinfo prints these from the device's attributes, never empty
    // (soft-RoCE prints `fw_ver: 0.0.0`, `hw_ver: 0x0`); `board_id` is
    // empty where the driver has none, and is not among them.
    let needs_value = matches!(
        label,
        "transport"
            | "fw_ver"
            | "hw_ver"
            | "node_guid"
            | "sys_image_guid"
            | "vendor_id"
            | "vendor_part_id"
            | "phys_port_cnt"
    );
    if value.is_empty() && needs_value {
        // Cut by the end of the paste, or blanked by hand: told apart once
        // the section is read (`settle_blank_value`). Text fields keep an
        // empty value as they did. A GUID left empty was blanked on
        // purpose: unknown, not unread (`blank_identifier`).
        if matches!(label, "node_guid" | "sys_image_guid") {
            blank_identifier(line, label, &mut device.partial);
        } else {
            blank_value(line, label, unread, &mut device.partial);
        }
        return;
    }
    let owned = || Some(value.to_owned());
    match label {
        "transport" => device.transport = owned(),
        "fw_ver" => device.fw_ver = owned(),
        "hw_ver" => device.hw_ver = owned(),
        "board_id" => device.board_id = owned(),
        "node_guid" | "sys_image_guid" => match Guid::parse(value) {
            Some(g) if label == "node_guid" => device.node_guid = Some(g),
            Some(g) => device.sys_image_guid = Some(g),
            // Hidden before sharing: unknown, not unread.
            None if redacted_identifier(value) => {}
            None => unread.line(line, &format!("`{label}` is not a GUID")),
        },
        "vendor_id" => match hex_u32(value) {
            Ok(v) => device.vendor_id = Some(v),
            Err(e) => unread.number(line, label, e),
        },
        "vendor_part_id" => set_decimal(line, label, value, &mut device.vendor_part_id, unread),
        "phys_port_cnt" => set_decimal(line, label, value, &mut device.phys_port_cnt, unread),
        "Unknown flags" => match device.extra.last_mut() {
            Some(heading) if heading_takes_items(heading) => {
                heading.items.push(format!("{label}: {value}"));
            }
            _ => device.extra.push(ExtraField::labelled(label, value)),
        },
        _ => device.extra.push(ExtraField::labelled(label, value)),
    }
}

/// Reads a port's field; a value cut short ([`is_cut_value`]) leaves
/// the device `partial` ([`cut_value`]), as a blank one does.
fn read_port_field(
    line: &Line<'_>,
    (label, value): (&str, &str),
    port: &mut IbvPort,
    partial: &mut Option<Partial>,
    unread: &mut Unread,
) {
    if is_cut_value(label, value) {
        cut_value(line, label, value, unread, partial);
        return;
    }
    if let Some(index) = gid_index(label) {
        match index {
            Some(index) => port.gids.push(gid_entry(index, value)),
            None => unread.line(line, "GID index is not a number"),
        }
        return;
    }
    // devinfo.c prints `invalid …` for values outside the spec: that is the
    // tool's answer, not a line we failed to read, so it is kept as printed.
    if value.starts_with("invalid") {
        port.extra.push(ExtraField::labelled(label, value));
        return;
    }
    let first = value.split_whitespace().next().unwrap_or("");
    match label {
        "state" => port.state = Some(PortState::parse(value)),
        "phys_state" => port.phys_state = Some(PhysState::parse(value)),
        "link_layer" => port.link_layer = Some(LinkLayer::parse(value)),
        "max_mtu" => set_decimal(line, label, first, &mut port.max_mtu, unread),
        "active_mtu" => set_decimal(line, label, first, &mut port.active_mtu, unread),
        "sm_lid" => set_decimal(line, label, value, &mut port.sm_lid, unread),
        "port_lid" => set_decimal(line, label, value, &mut port.port_lid, unread),
        "port_lmc" => match hex_u32(value) {
            Ok(v) => port.port_lmc = Some(v),
            Err(e) => unread.number(line, label, e),
        },
        "active_width" => match first.strip_suffix('X').map(decimal_u32) {
            Some(Ok(lanes)) => port.active_width_lanes = Some(lanes),
            Some(Err(e)) => unread.number(line, label, e),
            None => unread.line(line, "`active_width` is not `<n>X`"),
        },
        "active_speed" | "effective_speed" => match gbps(value) {
            Some(v) if label == "active_speed" => port.active_speed_gbps = Some(v),
            Some(v) => port.effective_speed_gbps = Some(v),
            None => unread.line(line, &format!("`{label}` is not `<n> Gbps`")),
        },
        _ => port.extra.push(ExtraField::labelled(label, value)),
    }
}

fn set_decimal(
    line: &Line<'_>,
    label: &str,
    value: &str,
    slot: &mut Option<u32>,
    unread: &mut Unread,
) {
    match decimal_u32(value) {
        Ok(v) => *slot = Some(v),
        Err(e) => unread.number(line, label, e),
    }
}

/// `25.0 Gbps (32)` or `25.0 Gbps` → 25.0.
fn gbps(value: &str) -> Option<f64> {
    let mut words = value.split_whitespace();
    let number = decimal_f64(words.next()?)?;
    (words.next()? == "Gbps").then_some(number)
}

/// A `-v` port's GID line (`GID[  3]:  fe80::a5c:4eff:fe12:7b30, RoCE v2`),
/// indented or not: only ibv_devinfo labels a line `GID[N]` over a value
/// written in hex groups and colons. The table alone is what people paste
/// when a GID index is in question (`ibv_devinfo -v | grep GID`, or the
/// lines under a `...`): the port it belongs to is then not in the paste.
fn is_gid_field(label: &str, value: &str) -> bool {
    let gid = value.split(',').next().unwrap_or_default().trim();
    matches!(gid_index(label), Some(Some(_)))
        && gid.contains(':')
        && gid.bytes().all(|b| b.is_ascii_hexdigit() || b == b':')
}

/// `GID[  0]` → Some(Some(0)); `GID[x]` → Some(None); other labels → None.
fn gid_index(label: &str) -> Option<Option<u32>> {
    let inner = label.strip_prefix("GID[")?.strip_suffix(']')?;
    Some(decimal_u32(inner).ok())
}

/// `fe80:…:b2c3` or `0000:…:0001, RoCE v2`.
fn gid_entry(index: u32, value: &str) -> GidEntry {
    let (gid, kind) = match value.split_once(',') {
        Some((gid, kind)) => (gid.trim(), Some(kind.trim().to_owned())),
        None => (value, None),
    };
    GidEntry {
        index,
        gid: gid.to_owned(),
        kind,
    }
}

/// Recognises `hca_id:` (keyed by device) and the `-l` heading.
/// The device name given to output pasted without its `hca_id:` line.
pub const UNKNOWN_HCA: &str = "(unknown HCA)";

/// Labels only ibv_devinfo prints (snake_case device fields, and the port
/// fields under `port:`).
const DEVINFO_LABELS: &[&str] = &[
    "transport",
    "fw_ver",
    "node_guid",
    "sys_image_guid",
    "vendor_id",
    "vendor_part_id",
    "hw_ver",
    "board_id",
    "phys_port_cnt",
    "port",
];

/// First bytes a block can start with: the `N HCAs found:` list, `hca_id:`,
/// or a device or port label of a block pasted without its `hca_id:`.
fn may_start(b: u8) -> bool {
    b.is_ascii_digit()
        || b == b'h'
        || b == b'G'
        // `gid_tbl_len:`, which `ibv_devinfo -v | grep -i gid` keeps above
        // the GID table.
        || b == b'g'
        || DEVINFO_LABELS
            .iter()
            .chain(FILTERED_PORT_LABELS)
            .any(|l| l.as_bytes().first() == Some(&b))
}

fn is_devinfo_label(label: &str) -> bool {
    DEVINFO_LABELS.contains(&label)
}

/// A port field in ibv_devinfo's own shape (`\t\t\tstate:\t\t\tPORT_ACTIVE (4)`):
/// indented, a port label, tabs (or a run of spaces where a paste turned
/// them into spaces) before the value, and a state spelled `PORT_…`. A
/// `link_layer: InfiniBand` in prose is none of this.
fn is_port_field_line(raw: &str) -> bool {
    if !raw.starts_with([' ', '\t']) {
        return false;
    }
    let t = raw.trim();
    let Some((label, rest)) = t.split_once(':') else {
        return false;
    };
    let value = rest.trim();
    FILTERED_PORT_LABELS.contains(&label)
        && (rest.starts_with('\t') || rest.starts_with("  "))
        && !value.is_empty()
        && (label != "state" || value.starts_with("PORT_"))
}

/// A port field only `-v` prints (`gid_tbl_len`, `max_msg_sz`, …): the
/// GID table's own lines are told by [`is_gid_field`].
fn is_verbose_port_label(label: &str) -> bool {
    label != "GID" && VERBOSE_PORT_FIELDS.iter().any(|(l, _)| *l == label)
}

/// A field of `ibv_devinfo -v` in the tool's own shape, whatever its
/// label: indented, a lower-case label (`max_qp`, `cq moderation caps`),
/// then a tab or a run of spaces before its value, or no value at all (a
/// heading such as `supported_qp:`). Read under a device whose name is
/// unknown when no `hca_id:` came before it: `ibv_devinfo -d mlx5_1 -v |
/// grep qp` keeps none. Before, every such line was "not ibv_devinfo
/// output" (IN002), though nothing else prints it; a sentence of prose
/// with a colon has upper case, no indent or a single space before its
/// words, and is none of this.
fn is_verbose_field_line(raw: &str) -> bool {
    if !raw.starts_with([' ', '\t']) {
        return false;
    }
    let Some((label, rest)) = raw.trim().split_once(':') else {
        return false;
    };
    let label_ok = label.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && label
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b' ');
    label_ok && (rest.is_empty() || rest.starts_with('\t') || rest.starts_with("  "))
}

/// Output starting mid-way (no `hca_id:`): two ibv_devinfo device labels in
/// a row, `port:` followed by `state:` with a `PORT_` value, or two port
/// fields in a row in the tool's shape ([`is_port_field_line`]): a paste
/// that begins inside a port block.
fn detect_headless(lines: &[Line<'_>]) -> Option<Block> {
    let line = lines.first().map_or(0, |l| l.number);
    if let [a, b, ..] = lines {
        if is_port_field_line(a.text()) && is_port_field_line(b.text()) {
            return Some(Block::keyed(format!("{UNKNOWN_HCA} at line {line}")));
        }
        // Asked of every candidate line: a `GID[` opening (a byte test
        // past the indent) before any label is split.
        let gid = |l: &Line<'_>| {
            let t = l.text().trim_start_matches([' ', '\t']);
            t.starts_with("GID[")
                && label_value(without_note(t.trim())).is_some_and(|(k, v)| is_gid_field(k, v))
        };
        if gid(a) && gid(b) {
            return Some(Block::keyed(format!("{UNKNOWN_HCA} at line {line}")));
        }
        // `ibv_devinfo -v | grep -i gid`: the port's `gid_tbl_len:` in the
        // tool's shape, the table under it. Before, the table began a
        // block of its own and `gid_tbl_len:` was left outside it.
        let table_length = |l: &Line<'_>| {
            l.text()
                .trim_start_matches([' ', '\t'])
                .starts_with("gid_tbl_len:")
                && is_verbose_field_line(l.text())
        };
        if table_length(a) && gid(b) {
            return Some(Block::keyed(format!("{UNKNOWN_HCA} at line {line}")));
        }
    }
    let mut labels = lines
        .iter()
        .filter(|l| !l.is_blank())
        .take(2)
        .map(|l| label_value(l.text().trim()));
    let first = labels.next()??;
    let second = labels.next()??;
    let ok = match first.0 {
        "port" => second.0 == "state" && second.1.starts_with("PORT_"),
        l => is_devinfo_label(l) && l != "port" && is_devinfo_label(second.0),
    };
    ok.then(|| Block::keyed(format!("{UNKNOWN_HCA} at line {line}")))
}

fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let first = lines.first()?.text();
    // `G` starts a block only as a GID line: the `GPU 0: …` headers and
    // `GPU0 …` matrix rows of every NVIDIA input are let go by a byte test.
    let opening = first.trim_start_matches([' ', '\t']);
    if opening.starts_with('G') && !opening.starts_with("GID[") {
        return None;
    }
    // `g` starts a block only as `gid_tbl_len:` above a GID table.
    if opening.starts_with('g') && !opening.starts_with("gid_tbl_len:") {
        return None;
    }
    let t = without_note(first.trim());
    if list_heading(t).is_some() {
        return Some(Block::keyed("HCAs found"));
    }
    if !t.starts_with("hca_id:") {
        return detect_headless(lines);
    }
    match label_value(t) {
        Some(("hca_id", name)) if !name.is_empty() => Some(Block::keyed(name)),
        _ => None,
    }
}

/// Renders a model in ibv_devinfo's own layout. Used by the round-trip tests.
#[must_use]
pub fn render(info: &IbvDevinfo) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    if let Some(count) = info.listed_count {
        let plural = if count == 1 { "" } else { "s" };
        let _ = writeln!(s, "{count} HCA{plural} found:");
    }
    for name in &info.listed {
        let _ = writeln!(s, "\t{name}");
    }
    for e in &info.errors {
        let _ = writeln!(s, "{e}");
    }
    for d in &info.devices {
        let _ = writeln!(s, "hca_id:\t{}", d.hca_id);
        let field = |s: &mut String, label: &str, value: Option<String>| {
            if let Some(v) = value {
                let _ = writeln!(s, "\t{label}:\t\t\t{v}");
            }
        };
        field(&mut s, "transport", d.transport.clone());
        field(&mut s, "fw_ver", d.fw_ver.clone());
        field(&mut s, "node_guid", d.node_guid.map(colon_guid));
        field(&mut s, "sys_image_guid", d.sys_image_guid.map(colon_guid));
        field(
            &mut s,
            "vendor_id",
            d.vendor_id.map(|v| format!("0x{v:04x}")),
        );
        field(
            &mut s,
            "vendor_part_id",
            d.vendor_part_id.map(|v| v.to_string()),
        );
        field(&mut s, "hw_ver", d.hw_ver.clone());
        field(&mut s, "board_id", d.board_id.clone());
        field(
            &mut s,
            "phys_port_cnt",
            d.phys_port_cnt.map(|v| v.to_string()),
        );
        render_extra(&mut s, &d.extra, "\t");
        if d.device_ports_heading {
            let _ = writeln!(s, "\tDevice ports:");
        }
        for p in &d.ports {
            render_port(&mut s, p);
        }
    }
    s
}

fn render_port(s: &mut String, p: &IbvPort) {
    use std::fmt::Write as _;
    let _ = writeln!(s, "\t\tport:\t{}", p.number);
    let field = |s: &mut String, label: &str, value: Option<String>| {
        if let Some(v) = value {
            let _ = writeln!(s, "\t\t\t{label}:\t\t{v}");
        }
    };
    field(s, "state", p.state.map(|v| state_text(v).to_owned()));
    field(
        s,
        "max_mtu",
        p.max_mtu.map(|v| format!("{v} ({})", mtu_code(v))),
    );
    field(
        s,
        "active_mtu",
        p.active_mtu.map(|v| format!("{v} ({})", mtu_code(v))),
    );
    field(s, "sm_lid", p.sm_lid.map(|v| v.to_string()));
    field(s, "port_lid", p.port_lid.map(|v| v.to_string()));
    field(s, "port_lmc", p.port_lmc.map(|v| format!("0x{v:02x}")));
    field(
        s,
        "link_layer",
        p.link_layer.map(|l| layer_text(l).to_owned()),
    );
    render_extra(s, &p.extra, "\t\t\t");
    field(
        s,
        "active_width",
        p.active_width_lanes.map(|v| format!("{v}X")),
    );
    field(
        s,
        "active_speed",
        p.active_speed_gbps.map(|v| format!("{v:.1} Gbps")),
    );
    field(
        s,
        "effective_speed",
        p.effective_speed_gbps.map(|v| format!("{v:.1} Gbps")),
    );
    field(
        s,
        "phys_state",
        p.phys_state.map(|v| phys_text(v).to_owned()),
    );
    for g in &p.gids {
        let kind = g
            .kind
            .as_ref()
            .map(|k| format!(", {k}"))
            .unwrap_or_default();
        let _ = writeln!(s, "\t\t\tGID[{:>3}]:\t\t{}{kind}", g.index, g.gid);
    }
    s.push('\n');
}

fn render_extra(s: &mut String, extra: &[ExtraField], indent: &str) {
    use std::fmt::Write as _;
    for f in extra {
        match &f.value {
            Some(v) => {
                let _ = writeln!(s, "{indent}{}:\t\t{v}", f.label);
            }
            None => {
                let _ = writeln!(s, "{indent}{}", f.label);
            }
        }
        for item in &f.items {
            let _ = writeln!(s, "\t\t\t\t\t{item}");
        }
    }
}

/// `0002:c903:00a1:b2c3`, as devinfo.c prints GUIDs.
fn colon_guid(g: Guid) -> String {
    let v = g.0;
    format!(
        "{:04x}:{:04x}:{:04x}:{:04x}",
        (v >> 48) & 0xffff,
        (v >> 32) & 0xffff,
        (v >> 16) & 0xffff,
        v & 0xffff
    )
}

fn mtu_code(bytes: u32) -> u32 {
    match bytes {
        256 => 1,
        512 => 2,
        1024 => 3,
        2048 => 4,
        4096 => 5,
        _ => 0,
    }
}

/// Whether `value`, which ibv_devinfo printed for `label`, is only the
/// beginning of a state it prints (`state: PORT_ACT`, `phys_state: LINK_`):
/// a value cut short. A state whose word is whole (`PORT_ACTIVE (`) is
/// read: only the number after it is cut.
fn is_cut_value(label: &str, value: &str) -> bool {
    match label {
        "state" => {
            PortState::parse(value) == PortState::Unknown
                && begins_only(value, PortState::KNOWN.map(state_text))
        }
        "phys_state" => {
            PhysState::parse(value) == PhysState::Unknown
                && begins_only(value, PhysState::KNOWN.map(phys_text))
        }
        _ => false,
    }
}

/// A port state as ibv_devinfo prints it (`PORT_ACTIVE (4)`).
pub(crate) fn state_text(s: PortState) -> &'static str {
    match s {
        PortState::Down => "PORT_DOWN (1)",
        PortState::Initializing => "PORT_INIT (2)",
        PortState::Armed => "PORT_ARMED (3)",
        PortState::Active => "PORT_ACTIVE (4)",
        PortState::Unknown => "PORT_NOP (0)",
    }
}

fn phys_text(s: PhysState) -> &'static str {
    match s {
        PhysState::NoStateChange => "NO_STATE_CHANGE (0)",
        PhysState::Sleep => "SLEEP (1)",
        PhysState::Polling => "POLLING (2)",
        PhysState::Disabled => "DISABLED (3)",
        PhysState::PortConfigurationTraining => "PORT_CONFIGURATION TRAINNING (4)",
        PhysState::LinkUp => "LINK_UP (5)",
        PhysState::LinkErrorRecovery => "LINK_ERROR_RECOVERY (6)",
        PhysState::PhyTest => "PHY TEST (7)",
        PhysState::Unknown => "UNKNOWN (8)",
    }
}

fn layer_text(l: LinkLayer) -> &'static str {
    match l {
        LinkLayer::Infiniband => "InfiniBand",
        LinkLayer::Ethernet => "Ethernet",
        LinkLayer::Unknown => "Unknown",
    }
}

/// `2 device(s), 2 port(s): 1 PORT_ACTIVE, 1 PORT_DOWN`.
#[must_use]
pub fn summary(info: &IbvDevinfo) -> String {
    if info.devices.is_empty() {
        if let Some(e) = info.errors.first() {
            return format!("failed: {e}");
        }
        return format!("{} device name(s)", info.listed.len());
    }
    let mut states: Vec<(&str, usize)> = Vec::new();
    let ports: Vec<&IbvPort> = info.devices.iter().flat_map(|d| &d.ports).collect();
    for p in &ports {
        let name = p.state.map_or("no state", |s| {
            state_text(s).split(' ').next().unwrap_or("")
        });
        match states.iter_mut().find(|(n, _)| *n == name) {
            Some((_, count)) => *count += 1,
            None => states.push((name, 1)),
        }
    }
    let states: Vec<String> = states.iter().map(|(n, c)| format!("{c} {n}")).collect();
    format!(
        "{} device(s), {} port(s){}{}",
        info.devices.len(),
        ports.len(),
        if states.is_empty() { "" } else { ": " },
        states.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;

    /// Port fields as the tool prints them, the paste's first lines.
    const PORT_TAIL: &str = "\t\t\tstate:\t\t\tPORT_DOWN (1)\n\t\t\tmax_mtu:\t\t4096 (5)\n\t\t\tactive_mtu:\t\t4096 (5)\n\t\t\tsm_lid:\t\t\t0\n\t\t\tport_lid:\t\t0\n\t\t\tport_lmc:\t\t0x00\n\t\t\tlink_layer:\t\tInfiniBand\n\nhca_id:\tmlx5_7\n\ttransport:\t\t\tInfiniBand (0)\n\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n";

    #[test]
    fn a_gid_field_is_an_index_over_hex_groups() {
        assert!(is_gid_field(
            "GID[  0]",
            "fe80:0000:0000:0000:0a5c:4eff:fe12:7b30"
        ));
        assert!(is_gid_field(
            "GID[  3]",
            "fd12:3400:0:7:a5c:4eff:fe12:7b30, RoCE v2"
        ));
        assert!(is_gid_field(
            "GID[  1]",
            "fe80::a5c:4eff:fe12:7b30, RoCE v2"
        ));
        assert!(!is_gid_field("GID[x]", "fe80::1"));
        assert!(!is_gid_field("GID[  0]", "not set"));
        assert!(!is_gid_field("GID[  0]", ""));
        assert!(!is_gid_field("gid", "fe80::1"));
    }
    #[test]
    fn a_paste_that_begins_inside_a_port_block_keeps_the_port_unnamed() {
        let lines = lines_of(PORT_TAIL);
        assert!(detect(&lines).is_some());
        let p = parse(&lines);
        let devices = &p.value.devices;
        assert_eq!(devices.len(), 2, "{devices:?}");
        let cut = &devices[0];
        assert!(cut.begins_inside_a_port());
        assert_eq!(cut.hca_id, UNKNOWN_HCA);
        assert_eq!(cut.ports.len(), 1);
        assert!(!cut.ports[0].number_known());
        // The Down state is kept, with every other field of the port.
        assert_eq!(cut.ports[0].state, Some(PortState::Down));
        assert_eq!(cut.ports[0].link_layer, Some(LinkLayer::Infiniband));
        assert_eq!(cut.span.first_line, 1);
        let partial = cut.partial.as_ref().unwrap();
        assert_eq!(partial.reason, PartialReason::NoHeader);
        assert_eq!(partial.missing, [CUT_AT_THE_TOP]);
        assert!(!devices[1].begins_inside_a_port());
        assert_eq!(devices[1].ports[0].number, 1);
        // Said once, as a cut; no line unread.
        assert!(
            p.warnings
                .iter()
                .all(|w| w.kind == WarningKind::Truncated && w.span.first_line == 1),
            "{:?}",
            p.warnings
        );
        // Spaces for the tool's tabs are its shape too.
        let spaced = PORT_TAIL.replace("\t\t\t", "                        ");
        assert!(detect(&lines_of(&spaced)).is_some());
    }

    #[test]
    fn notes_after_headers_and_values_and_hidden_guids_leave_the_device_read() {
        let text = "hca_id: mlx4_2 # 网卡\n\ttransport:\t\t\tInfiniBand (0)\n\
                    \tfw_ver:\t\t\t\t2.42.5000 # 固件\n\tnode_guid:\t\t\tf452:14ff:****:****\n\
                    \tsys_image_guid:\t\t\t[hidden]\n\tphys_port_cnt:\t\t\t2\n\
                    \t\tport:\t1 # 已连接\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\
                    \t\t\tlink_layer:\t\tInfiniBand # 若为 RoCE 则是 Ethernet\n\n\
                    \t\tport:\t2 # 断开\n\t\t\tstate:\t\t\tPORT_DOWN (1)\n\
                    \t\t\tlink_layer:\t\tInfiniBand\n";
        let lines = lines_of(text);
        assert_eq!(detect(&lines).map(|b| b.key).as_deref(), Some("mlx4_2"));
        let p = parse(&lines);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let d = &p.value.devices[0];
        assert_eq!(d.hca_id, "mlx4_2");
        assert_eq!(d.fw_ver.as_deref(), Some("2.42.5000"));
        assert_eq!((d.node_guid, d.sys_image_guid), (None, None));
        let numbers: Vec<u32> = d.ports.iter().map(|p| p.number).collect();
        assert_eq!(numbers, [1, 2]);
        assert_eq!(d.ports[0].link_layer, Some(LinkLayer::Infiniband));
        assert_eq!(d.ports[1].state, Some(PortState::Down));
    }

    #[test]
    fn one_port_field_or_port_fields_in_prose_are_not_ibv_devinfo() {
        for text in [
            "\t\t\tlink_layer:\t\tInfiniBand\n",
            "link_layer: InfiniBand\nstate: PORT_ACTIVE (4)\n",
            "  link_layer: InfiniBand\n  active_mtu: 4096\n",
            "\t\t\tstate:\t\t\tup\n\t\t\tlink_layer:\t\tInfiniBand\n",
            "\t\t\tlink_layer:\t\tInfiniBand\n\n\t\t\tstate:\t\t\tPORT_DOWN (1)\n",
        ] {
            assert!(detect(&lines_of(text)).is_none(), "{text:?}");
        }
    }

    #[test]
    fn a_second_port_field_before_any_hca_id_is_unread_not_merged() {
        // `ibv_devinfo | grep state` without the `hca_id:` lines: the
        // second state is another port's, not the first's.
        let p = parse(&lines_of(
            "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tstate:\t\t\tPORT_DOWN (1)\n",
        ));
        assert_eq!(p.value.devices.len(), 1);
        assert_eq!(p.value.devices[0].ports[0].state, Some(PortState::Active));
        assert!(
            p.warnings
                .iter()
                .any(|w| w.kind == WarningKind::Unreadable && w.span.first_line == 2),
            "{:?}",
            p.warnings
        );
        // A `port:` line after the cut port opens the device's next port.
        let p = parse(&lines_of(
            "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tlink_layer:\t\tInfiniBand\n\t\tport:\t2\n\t\t\tstate:\t\t\tPORT_DOWN (1)\n",
        ));
        let ports = &p.value.devices[0].ports;
        assert_eq!(ports.len(), 2);
        assert_eq!(ports[1].number, 2);
        assert_eq!(ports[1].state, Some(PortState::Down));
    }

    #[test]
    fn verbose_fields_a_grep_kept_are_read_under_an_unknown_device() {
        // `ibv_devinfo -d mlx5_1 -v | grep qp`: device capabilities, some
        // of them headings with no value, and no `hca_id:`.
        let p = parse(&lines_of(
            "        max_qp:                         131072\n        max_qp_wr:                      32768\n                supported_qp:\n                qp_rate_limit_min:      1kbps\n        cq moderation caps:\n                max_cq_period:  4095 us\n",
        ));
        assert!(
            p.warnings.iter().all(|w| w.kind != WarningKind::Unreadable),
            "{:?}",
            p.warnings
        );
        let devices = &p.value.devices;
        assert_eq!(devices.len(), 1);
        assert_eq!(devices[0].hca_id, UNKNOWN_HCA);
        assert!(devices[0].partial.is_some());
        assert!(devices[0].ports.is_empty());
        // `| grep -i gid`: the table's length opens the port the GID lines
        // fill, cut at the top.
        let p = parse(&lines_of(
            "\t\t\tgid_tbl_len:\t\t256\n\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:0ac0:ebff:fe3b:353c\n\t\t\tGID[  1]:\t\tfe80:0000:0000:0000:0ac0:ebff:fe3b:353c\n",
        ));
        assert!(
            p.warnings.iter().all(|w| w.kind != WarningKind::Unreadable),
            "{:?}",
            p.warnings
        );
        assert_eq!(p.value.devices.len(), 1);
        assert_eq!(p.value.devices[0].ports.len(), 1);
        assert!(detect(&lines_of(
            "\t\t\tgid_tbl_len:\t\t256\n\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:0ac0:ebff:fe3b:353c\n"
        ))
        .is_some());
        // Prose is not a field: upper case, or one space after the colon.
        for prose in ["    Note: the rest was cut\n", "    see below: it failed\n"] {
            let p = parse(&lines_of(prose));
            assert!(p.value.devices.is_empty(), "{prose:?}");
        }
    }

    #[test]
    fn text_after_the_indented_output_is_not_a_field_of_its_last_port() {
        let p = parse(&lines_of(
            "hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\nsminfo: sm lid 1 sm guid 0x1, activity count 3 priority 0 state 3 SMINFO_MASTER\nhca_id:\tmlx5_1\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_DOWN (1)\n",
        ));
        let devices = &p.value.devices;
        assert_eq!(devices.len(), 2, "a later hca_id still opens a device");
        assert!(
            devices[0].ports[0].extra.is_empty(),
            "{:?}",
            devices[0].ports[0].extra
        );
        assert!(
            p.warnings.iter().any(|w| w.span.contains(6)),
            "{:?}",
            p.warnings
        );
        // Output that lost all its indentation is read as before.
        let flat = parse(&lines_of(
            "hca_id: mlx5_0\ntransport: InfiniBand (0)\nport: 1\nstate: PORT_ACTIVE (4)\nlink_layer: InfiniBand\n",
        ));
        assert!(flat.warnings.is_empty(), "{:?}", flat.warnings);
        assert_eq!(
            flat.value.devices[0].ports[0].state,
            Some(PortState::Active)
        );
    }

    #[test]
    fn a_filtered_paste_reads_the_only_port_of_a_single_port_device() {
        // `ibv_devinfo | grep -E "hca_id|state|link_layer"`.
        let p = parse(&lines_of(
            "hca_id:\tmlx5_0\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tlink_layer:\t\tInfiniBand\nhca_id:\tmlx5_1\n\t\t\tstate:\t\t\tPORT_DOWN (1)\n\t\t\tlink_layer:\t\tInfiniBand\n",
        ));
        let devices = &p.value.devices;
        assert_eq!(devices.len(), 2);
        let port = &devices[1].ports[0];
        assert_eq!((port.number, port.state), (1, Some(PortState::Down)));
        assert_eq!(port.link_layer, Some(LinkLayer::Infiniband));
        assert!(devices[1].partial.is_some(), "the port lacks its header");
        // A device of several ports: nothing opened, the field kept with the device's.
        let p = parse(&lines_of(
            "hca_id:\tmlx4_0\n\tphys_port_cnt:\t\t2\n\t\t\tstate:\t\t\tPORT_DOWN (1)\n",
        ));
        assert!(p.value.devices[0].ports.is_empty());
    }

    const PLAIN: &str = "hca_id:\tmlx5_0
\ttransport:\t\t\tInfiniBand (0)
\tfw_ver:\t\t\t\t20.31.1014
\tnode_guid:\t\t\t0c42:a103:00a1:b2c3
\tsys_image_guid:\t\t\t0c42:a103:00a1:b2c3
\tvendor_id:\t\t\t0x02c9
\tvendor_part_id:\t\t\t4123
\thw_ver:\t\t\t\t0x0
\tboard_id:\t\t\tMT_0000000222
\tphys_port_cnt:\t\t\t1
\t\tport:\t1
\t\t\tstate:\t\t\tPORT_ACTIVE (4)
\t\t\tmax_mtu:\t\t4096 (5)
\t\t\tactive_mtu:\t\t4096 (5)
\t\t\tsm_lid:\t\t\t1
\t\t\tport_lid:\t\t17
\t\t\tport_lmc:\t\t0x00
\t\t\tlink_layer:\t\tInfiniBand

hca_id:\tmlx5_1
\ttransport:\t\t\tInfiniBand (0)
\tphys_port_cnt:\t\t\t1
\t\tport:\t1
\t\t\tstate:\t\t\tPORT_DOWN (1)
\t\t\tport_lid:\t\t65535
\t\t\tlink_layer:\t\tEthernet
";

    const VERBOSE: &str = "hca_id:\tmlx5_0
\ttransport:\t\t\tInfiniBand (0)
\tphys_port_cnt:\t\t\t1
\tmax_mr_size:\t\t\t0xffffffffffffffff
\tmax_qp:\t\t\t\t131072
\tdevice_cap_flags:\t\t0xed721c36
\t\t\t\t\tBAD_PKEY_CNTR
\t\t\t\t\tBAD_QKEY_CNTR
\t\t\t\t\tUnknown flags: 0xC8400000
\tmax_sge:\t\t\t30
\tgeneral_odp_caps:
\t\t\t\t\tODP_SUPPORT
\trc_odp_caps:
\t\t\t\t\tSUPPORT_SEND
\tcompletion_timestamp_mask not supported
\traw packet caps:
\t\t\t\t\tC-VLAN stripping offload
\trss_caps:
\t\tmax_rwq_indirection_tables:\t\t\t0
\t\tport:\t1
\t\t\tstate:\t\t\tPORT_ACTIVE (4)
\t\t\tmax_msg_sz:\t\t0x40000000
\t\t\tport_cap_flags:\t\t0xa651e848
\t\t\tmax_vl_num:\t\t4 (3)
\t\t\tbad_pkey_cntr:\t\t0x0
\t\t\tactive_width:\t\t1X (1)
\t\t\tactive_speed:\t\t25.0 Gbps (32)
\t\t\tphys_state:\t\tLINK_UP (5)
\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:0c42:a103:00a1:b2c3
\t\t\tGID[  3]:\t\t0000:0000:0000:0000:0000:ffff:0a00:0001, RoCE v2
";

    #[test]
    fn reads_plain_devices_and_ports() {
        let parsed = parse(&lines_of(PLAIN));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let d = &parsed.value.devices;
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].hca_id, "mlx5_0");
        assert_eq!(d[0].node_guid, Some(Guid(0x0c42_a103_00a1_b2c3)));
        assert_eq!(d[0].vendor_id, Some(0x02c9));
        assert_eq!(d[0].vendor_part_id, Some(4123));
        assert_eq!(d[0].board_id.as_deref(), Some("MT_0000000222"));
        let p = &d[0].ports[0];
        assert_eq!(p.state, Some(PortState::Active));
        assert_eq!((p.max_mtu, p.active_mtu), (Some(4096), Some(4096)));
        assert_eq!(
            (p.sm_lid, p.port_lid, p.port_lmc),
            (Some(1), Some(17), Some(0))
        );
        assert_eq!(p.link_layer, Some(LinkLayer::Infiniband));
        assert_eq!((p.span.first_line, p.span.last_line), (11, 18));
        let q = &d[1].ports[0];
        assert_eq!(q.state, Some(PortState::Down));
        assert_eq!(q.port_lid, Some(65_535));
        assert_eq!(q.link_layer, Some(LinkLayer::Ethernet));
    }

    #[test]
    fn a_last_port_block_that_stops_before_its_last_field_is_partial() {
        let whole = "hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tmax_mtu:\t\t4096 (5)\n\t\t\tsm_lid:\t\t\t1\n\t\t\tlink_layer:\t\tInfiniBand\n";
        let cut = format!(
            "{whole}\t\tport:\t2\n\t\t\tstate:\t\t\tPORT_DOWN (1)\n\t\t\tmax_mtu:\t\t4096 (5)\n"
        );
        let p = parse(&lines_of(&cut));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let d = &p.value.devices[0];
        let partial = d.partial.as_ref().expect("the last port is cut");
        assert_eq!(partial.reason, PartialReason::MissingFields);
        assert_eq!(
            partial.missing,
            ["active_mtu", "sm_lid", "port_lid", "port_lmc", "link_layer"]
        );
        assert_eq!(partial.line, 10);
        // Only the cut port is partial; the whole one before it is not.
        assert_eq!(d.partial_port().map(|p| p.number), Some(2));
        assert!(!d.port_is_partial(&d.ports[0]));
        assert!(d.port_is_partial(&d.ports[1]));
        // A block that skips fields but ends with its last one was
        // trimmed, not cut; so is a block cut before the next `port:`.
        assert_eq!(parse(&lines_of(whole)).value.devices[0].partial, None);
        let trimmed = format!("{whole}\t\tport:\t2\n\t\t\tstate:\t\t\tPORT_DOWN (1)\n\t\t\tlink_layer:\t\tInfiniBand\n");
        assert_eq!(parse(&lines_of(&trimmed)).value.devices[0].partial, None);
        // `-v`: the block must reach `active_speed`, and on an
        // InfiniBand transport `phys_state`.
        let verbose = format!("{whole}\t\t\tmax_msg_sz:\t\t0x40000000\n\t\t\tactive_width:\t\t4X (2)\n\t\t\tactive_speed:\t\t25.0 Gbps (32)\n");
        let p = parse(&lines_of(&verbose));
        let missing = p.value.devices[0]
            .partial
            .as_ref()
            .map(|p| p.missing.clone());
        assert_eq!(missing, Some(vec!["phys_state".to_owned()]));
        let p = parse(&lines_of(&format!(
            "{verbose}\t\t\tphys_state:\t\tLINK_UP (5)\n"
        )));
        assert_eq!(p.value.devices[0].partial, None);
        // A field printed after the last required one (a GID) ends it.
        let gid = format!("{whole}\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:0c42:a103:00a1:b2c3\n");
        assert_eq!(parse(&lines_of(&gid)).value.devices[0].partial, None);
        let iwarp = verbose.replace("InfiniBand (0)", "iWARP (1)");
        assert_eq!(parse(&lines_of(&iwarp)).value.devices[0].partial, None);
    }

    #[test]
    fn verbose_fields_flags_statements_and_gids() {
        let parsed = parse(&lines_of(VERBOSE));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let d = &parsed.value.devices[0];
        let labels: Vec<&str> = d.extra.iter().map(|f| f.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "max_mr_size",
                "max_qp",
                "device_cap_flags",
                "max_sge",
                "general_odp_caps",
                "rc_odp_caps",
                "completion_timestamp_mask not supported",
                "raw packet caps",
                "rss_caps",
                "max_rwq_indirection_tables"
            ]
        );
        let flags = &d.extra[2];
        assert_eq!(flags.value.as_deref(), Some("0xed721c36"));
        assert_eq!(
            flags.items,
            [
                "BAD_PKEY_CNTR",
                "BAD_QKEY_CNTR",
                "Unknown flags: 0xC8400000"
            ]
        );
        assert_eq!(d.extra[6].value, None);
        assert_eq!(d.extra[7].items, ["C-VLAN stripping offload"]);
        let p = &d.ports[0];
        assert_eq!(p.active_width_lanes, Some(1));
        assert_eq!(p.active_speed_gbps, Some(25.0));
        assert_eq!(p.rate_gbps(), Some(25.0));
        assert_eq!(p.phys_state, Some(PhysState::LinkUp));
        assert_eq!(p.gids.len(), 2);
        assert_eq!(p.gids[1].index, 3);
        assert_eq!(p.gids[1].kind.as_deref(), Some("RoCE v2"));
        let port_extra: Vec<&str> = p.extra.iter().map(|f| f.label.as_str()).collect();
        assert_eq!(
            port_extra,
            [
                "max_msg_sz",
                "port_cap_flags",
                "max_vl_num",
                "bad_pkey_cntr"
            ]
        );
    }

    #[test]
    fn older_device_ports_heading_and_list_form() {
        let text = "hca_id:\tmlx4_0\n\tphys_port_cnt:\t\t\t2\n\tDevice ports:\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_INIT (2)\n";
        let parsed = parse(&lines_of(text));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let d = &parsed.value.devices[0];
        assert!(d.device_ports_heading);
        assert_eq!(d.ports[0].state, Some(PortState::Initializing));

        let parsed = parse(&lines_of("2 HCAs found:\n\tmlx5_0\n\tmlx5_1\n\n"));
        assert!(parsed.warnings.is_empty());
        assert_eq!(parsed.value.listed_count, Some(2));
        assert_eq!(parsed.value.listed, ["mlx5_0", "mlx5_1"]);
    }

    #[test]
    fn unreadable_lines_are_warnings_and_invalid_values_are_kept() {
        let text = "hca_id:\tmlx5_0\n\tnode_guid:\t\t\tnot-a-guid\n\t\tport:\t1\n\t\t\tport_lid:\t\tlots\n\t\t\tactive_speed:\t\tinvalid speed (0)\n\t\t\tsm_lid:\t\t\t99999999999\n\t\t\tstray words\n";
        let parsed = parse(&lines_of(text));
        let p = &parsed.value.devices[0].ports[0];
        assert_eq!(p.port_lid, None);
        assert_eq!(p.active_speed_gbps, None);
        assert_eq!(p.extra[0].value.as_deref(), Some("invalid speed (0)"));
        let found = parsed.warning_lines();
        assert_eq!(
            found,
            [
                (2, WarningKind::Unreadable),
                (4, WarningKind::Unreadable),
                (6, WarningKind::OutOfRange),
                (7, WarningKind::Unreadable)
            ]
        );
    }

    /// The shape of MLNX_OFED's experimental-verbs build: space-aligned,
    /// `key   value` lines without a colon, `ooo_rc_caps  = 0x0`, nested
    /// headings and a `Device ports:` heading after the device fields.
    const VENDOR_BUILD: &str = "hca_id:\tmlx5_3
        transport:                      InfiniBand (0)
        node_guid:                      08c0:eb03:003b:0001
        device_cap_flags:               0xa5721c36
                                        BAD_PKEY_CNTR
                                        Unknown flags: 0x84400000
        atomic_cap:                     ATOMIC_HCA (1)
        log max atomic inline           5
        max_device_ctx:                 1020
        Multi-Packet RQ supported
                Supported for objects type:
                        IBV_EXP_MP_RQ_SUP_TYPE_WQ_RQ
                Log number of strides for single WQE: 9 - 16

        ooo_caps:
        ooo_rc_caps  = 0x0
        tag matching not supported
        Device ports:
                port:   1
                        state:                  PORT_ACTIVE (4)
                        max_vl_num:             invalid value (0)
                        active_width:           1X (1)
                        active_speed:           10.0 Gbps (4)
                        phys_state:             LINK_UP (5)
                        GID[  0]:               fe80:0000:0000:0000:0ac0:ebff:fe3b:0001
";

    #[test]
    fn vendor_build_lines_are_kept_without_warnings() {
        let parsed = parse(&lines_of(VENDOR_BUILD));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let d = &parsed.value.devices[0];
        assert!(d.device_ports_heading);
        let statements: Vec<&str> = d
            .extra
            .iter()
            .filter(|f| f.value.is_none())
            .map(|f| f.label.as_str())
            .collect();
        assert_eq!(
            statements,
            [
                "log max atomic inline           5",
                "Multi-Packet RQ supported",
                "tag matching not supported"
            ]
        );
        let find = |label: &str| d.extra.iter().find(|f| f.label == label).unwrap();
        assert_eq!(find("device_cap_flags").items.len(), 2);
        assert_eq!(
            find("Supported for objects type").items,
            ["IBV_EXP_MP_RQ_SUP_TYPE_WQ_RQ"]
        );
        assert_eq!(find("ooo_caps").items, ["ooo_rc_caps  = 0x0"]);
        let p = &d.ports[0];
        assert_eq!(p.rate_gbps(), Some(10.0));
        assert_eq!(p.extra[0].value.as_deref(), Some("invalid value (0)"));
    }

    #[test]
    fn failures_are_kept_and_reported() {
        let parsed = parse(&lines_of("No IB devices found\n"));
        assert_eq!(parsed.value.errors, ["No IB devices found"]);
        assert_eq!(parsed.warnings.len(), 1);
        assert_eq!(parsed.warnings[0].kind, WarningKind::Truncated);
        let text = "hca_id:\tmlx5_0\n\tphys_port_cnt:\t\t\t2\nFailed to query port 1 props\n";
        let parsed = parse(&lines_of(text));
        assert_eq!(parsed.value.devices[0].phys_port_cnt, Some(2));
        assert_eq!(parsed.value.errors, ["Failed to query port 1 props"]);
    }

    #[test]
    fn flag_line_with_nothing_before_it_is_a_warning() {
        let parsed = parse(&lines_of("hca_id:\tmlx5_0\n\t\t\t\t\tRESIZE_MAX_WR\n"));
        assert_eq!(parsed.warnings.len(), 1);
        let parsed = parse(&lines_of("RESIZE_MAX_WR\n"));
        assert_eq!(parsed.warnings.len(), 1);
    }

    #[test]
    fn detects_device_blocks_and_the_list() {
        assert_eq!(detect(&lines_of("hca_id:\tmlx5_2")).unwrap().key, "mlx5_2");
        assert!(detect(&lines_of("1 HCA found:")).is_some());
        assert!(detect(&lines_of("hca_id:")).is_none());
        assert!(detect(&lines_of("CA 'mlx5_0'")).is_none());
    }

    #[test]
    fn render_then_parse_gives_the_same_model() {
        for text in [PLAIN, VERBOSE] {
            let first = parse(&lines_of(text)).value;
            let again = parse(&lines_of(&render(&first)));
            assert!(again.warnings.is_empty(), "{:?}", again.warnings);
            assert_eq!(strip_spans(first), strip_spans(again.value));
        }
    }

    pub(crate) fn strip_spans(mut m: IbvDevinfo) -> IbvDevinfo {
        for d in &mut m.devices {
            d.span = crate::span::LineSpan::line(1);
            for p in &mut d.ports {
                p.span = crate::span::LineSpan::line(1);
            }
        }
        m
    }
}
