//! `ibstat`: CAs and their ports, read from sysfs by infiniband-diags.
//!
//! Forms handled (infiniband-diags `ibstat.c`):
//! - `ibstat`, `ibstat CA`: `CA 'mlx5_0'` headers, one tab before CA fields,
//!   `Port N:` blocks with two tabs before port fields;
//! - `ibstat CA PORT`: a `CA: 'mlx5_0'` header and an unindented port block;
//! - `ibstat -s`: CA headers without ports; `-l`: one CA name a line;
//!   `-p`: one port GUID a line;
//! - output cut short by `ibpanic:` (older versions abort on a missing device).
//!
//! Indentation is not trusted: pastes turn tabs into any number of spaces, so
//! the parser keys on the labels.

use crate::diag::WarningKind;
use crate::model::ib::{Guid, LinkLayer, PhysState, PortState};
use crate::model::ibstat::{Ca, Ibstat, Port};
use crate::model::partial::{Partial, PartialReason};
use crate::parse::text::{
    begins_only, blank_identifier, blank_value, cut_value, decimal_f64, decimal_u32, hex_u32,
    label_value, numbered_heading, read_each_line, redacted_identifier, settle_blank_value,
    single_quoted, trim, without_note, Unread,
};
use crate::parse::{Block, Line, Parsed, Spec};
use crate::span::LineSpan;

pub(crate) const FORMAT: Spec<Ibstat> = Spec {
    command: |argv| argv.first() == Some(&"ibstat"),
    starts: may_start,
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &[
        "ca",
        "port",
        "state",
        "rate",
        "lmc",
        "sm_lid",
        "port_lid",
        "link_layer",
    ],
};

/// The adapter name given to port blocks pasted without their CA header.
pub const UNKNOWN_CA: &str = "(unknown CA)";

/// Node types ibstat prints before a quoted CA name.
const NODE_TYPES: &[&str] = &["CA", "Switch", "Router", "iWARP RNIC", "???"];

/// Reads `ibstat` output.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<Ibstat> {
    let mut open = Open::default();
    let mut parsed = read_each_line(lines, |line, out, unread| {
        read_line(line, out, unread, &mut open);
    });
    for port in &mut parsed.value.headerless_ports {
        settle_blank_value(&mut port.partial, lines, &mut parsed.warnings);
    }
    for ca in &mut parsed.value.cas {
        settle_blank_value(&mut ca.partial, lines, &mut parsed.warnings);
        for port in &mut ca.ports {
            settle_blank_value(&mut port.partial, lines, &mut parsed.warnings);
        }
    }
    mark_partial(&mut parsed.value, lines);
    parsed
}

/// Port fields every ibstat since infiniband-diags 1.4 prints, in order.
/// `Link layer` (2010 on) is required only when another port of the same
/// output prints it: very old versions never do.
const PORT_FIELDS: &[&str] = &[
    "State",
    "Physical state",
    "Rate",
    "Base lid",
    "LMC",
    "SM lid",
    "Capability mask",
    "Port GUID",
    "Link layer",
];

/// Identifier fields: printed empty, they were left out before sharing
/// ([`blank_identifier`]), not garbled.
const IDENTIFIERS: &[&str] = &[
    "Node GUID",
    "System image GUID",
    "Capability mask",
    "Port GUID",
];

/// CA fields printed before the ports.
const CA_FIELDS: &[&str] = &[
    "CA type",
    "Number of ports",
    "Firmware version",
    "Hardware version",
    "Node GUID",
    "System image GUID",
];

/// Whether `t`, an unindented line met after ibstat's indented fields, may
/// still be the tool's: a `CA '…'` header, a `Port N:` line or one of its
/// fields that lost its indentation. Anything else is not its output; the
/// input layer sets such a line aside when it reads as the author's prose.
pub(crate) fn may_be_its_unindented_line(t: &str) -> bool {
    t.starts_with("CA ")
        || t.starts_with("CA:")
        || label_value(t).is_some_and(|(label, _)| {
            CA_FIELDS.contains(&label)
                || PORT_FIELDS.contains(&label)
                || label
                    .strip_prefix("Port ")
                    .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// Marks port blocks that stop before fields ibstat always prints, and CA
/// blocks that stop before their fields or announced ports: the paste was
/// cut there, and what is missing is unknown rather than absent.
///
/// ibstat prints fields in a fixed order, so a cut block shows a prefix of
/// them: a block is cut when it lacks the last field (`Link layer`, or
/// `Port GUID` from versions that never print a link layer), and what it
/// lacks is every field after the last one it shows. A block that ends
/// with its last field but skips some in between is whole (hand-trimmed
/// pastes do that); the skipped fields are just not printed.
fn mark_partial(out: &mut Ibstat, lines: &[Line<'_>]) {
    let has_link_layer = out
        .cas
        .iter()
        .flat_map(|c| &c.ports)
        .any(|p| p.link_layer.is_some());
    // A listing that shows some CA's ports is no `ibstat -s`: a CA in it
    // that shows none of the ports it announces lacks them (cut by the end
    // of the paste, or trimmed by hand).
    let lists_ports = out.cas.iter().any(|c| !c.ports.is_empty());
    for ca in &mut out.cas {
        for port in &mut ca.ports {
            let present = [
                port.state.is_some(),
                port.physical_state.is_some(),
                port.rate_gbps.is_some(),
                port.base_lid.is_some(),
                port.lmc.is_some(),
                port.sm_lid.is_some(),
                port.capability_mask.is_some(),
                port.port_guid.is_some() || ends_with(lines, port.span, "Port GUID"),
                port.link_layer.is_some(),
            ];
            let fields = if has_link_layer {
                PORT_FIELDS
            } else {
                PORT_FIELDS
                    .get(..PORT_FIELDS.len() - 1)
                    .unwrap_or(PORT_FIELDS)
            };
            if port.partial.is_none() {
                port.partial = missing_suffix(fields, &present)
                    .map(|m| Partial::new(PartialReason::MissingFields, m, port.span.last_line));
            }
        }
        // `ibstat -s` prints CA fields and no ports: only a CA that began
        // its ports and stopped short, or stopped inside its own fields, or
        // shows no port where other CAs show theirs, is cut.
        let announced = ca.number_of_ports.unwrap_or(0) as usize;
        let listed = ca.ports.len();
        let mut missing: Vec<String> = Vec::new();
        if (listed > 0 || lists_ports) && listed < announced {
            let numbers: Vec<u32> = ca.ports.iter().map(|p| p.number).collect();
            missing.extend(
                (1..=u32::try_from(announced).unwrap_or(u32::MAX))
                    .filter(|n| !numbers.contains(n))
                    .map(|n| format!("Port {n}")),
            );
        }
        if listed == 0 && ca.node_type.is_some() {
            let present = [
                ca.ca_type.is_some(),
                ca.number_of_ports.is_some(),
                ca.firmware_version.is_some(),
                ca.hardware_version.is_some(),
                ca.node_guid.is_some(),
                ca.system_image_guid.is_some() || ends_with(lines, ca.span, "System image GUID"),
            ];
            missing.extend(missing_suffix(CA_FIELDS, &present).unwrap_or_default());
        }
        if !missing.is_empty() && ca.partial.is_none() {
            ca.partial = Some(Partial::new(
                PartialReason::MissingFields,
                missing,
                ca.span.last_line,
            ));
        }
    }
}

/// Whether the block read from `span` ends with `label` printed: an
/// identifier printed without a value ([`blank_identifier`]) is known to
/// be printed only from its line, as its value stays unknown.
fn ends_with(lines: &[Line<'_>], span: LineSpan, label: &str) -> bool {
    lines
        .binary_search_by_key(&span.last_line, |l| l.number)
        .ok()
        .and_then(|i| lines.get(i))
        .and_then(|l| label_value(trim(l.text())))
        .is_some_and(|(l, _)| l == label)
}

/// The fields after the last one present, when the last of `fields` is
/// missing: what a block cut short lacks.
fn missing_suffix(fields: &[&str], present: &[bool]) -> Option<Vec<String>> {
    let n = fields.len();
    if present.get(n.checked_sub(1)?).copied().unwrap_or(false) {
        return None;
    }
    let after = present
        .iter()
        .take(n)
        .rposition(|p| *p)
        .map_or(0, |i| i + 1);
    Some(fields.iter().skip(after).map(|f| (*f).to_owned()).collect())
}

/// Where `label` stands in ibstat's port field order ([`PORT_FIELDS`]),
/// `Effective speed` (newer rdma-core) right after `Rate`: where a
/// header-less port's runs of fields break ([`read_headerless_field`]).
fn port_field_order(label: &str) -> Option<usize> {
    let at = |name: &str| PORT_FIELDS.iter().position(|f| *f == name);
    match label {
        "Effective speed" => at("Rate").map(|i| 2 * i + 1),
        _ => at(label).map(|i| 2 * i),
    }
}

/// What a header-less port lacks: whose it is. Its fields the paste
/// does not show are said by IN001 for the whole run, not port by port.
pub const HEADERLESS_MISSING: &str = "the adapter and port number (`CA '…'` and `Port N:` lines)";

/// What a `Port N:` block pasted without its `CA '…'` line lacks: whose
/// it is. Its number is shown.
pub const HEADERLESS_CA_MISSING: &str = "the adapter (`CA '…'` line)";

/// A `Port N:` line before any `CA '…'` line: a port block pasted without
/// its adapter's header. It opens a header-less port ([`read_headerless_field`])
/// whose number is known and whose adapter is not: two such blocks (each
/// `Port 1:` of two adapters, cut from a longer listing) are two ports,
/// never one adapter's. Before, they were filed under one adapter named
/// `(unknown CA)`, which rules then took for siblings.
fn open_headerless_block(line: &Line<'_>, number: u32, out: &mut Ibstat, run: &mut Option<usize>) {
    let mut port = Port::new(number, line.span());
    port.partial = Some(Partial::new(
        PartialReason::NoHeader,
        vec![HEADERLESS_CA_MISSING.to_owned()],
        line.number,
    ));
    out.headerless_ports.push(port);
    // Every field of ibstat's order may follow.
    *run = Some(0);
}

/// A port field with neither a `CA '…'` nor a `Port N:` line before it
/// (`ibstat | grep -E "State|Rate"`): read into a port whose adapter and
/// number are unknown. ibstat prints a port's fields in a fixed order,
/// so a field at or before the last one read (a second `State:` after
/// `State:`, `Physical state:` and `Rate:`; each `Rate:` of a grep that
/// kept only rates) begins the next port. `run` is where the open port
/// stands in that order: the first order its next field may have (0 right
/// after a `Port N:` line, [`open_headerless_block`]).
fn read_headerless_field(
    line: &Line<'_>,
    (label, value): (&str, &str),
    order: usize,
    out: &mut Ibstat,
    run: &mut Option<usize>,
    unread: &mut Unread,
) {
    if run.is_none_or(|next| order < next) || out.headerless_ports.is_empty() {
        let mut port = Port::new(0, line.span());
        port.partial = Some(Partial::new(
            PartialReason::NoHeader,
            vec![HEADERLESS_MISSING.to_owned()],
            line.number,
        ));
        out.headerless_ports.push(port);
    }
    *run = Some(order + 1);
    if let Some(port) = out.headerless_ports.last_mut() {
        port.span = port.span.join(line.span());
        read_port_field(line, label, value, port, unread);
    }
}

/// The port the next port field may belong to.
#[derive(Debug, Default)]
struct Open {
    /// Where the open port stands in ibstat's field order: the first
    /// order its next field may have ([`read_headerless_field`]).
    next: Option<usize>,
    /// Port fields after a CA's port block that are not its (fields read
    /// already, [`is_stray_field`]) opened header-less ports: the fields
    /// after them are theirs, until the next `CA '…'` or `Port N:` line.
    stray: bool,
}

/// Whether a port field of `order`, under the listing's last CA, comes
/// after that CA's last port shows it already, or a field after it: the
/// fields a user appended below a whole listing (`ibstat | grep State`
/// pasted after `ibstat`), or a block whose `Port N:` line was trimmed.
/// ibstat prints each field once a port, in a fixed order, so such a
/// field is not that port's. Before, it overwrote the port's own: an
/// Active port followed by a grep's `State: Down` was read Down.
fn is_stray_field(out: &Ibstat, open: &Open, order: usize) -> bool {
    open.stray
        || (out.cas.last().is_some_and(|ca| !ca.ports.is_empty())
            && open.next.is_some_and(|next| order < next))
}

fn read_line(line: &Line<'_>, out: &mut Ibstat, unread: &mut Unread, open: &mut Open) {
    // An author's ` # note` after a header (`CA 'mlx4_0' # 驱动名称`,
    // `Port 1: # 连接`) as after a value: ibstat prints no ` #` itself.
    let t = without_note(trim(line.text()));
    if let Some((node_type, name)) = ca_header(t) {
        out.cas.push(Ca {
            name: name.to_owned(),
            node_type: node_type.map(str::to_owned),
            span: line.span(),
            ..Ca::default()
        });
        *open = Open::default();
        return;
    }
    if crate::parse::text::tool_message_kind(t).is_some() {
        unread.warn(
            WarningKind::Truncated,
            line.span(),
            format!("ibstat reported an error; output may be incomplete: {t}"),
        );
        return;
    }
    if let Some(number) = numbered_heading(t, "Port") {
        match out.cas.last_mut() {
            Some(ca) => {
                ca.span = ca.span.join(line.span());
                ca.ports.push(Port::new(number, line.span()));
                *open = Open {
                    next: Some(0),
                    stray: false,
                };
            }
            None => open_headerless_block(line, number, out, &mut open.next),
        }
        return;
    }
    let field = label_value(t);
    let port_field = field.and_then(|(label, value)| {
        let order = port_field_order(label)?;
        Some(((label, value), order))
    });
    if out.cas.is_empty() {
        match port_field {
            Some((field, order)) => {
                read_headerless_field(line, field, order, out, &mut open.next, unread);
            }
            None => read_list_line(line, t, out, unread),
        }
        return;
    }
    if let Some((field, order)) = port_field.filter(|(_, order)| is_stray_field(out, open, *order))
    {
        if !open.stray {
            // The first of them begins a port of its own.
            *open = Open {
                next: None,
                stray: true,
            };
        }
        read_headerless_field(line, field, order, out, &mut open.next, unread);
        return;
    }
    match field {
        Some((label, value)) => {
            read_field(line, label, value, out, unread);
            let has_port = out.cas.last().is_some_and(|ca| !ca.ports.is_empty());
            if let Some((_, order)) = port_field.filter(|_| has_port) {
                open.next = Some(order + 1);
            }
        }
        None => unread.line(line, "not an ibstat `Label: value` line"),
    }
}

/// `CA 'mlx5_0'` → (Some("CA"), "mlx5_0"); `CA: 'mlx5_0'` → (None, "mlx5_0").
fn ca_header(t: &str) -> Option<(Option<&str>, &str)> {
    // The closing quote first: one byte answers for nearly every line
    // `read_line` asks about (ibstat's fields), where the search for a
    // quote pair read the whole line.
    if !t.ends_with('\'') {
        return None;
    }
    let name = single_quoted(t)?;
    let before = t.split('\'').next()?.trim_end();
    if before == "CA:" {
        return Some((None, name));
    }
    NODE_TYPES
        .iter()
        .find(|ty| before == **ty)
        .map(|ty| (Some(*ty), name))
}

/// `ibstat -l` prints CA names, `ibstat -p` port GUIDs, one a line.
fn read_list_line(line: &Line<'_>, t: &str, out: &mut Ibstat, unread: &mut Unread) {
    if t.starts_with("0x") {
        match Guid::parse(t) {
            Some(guid) => out.port_guids.push(guid),
            None => unread.line(line, "not a port GUID"),
        }
    } else if is_device_name(t) {
        out.ca_names.push(t.to_owned());
    } else {
        unread.line(line, "not ibstat output (expected `CA '…'`)");
    }
}

fn is_device_name(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= 64
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
}

fn read_field(line: &Line<'_>, label: &str, value: &str, out: &mut Ibstat, unread: &mut Unread) {
    let Some(ca) = out.cas.last_mut() else {
        return;
    };
    ca.span = ca.span.join(line.span());
    if ca.ports.is_empty() && PORT_FIELDS.contains(&label) {
        open_filtered_port(line, ca, unread);
    }
    if let Some(port) = ca.ports.last_mut() {
        port.span = port.span.join(line.span());
        if read_port_field(line, label, value, port, unread) {
            return;
        }
    }
    if !read_ca_field(line, label, value, ca, unread) {
        unread.line(line, "unknown ibstat field");
    }
}

/// A port field under a CA before any `Port N:` line: a filtered paste
/// (`ibstat | grep -E "CA |State"`). The port is read when the adapter has
/// one port, so that its number is known: `Number of ports: 1`, or an
/// `mlx5_*` device (mlx5 makes each port of a card a device of its own).
/// The port is marked as lacking its header, so it is judged only on what
/// the paste shows; otherwise the line stays unread.
fn open_filtered_port(line: &Line<'_>, ca: &mut Ca, unread: &mut Unread) {
    if !crate::model::ib::has_one_port(ca.number_of_ports, &ca.name) {
        return;
    }
    let mut port = Port::new(1, line.span());
    port.partial = Some(Partial::new(
        PartialReason::NoHeader,
        vec!["`Port 1:` line and the fields filtered out".to_owned()],
        line.number,
    ));
    ca.ports.push(port);
    unread.warn(
        WarningKind::Truncated,
        line.span(),
        format!(
            "port fields of {} without a `Port 1:` line (a filtered paste): read as its only port",
            ca.name
        ),
    );
}

/// Returns false when `label` is not a port field.
fn read_port_field(
    line: &Line<'_>,
    label: &str,
    value: &str,
    port: &mut Port,
    unread: &mut Unread,
) -> bool {
    if value.is_empty() && PORT_FIELDS.contains(&label) {
        // ibstat always prints a value: an empty one was cut off by the
        // end of the paste, or blanked ([`blank_value`]); an identifier
        // is blanked on purpose ([`blank_identifier`]).
        if IDENTIFIERS.contains(&label) {
            blank_identifier(line, label, &mut port.partial);
        } else {
            blank_value(line, label, unread, &mut port.partial);
        }
        return true;
    }
    if is_cut_value(label, value) {
        cut_value(line, label, value, unread, &mut port.partial);
        return true;
    }
    match label {
        "State" => port.state = Some(PortState::parse(value)),
        "Physical state" => port.physical_state = Some(PhysState::parse(value)),
        "Rate" => match read_rate(value) {
            Some((rate, fdr10)) => {
                port.rate_gbps = Some(rate);
                port.fdr10 = fdr10;
            }
            None => unread.line(line, "`Rate` is not a number"),
        },
        "Effective speed" => match decimal_f64(value) {
            Some(v) => port.effective_speed_gbps = Some(v),
            None => unread.line(line, "`Effective speed` is not a number"),
        },
        "Base lid" => set_u32(line, label, value, &mut port.base_lid, unread),
        "LMC" => set_u32(line, label, value, &mut port.lmc, unread),
        "SM lid" => set_u32(line, label, value, &mut port.sm_lid, unread),
        "Capability mask" => match hex_u32(value) {
            Ok(v) => port.capability_mask = Some(v),
            Err(e) => unread.number(line, label, e),
        },
        "Port GUID" => match Guid::parse(value) {
            Some(g) => port.port_guid = Some(g),
            // Hidden before sharing: unknown, not unread.
            None if redacted_identifier(value) => {}
            None => unread.line(line, "`Port GUID` is not a GUID"),
        },
        "Link layer" => port.link_layer = Some(LinkLayer::parse(value)),
        _ => return false,
    }
    true
}

/// Whether `value`, which ibstat printed for `label`, is only the
/// beginning of a value it prints (`State: Acti`, `Physical state: Lin`,
/// `Rate: 1`, `Rate: 40 (FDR`): a value cut short, read as none
/// ([`cut_value`]). A whole value is never one: `Rate: 10` may be the
/// beginning of `100` but is a rate of its own.
fn is_cut_value(label: &str, value: &str) -> bool {
    match label {
        "State" => {
            PortState::parse(value) == PortState::Unknown
                && begins_only(value, PortState::KNOWN.map(PortState::ibstat_name))
        }
        "Physical state" => {
            PhysState::parse(value) == PhysState::Unknown
                && begins_only(value, PhysState::KNOWN.map(PhysState::ibstat_name))
        }
        // Nearly every rate read is a whole one: told by its number,
        // without writing out the table of rates (that was 2 % of a
        // fleet's run, every `Rate:` line writing 40 numbers).
        "Rate" => !is_whole_rate(value) && begins_only(value, rate_spellings()),
        _ => false,
    }
}

/// Every rate ibstat prints, as it prints it (`100`, `40 (FDR10)`).
fn rate_spellings() -> impl Iterator<Item = String> {
    crate::model::ib::ibta_rates().map(|(_, lane, rate)| match lane {
        "FDR10" => format!("{rate} (FDR10)"),
        _ => rate.to_string(),
    })
}

/// Whether `value` is one of the rates ibstat prints: a number of the
/// IBTA table, tagged `(FDR10)` when its lane is.
fn is_whole_rate(value: &str) -> bool {
    read_rate(value).is_some_and(|(rate, fdr10)| {
        crate::model::ib::ibta_rates().any(|(_, lane, r)| r == rate && (lane == "FDR10") == fdr10)
    })
}

/// Returns false when `label` is not a CA field.
fn read_ca_field(
    line: &Line<'_>,
    label: &str,
    value: &str,
    ca: &mut Ca,
    unread: &mut Unread,
) -> bool {
    let owned = || (!value.is_empty()).then(|| value.to_owned());
    if value.is_empty() && IDENTIFIERS.contains(&label) {
        blank_identifier(line, label, &mut ca.partial);
        return true;
    }
    match label {
        "Number of ports" => set_u32(line, label, value, &mut ca.number_of_ports, unread),
        "Firmware version" => ca.firmware_version = owned(),
        "Hardware version" => ca.hardware_version = owned(),
        "Node GUID" | "System image GUID" => match Guid::parse(value) {
            Some(g) if label == "Node GUID" => ca.node_guid = Some(g),
            Some(g) => ca.system_image_guid = Some(g),
            None if redacted_identifier(value) => {}
            None => unread.line(line, &format!("`{label}` is not a GUID")),
        },
        l if l.ends_with(" type") && NODE_TYPES.iter().any(|t| l == format!("{t} type")) => {
            ca.ca_type = owned();
        }
        _ => return false,
    }
    true
}

fn set_u32(line: &Line<'_>, label: &str, value: &str, slot: &mut Option<u32>, unread: &mut Unread) {
    match decimal_u32(value) {
        Ok(v) => *slot = Some(v),
        Err(e) => unread.number(line, label, e),
    }
}

/// `200`, `2.5`, `40 (FDR10)`.
fn read_rate(value: &str) -> Option<(f64, bool)> {
    let (number, rest) = value.split_once(' ').unwrap_or((value, ""));
    let rate = decimal_f64(number)?;
    match rest.trim() {
        "" => Some((rate, false)),
        "(FDR10)" => Some((rate, true)),
        _ => None,
    }
}

/// Recognises the start of ibstat output: a CA header followed by CA fields,
/// or the single-port `CA: 'x'` header followed by a port block.
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let first = without_note(trim(lines.first()?.text()));
    if numbered_heading(first, "Port").is_some() {
        return detect_headless_port(lines);
    }
    if is_hca_name(lines.first()?.text()) {
        return detect_ca_list(lines);
    }
    if first.starts_with("State: ")
        || first.starts_with("Physical state: ")
        || first.starts_with("Rate: ")
    {
        return detect_fields_alone(lines);
    }
    let (node_type, name) = ca_header(first)?;
    let next = trim(lines.iter().skip(1).find(|l| !l.is_blank())?.text());
    let (label, _) = label_value(next)?;
    // A CA header followed straight by a port field is a filtered paste
    // (`ibstat | grep -E "CA '|State"`): ibstat's spelling of both lines
    // is unmistakable, and the parser reads what it can of it
    // ([`open_filtered_port`]).
    let follows = match node_type {
        Some(_) => {
            label.ends_with(" type") || label == "Number of ports" || PORT_FIELDS.contains(&label)
        }
        None => label.starts_with("Port ") || label == "State",
    };
    follows.then(|| Block::keyed(name))
}

/// First bytes a block can start with: `Port N:`, a `CA '…'`-style header
/// (`CA`, `Switch`, `Router`, `iWARP RNIC`, `???`) or an `ibstat -l` name.
fn may_start(b: u8) -> bool {
    matches!(b, b'P' | b'C' | b'S' | b'R' | b'i' | b'?')
        || NODE_TYPES.iter().any(|t| t.as_bytes().first() == Some(&b))
        || HCA_PREFIXES
            .iter()
            .any(|p| p.as_bytes().first() == Some(&b))
}

/// Driver prefixes of RDMA device names as the kernel names them
/// (`/sys/class/infiniband`): Mellanox/NVIDIA, Intel OPA and E800, Broadcom,
/// Marvell, AWS, Alibaba, Huawei, AMD Pensando, soft RoCE/iWARP, Chelsio,
/// VMware, and the old Mellanox and QLogic cards.
const HCA_PREFIXES: &[&str] = &[
    "mlx5_",
    "mlx4_",
    "mthca",
    "hfi1_",
    "qib",
    "irdma",
    "i40iw",
    "bnxt_re",
    "qedr",
    "efa_",
    "erdma_",
    "hns_",
    "ionic_",
    "rxe",
    "siw",
    "cxgb4_",
    "vmw_pvrdma",
    "ocrdma",
    "mana_",
];

/// An HCA name alone on an unindented line (`mlx5_0`, `mlx5_bond_0`,
/// `hfi1_0`, `irdma0`, `bnxt_re3`): a driver prefix, then digits, possibly
/// after `bond_`.
fn is_hca_name(raw: &str) -> bool {
    if raw.starts_with(char::is_whitespace) {
        return false; // ibv_devinfo -l indents its list: not ibstat -l
    }
    let t = raw.trim_end();
    HCA_PREFIXES.iter().any(|p| {
        t.strip_prefix(p).is_some_and(|rest| {
            let rest = rest.strip_prefix("bond_").unwrap_or(rest);
            let rest = rest.strip_prefix('_').unwrap_or(rest);
            !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit())
        })
    })
}

/// `ibstat -l` without its prompt: every line up to the next blank or
/// other line is an HCA name. The section is exactly those lines.
fn detect_ca_list(lines: &[Line<'_>]) -> Option<Block> {
    let n = lines
        .iter()
        .take_while(|l| !l.is_blank() && is_hca_name(l.text()))
        .count();
    let line = lines.first().map_or(0, |l| l.number);
    (n > 0).then(|| Block::of_lines(format!("ibstat -l at line {line}"), n))
}

/// Port fields with neither a CA header nor a `Port N:` line before them
/// (`ibstat | grep -i state`, `ibstat | grep Rate`): two `State:`,
/// `Physical state:` or `Rate:` lines in a row, valued as ibstat prints
/// them. The parser reads them as ports whose adapter and number are
/// unknown ([`read_headerless_field`]). Other fields are not enough to
/// begin a block: inside a port block whose `CA '…'` and `Port N:` lines
/// no detector took (read as the prompt's tool), a `State:` followed by
/// `Link layer:` would cut the block in two.
fn detect_fields_alone(lines: &[Line<'_>]) -> Option<Block> {
    let mut texts = lines
        .iter()
        .filter(|l| !l.is_blank())
        .map(|l| trim(l.text()));
    let ok = texts.next().is_some_and(is_valued_port_field)
        && texts.next().is_some_and(is_valued_port_field);
    // Keyed by line, as a headless `Port N:` block: inside a whole section
    // these lines continue it.
    let line = lines.first().map_or(0, |l| l.number);
    ok.then(|| Block::keyed(format!("ibstat port fields at line {line}")))
}

/// A `State:`, `Physical state:` or `Rate:` line with a value spelled as
/// ibstat spells it (`Active`, `LinkUp`, `100`, `40 (FDR10)`): other
/// tools print these labels too, with other values.
fn is_valued_port_field(t: &str) -> bool {
    let Some((label, value)) = label_value(t) else {
        return false;
    };
    match label {
        "State" => {
            let state = PortState::parse(value);
            state != PortState::Unknown && state.ibstat_name() == value
        }
        "Physical state" => {
            let state = PhysState::parse(value);
            state != PhysState::Unknown && state.ibstat_name() == value
        }
        "Rate" => read_rate(value).is_some(),
        _ => false,
    }
}

/// A `Port N:` block without its CA header: unmistakable when its next
/// two labels are ibstat's first two port fields, spelled as ibstat does.
fn detect_headless_port(lines: &[Line<'_>]) -> Option<Block> {
    let mut labels = lines
        .iter()
        .skip(1)
        .filter(|l| !l.is_blank())
        .take(2)
        .filter_map(|l| label_value(l.text()).map(|(label, _)| label));
    let ok = labels.next() == Some("State") && labels.next() == Some("Physical state");
    // Keyed by line: inside a full ibstat section every `Port N:` matches
    // too, and must continue that section, never start a new one.
    let line = lines.first().map_or(0, |l| l.number);
    ok.then(|| Block::keyed(format!("{UNKNOWN_CA} at line {line}")))
}

/// Renders a model in ibstat's own layout (full form), header-less ports
/// first (`write_headerless_ports`). Used by the round-trip property
/// tests and by anyone who wants ibstat-shaped text back.
#[must_use]
pub fn render(ibstat: &Ibstat) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    for name in &ibstat.ca_names {
        let _ = writeln!(s, "{name}");
    }
    for guid in &ibstat.port_guids {
        let _ = writeln!(s, "{guid}");
    }
    write_headerless_ports(&mut s, &ibstat.headerless_ports);
    for ca in &ibstat.cas {
        let ty = ca.node_type.as_deref();
        match ty {
            Some(ty) => {
                let _ = writeln!(s, "{ty} '{}'", ca.name);
            }
            None => {
                let _ = writeln!(s, "CA: '{}'", ca.name);
            }
        }
        let indent = if ty.is_some() { "\t" } else { "" };
        if let Some(v) = &ca.ca_type {
            let _ = writeln!(s, "{indent}{} type: {v}", ty.unwrap_or("CA"));
        }
        if let Some(v) = ca.number_of_ports {
            let _ = writeln!(s, "{indent}Number of ports: {v}");
        }
        if let Some(v) = &ca.firmware_version {
            let _ = writeln!(s, "{indent}Firmware version: {v}");
        }
        if let Some(v) = &ca.hardware_version {
            let _ = writeln!(s, "{indent}Hardware version: {v}");
        }
        if let Some(v) = ca.node_guid {
            let _ = writeln!(s, "{indent}Node GUID: {v}");
        }
        if let Some(v) = ca.system_image_guid {
            let _ = writeln!(s, "{indent}System image GUID: {v}");
        }
        let pindent = if ty.is_some() { "\t\t" } else { "" };
        for p in &ca.ports {
            let _ = writeln!(s, "{indent}Port {}:", p.number);
            write_port_fields(&mut s, pindent, p);
        }
    }
    s
}

/// Header-less ports ([`Ibstat::headerless_ports`]) as they are pasted,
/// before any `CA '…'` line: a `Port N:` block where the number is known,
/// the bare fields otherwise. Written first, as the parser reads fields
/// only until a `CA '…'` line as header-less; the model read back is the
/// same, lines aside.
fn write_headerless_ports(s: &mut String, ports: &[Port]) {
    use std::fmt::Write as _;
    for p in ports {
        if p.number != 0 {
            let _ = writeln!(s, "\tPort {}:", p.number);
        }
        write_port_fields(s, "\t\t", p);
    }
}

/// A port's fields in ibstat's order, each after `indent`.
fn write_port_fields(s: &mut String, pindent: &str, p: &Port) {
    use std::fmt::Write as _;
    if let Some(v) = p.state {
        let _ = writeln!(s, "{pindent}State: {}", v.ibstat_name());
    }
    if let Some(v) = p.physical_state {
        let _ = writeln!(s, "{pindent}Physical state: {}", v.ibstat_name());
    }
    if let Some(v) = p.rate_gbps {
        let fdr10 = if p.fdr10 { " (FDR10)" } else { "" };
        let _ = writeln!(s, "{pindent}Rate: {v}{fdr10}");
    }
    if let Some(v) = p.effective_speed_gbps {
        let _ = writeln!(s, "{pindent}Effective speed: {v}");
    }
    if let Some(v) = p.base_lid {
        let _ = writeln!(s, "{pindent}Base lid: {v}");
    }
    if let Some(v) = p.lmc {
        let _ = writeln!(s, "{pindent}LMC: {v}");
    }
    if let Some(v) = p.sm_lid {
        let _ = writeln!(s, "{pindent}SM lid: {v}");
    }
    if let Some(v) = p.capability_mask {
        let _ = writeln!(s, "{pindent}Capability mask: 0x{v:08x}");
    }
    if let Some(v) = p.port_guid {
        let _ = writeln!(s, "{pindent}Port GUID: {v}");
    }
    if let Some(v) = p.link_layer {
        let name = match v {
            LinkLayer::Infiniband => "InfiniBand",
            LinkLayer::Ethernet => "Ethernet",
            LinkLayer::Unknown => "???",
        };
        let _ = writeln!(s, "{pindent}Link layer: {name}");
    }
}

/// `2 CAs, 3 ports: 2 Active, 1 Down`; `2 header-less port(s): 1 Active,
/// 1 Down` for port fields without any header.
#[must_use]
pub fn summary(ibstat: &Ibstat) -> String {
    if ibstat.cas.is_empty() {
        if !ibstat.headerless_ports.is_empty() {
            let ports = &ibstat.headerless_ports;
            return format!(
                "{} header-less port(s){}",
                ports.len(),
                states_of(ports.iter())
            );
        }
        if !ibstat.ca_names.is_empty() {
            return format!("{} CA name(s)", ibstat.ca_names.len());
        }
        return format!("{} port GUID(s)", ibstat.port_guids.len());
    }
    let ports: Vec<&Port> = ibstat.cas.iter().flat_map(|c| &c.ports).collect();
    let mut s = format!(
        "{} CA(s), {} port(s){}",
        ibstat.cas.len(),
        ports.len(),
        states_of(ports.iter().copied())
    );
    if !ibstat.headerless_ports.is_empty() {
        let more = &ibstat.headerless_ports;
        s.push_str(&format!(
            "; {} header-less port(s){}",
            more.len(),
            states_of(more.iter())
        ));
    }
    s
}

/// `: 2 Active, 1 Down` for `ports` (nothing for none).
fn states_of<'a>(ports: impl Iterator<Item = &'a Port>) -> String {
    let mut states: Vec<(&str, usize)> = Vec::new();
    for p in ports {
        let name = p.state.map_or("no state", PortState::ibstat_name);
        match states.iter_mut().find(|(n, _)| *n == name) {
            Some((_, count)) => *count += 1,
            None => states.push((name, 1)),
        }
    }
    let states: Vec<String> = states.iter().map(|(n, c)| format!("{c} {n}")).collect();
    if states.is_empty() {
        String::new()
    } else {
        format!(": {}", states.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// A `Rate:` value is cut exactly when it was before whole rates
        /// were told by their number: a proper beginning, as text, of a
        /// rate ibstat prints and none of them whole.
        #[test]
        fn cut_rates_are_told_as_by_their_spellings(
            value in "[0-9]{0,3}(\\.[0-9]{0,4})?( \\(FDR1?0?\\)?)?",
        ) {
            let by_spellings = begins_only(&value, rate_spellings());
            proptest::prop_assert_eq!(is_cut_value("Rate", &value), by_spellings);
        }
    }
    use crate::parse::lines_of;

    #[test]
    fn a_filtered_paste_reads_the_only_port_of_a_single_port_adapter() {
        // `ibstat | grep -E "CA |State"`: no `Port 1:` lines.
        let p = parse(&lines_of(
            "CA 'mlx5_0'\n\t\tState: Active\n\t\tPhysical state: LinkUp\nCA 'mlx5_1'\n\t\tState: Down\n\t\tPhysical state: Polling\n",
        ));
        let cas = &p.value.cas;
        assert_eq!(cas.len(), 2);
        let port = &cas[1].ports[0];
        assert_eq!(port.number, 1);
        assert_eq!(port.state, Some(PortState::Down));
        assert_eq!(port.physical_state, Some(PhysState::Polling));
        assert!(port.partial.is_some(), "the port lacks its header");
        assert!(
            p.warnings.iter().any(|w| w.span.contains(5)),
            "{:?}",
            p.warnings
        );
        // An adapter with more ports (or none known): the number is not
        // invented, the line stays unread.
        let p = parse(&lines_of(
            "CA 'mlx4_0'\n\tNumber of ports: 2\n\t\tState: Down\n",
        ));
        assert!(p.value.cas[0].ports.is_empty());
        let p = parse(&lines_of("CA 'hfi1_0'\n\t\tState: Down\n"));
        assert!(p.value.cas[0].ports.is_empty());
        assert!(
            p.warnings.iter().any(|w| w.span.contains(2)),
            "{:?}",
            p.warnings
        );
    }

    /// `ibstat | grep -i -E "state|rate"`: no `CA '…'` or `Port N:` line.
    /// Each second `State:` begins a port: two ports, named by nothing.
    #[test]
    fn port_fields_without_any_header_are_ports_whose_adapter_is_unknown() {
        let text = "\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 100\n\
                    \t\tState: Down\n\t\tPhysical state: Disabled\n\t\tRate: 10\n";
        let p = parse(&lines_of(text));
        assert_eq!(p.warnings, [], "every line is read");
        assert!(p.value.cas.is_empty(), "no adapter is invented");
        let ports = &p.value.headerless_ports;
        assert_eq!(ports.len(), 2);
        let (a, b) = (&ports[0], &ports[1]);
        assert_eq!(
            (a.state, a.physical_state, a.rate_gbps),
            (
                Some(PortState::Active),
                Some(PhysState::LinkUp),
                Some(100.0)
            )
        );
        assert_eq!(
            (b.state, b.physical_state, b.rate_gbps),
            (Some(PortState::Down), Some(PhysState::Disabled), Some(10.0))
        );
        assert_eq!((a.span.first_line, a.span.last_line), (1, 3));
        assert_eq!((b.span.first_line, b.span.last_line), (4, 6));
        // Whose each is, is unknown: not a number, and said on the port.
        assert_eq!((a.number, b.number), (0, 0));
        assert_eq!(
            b.partial,
            Some(Partial::new(
                PartialReason::NoHeader,
                vec![HEADERLESS_MISSING.to_owned()],
                4
            ))
        );
        assert_eq!(a.base_lid, None, "a field the grep dropped is unknown");
    }

    /// A grep that kept one field: each line is a port of its own, since
    /// ibstat prints each field once a port. Fields out of ibstat's order
    /// (`Rate` before `State`) begin a port too.
    #[test]
    fn each_line_of_a_one_field_grep_is_a_port() {
        let p = parse(&lines_of("Rate: 200\nRate: 200\nRate: 100\n"));
        assert_eq!(p.warnings, []);
        let rates: Vec<_> = p
            .value
            .headerless_ports
            .iter()
            .map(|p| p.rate_gbps)
            .collect();
        assert_eq!(rates, [Some(200.0), Some(200.0), Some(100.0)]);
        let p = parse(&lines_of(
            "Rate: 200\nState: Active\nLink layer: InfiniBand\nState: Down\n",
        ));
        let states: Vec<_> = p
            .value
            .headerless_ports
            .iter()
            .map(|p| (p.rate_gbps, p.state, p.link_layer))
            .collect();
        assert_eq!(
            states,
            [
                (Some(200.0), None, None),
                (None, Some(PortState::Active), Some(LinkLayer::Infiniband)),
                (None, Some(PortState::Down), None),
            ]
        );
    }

    /// Header-less fields before a whole listing: the listing is read as
    /// ever, and the fields are a port of their own, not the first CA's.
    #[test]
    fn headerless_fields_before_a_listing_leave_the_listing_as_it_was() {
        let alone = parse(&lines_of(TWO_CAS));
        let text = format!("\t\tState: Down\n\t\tPhysical state: Polling\n{TWO_CAS}");
        let p = parse(&lines_of(&text));
        assert_eq!(p.warnings, []);
        assert_eq!(p.value.headerless_ports.len(), 1);
        // The same model, two lines lower.
        let shifted = |m: Ibstat, by: usize| {
            let mut cas = m.cas;
            for ca in &mut cas {
                ca.span.first_line -= by;
                ca.span.last_line -= by;
                for port in &mut ca.ports {
                    port.span.first_line -= by;
                    port.span.last_line -= by;
                    if let Some(partial) = &mut port.partial {
                        partial.line -= by;
                    }
                }
            }
            cas
        };
        assert_eq!(shifted(p.value, 2), shifted(alone.value, 0));
        // A field under a CA stays that CA's: never a header-less port.
        let p = parse(&lines_of(
            "CA 'mlx4_0'\n\tNumber of ports: 2\n\t\tState: Down\n",
        ));
        assert!(p.value.headerless_ports.is_empty());
    }

    /// `ibstat | grep State` appended below a whole listing: the fields
    /// come after the port's own, so they are not its; they are ports of
    /// their own (each second `State:` begins one), and the listing's port
    /// keeps what it showed. So is a field its port shows already, where a
    /// `Port 2:` line was trimmed; a `Port N:` line after them is the
    /// CA's again.
    #[test]
    fn port_fields_after_a_whole_port_block_are_not_its() {
        let text = format!(
            "{TWO_CAS}\t\tState: Active\n\t\tPhysical state: LinkUp\n\
             \t\tState: Down\n\t\tPhysical state: Polling\n"
        );
        let p = parse(&lines_of(&text));
        assert_eq!(p.warnings, []);
        let alone = parse(&lines_of(TWO_CAS)).value;
        assert_eq!(p.value.cas, alone.cas, "the listing is read as it was");
        let states: Vec<_> = p
            .value
            .headerless_ports
            .iter()
            .map(|p| (p.state, p.physical_state, p.span.first_line))
            .collect();
        assert_eq!(
            states,
            [
                (Some(PortState::Active), Some(PhysState::LinkUp), 25),
                (Some(PortState::Down), Some(PhysState::Polling), 27),
            ]
        );
        let trimmed = "CA 'mlx4_0'\n\tNumber of ports: 2\n\tPort 1:\n\t\tState: Active\n\
                       \t\tRate: 40\n\t\tState: Down\n\t\tRate: 10\n\tPort 2:\n\t\tState: Down\n";
        let p = parse(&lines_of(trimmed));
        let ca = &p.value.cas[0];
        assert_eq!(ca.ports[0].state, Some(PortState::Active));
        assert_eq!(ca.ports[0].rate_gbps, Some(40.0));
        assert_eq!(p.value.headerless_ports.len(), 1);
        assert_eq!(p.value.headerless_ports[0].rate_gbps, Some(10.0));
        assert_eq!(ca.ports[1].number, 2);
        assert_eq!(ca.ports[1].state, Some(PortState::Down));
    }

    const TWO_CAS: &str = "CA 'mlx5_0'
\tCA type: MT4123
\tNumber of ports: 1
\tFirmware version: 20.36.1010
\tHardware version: 0
\tNode GUID: 0x0c42a10300a1b2c3
\tSystem image GUID: 0x0c42a10300a1b2c3
\tPort 1:
\t\tState: Active
\t\tPhysical state: LinkUp
\t\tRate: 200
\t\tBase lid: 17
\t\tLMC: 0
\t\tSM lid: 1
\t\tCapability mask: 0xa651e848
\t\tPort GUID: 0x0c42a10300a1b2c3
\t\tLink layer: InfiniBand
CA 'mlx5_1'
        CA type: MT4123
        Number of ports: 1
        Port 1:
                State: Down
                Physical state: Disabled
                Rate: 40 (FDR10)
";

    #[test]
    fn notes_after_headers_and_hidden_guids_leave_the_adapter_read() {
        // Annotated notes: a ` # note` after the CA header, a port heading
        // and values; a GUID masked before sharing.
        let text = "CA 'mlx4_3' # 网卡名\n\tCA type: MT4099 # 型号\n\tNumber of ports: 2\n\
                    \tNode GUID: 0xf452xxxxxxxxxxxx # 节点\n\tSystem image GUID: <redacted>\n\
                    \tPort 2: # 未接线\n\t\tState: Down\n\t\tPhysical state: Polling # 等待\n\
                    \t\tRate: 10\n\t\tBase lid: 0\n\t\tLMC: 0\n\t\tSM lid: 0\n\
                    \t\tCapability mask: 0x02514868\n\t\tPort GUID: 0xf452****\n\t\tLink layer: InfiniBand\n";
        let lines = lines_of(text);
        assert_eq!(detect(&lines).map(|b| b.key).as_deref(), Some("mlx4_3"));
        let p = parse(&lines);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let ca = &p.value.cas[0];
        assert_eq!(
            (ca.name.as_str(), ca.node_type.as_deref()),
            ("mlx4_3", Some("CA"))
        );
        assert_eq!((ca.node_guid, ca.system_image_guid), (None, None));
        let port = &ca.ports[0];
        assert_eq!(port.number, 2);
        assert_eq!(port.physical_state, Some(PhysState::Polling));
        assert_eq!((port.port_guid, port.partial.as_ref()), (None, None));
        // A GUID that is neither hex nor a placeholder is still unread.
        let p = parse(&lines_of("CA 'mlx4_3'\n\tNode GUID: 0xf452zz\n"));
        assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
    }

    #[test]
    fn reads_cas_and_ports_whatever_the_indentation() {
        let parsed = parse(&lines_of(TWO_CAS));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let cas = &parsed.value.cas;
        assert_eq!(cas.len(), 2);
        assert_eq!(cas[0].name, "mlx5_0");
        assert_eq!(cas[0].ca_type.as_deref(), Some("MT4123"));
        let p = &cas[0].ports[0];
        assert_eq!(p.state, Some(PortState::Active));
        assert_eq!(p.rate_gbps, Some(200.0));
        assert_eq!(p.sm_lid, Some(1));
        assert_eq!(p.capability_mask, Some(0xa651_e848));
        assert_eq!(p.link_layer, Some(LinkLayer::Infiniband));
        assert_eq!((p.span.first_line, p.span.last_line), (8, 17));
        let q = &cas[1].ports[0];
        assert_eq!(q.physical_state, Some(PhysState::Disabled));
        assert!(q.fdr10);
    }

    #[test]
    fn single_port_form_has_a_colon_header_and_no_indentation() {
        let text =
            "CA: 'mlx5_2'\nPort 1:\nState: Initializing\nPhysical state: LinkUp\nSM lid: 0\n";
        let parsed = parse(&lines_of(text));
        assert!(parsed.warnings.is_empty());
        let ca = &parsed.value.cas[0];
        assert_eq!(ca.node_type, None);
        assert_eq!(ca.ports[0].state, Some(PortState::Initializing));
        assert_eq!(ca.ports[0].sm_lid, Some(0));
    }

    #[test]
    fn bad_lines_become_warnings_and_the_rest_is_kept() {
        let text = "CA 'mlx5_0'\n\tPort 1:\n\t\tState: Active\n\t\tRate: fast\n\t\tWeird line\n\t\tBase lid: 99999999999\n\t\tSM lid: 3\n";
        let parsed = parse(&lines_of(text));
        let port = &parsed.value.cas[0].ports[0];
        assert_eq!(port.state, Some(PortState::Active));
        assert_eq!(port.sm_lid, Some(3));
        assert_eq!(port.rate_gbps, None);
        let lines: Vec<usize> = parsed.warnings.iter().map(|w| w.span.first_line).collect();
        assert_eq!(lines, vec![4, 5, 6]);
        assert_eq!(parsed.warnings[2].kind, WarningKind::OutOfRange);
    }

    /// An identifier left blank (a GUID hidden before sharing) is unknown,
    /// not an unread line, and the port is whole but for it; only on the
    /// output's last line is a blank value a cut, and the port partial.
    #[test]
    fn a_blank_identifier_is_unknown_and_a_cut_only_on_the_last_line() {
        let port = "\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n\t\tBase lid: 7\n\t\tLMC: 0\n\t\tSM lid: 1\n\t\tCapability mask: \n\t\tPort GUID: \n\t\tLink layer: InfiniBand\n";
        let text = format!(
            "CA 'mlx5_0'\n\tNode GUID: \n\tSystem image GUID: \n{port}CA 'mlx5_1'\n{}",
            port.replace("lid: 7", "lid: 8")
        );
        let parsed = parse(&lines_of(&text));
        for ca in &parsed.value.cas {
            assert_eq!(ca.partial, None, "{}", ca.name);
            assert_eq!(ca.node_guid, None);
            assert_eq!(ca.ports[0].partial, None, "{}", ca.name);
            assert_eq!(ca.ports[0].rate_gbps, Some(400.0));
            assert_eq!(ca.ports[0].port_guid, None);
            assert_eq!(ca.ports[0].capability_mask, None);
        }
        assert_eq!(parsed.warnings, []);
        // Cut after `Port GUID:` by the end of the paste: that port is cut.
        let cut = text
            .strip_suffix("\t\tLink layer: InfiniBand\n")
            .unwrap_or_default();
        let parsed = parse(&lines_of(cut));
        assert_eq!(parsed.value.cas[0].ports[0].partial, None);
        assert_eq!(
            parsed.value.cas[1].ports[0].partial,
            Some(Partial::new(
                PartialReason::CutLine,
                vec!["Port GUID".to_owned()],
                23
            ))
        );
        assert_eq!(parsed.warning_lines(), [(23, WarningKind::Truncated)]);
        // Very old ibstat prints no link layer: a blank Port GUID, its
        // last field, is blanked, not where the block was cut.
        let old = text.replace("\t\tLink layer: InfiniBand\n", "");
        let parsed = parse(&lines_of(&format!("{old}\n$ hostname\n")));
        for ca in &parsed.value.cas {
            assert_eq!(ca.ports[0].partial, None, "{}", ca.name);
        }
        // A value that is not an identifier, left blank, stays unread;
        // a garbled identifier too.
        let blank_rate = text.replacen("Rate: 400", "Rate: ", 1);
        let parsed = parse(&lines_of(&blank_rate));
        assert_eq!(parsed.warning_lines(), [(7, WarningKind::Unreadable)]);
        let garbled = text.replacen("Port GUID: ", "Port GUID: 0xzz", 1);
        let parsed = parse(&lines_of(&garbled));
        assert_eq!(parsed.warning_lines(), [(12, WarningKind::Unreadable)]);
    }

    #[test]
    fn ibpanic_is_reported_as_truncation() {
        let text = "CA 'mlx5_0'\n\tCA type: MT4124\nibpanic: [1400444] main: stat of IB device 'mlx5_8' failed: No such file or directory\n";
        let parsed = parse(&lines_of(text));
        assert_eq!(parsed.value.cas.len(), 1);
        assert_eq!(parsed.warnings[0].kind, WarningKind::Truncated);
        assert_eq!(parsed.warnings[0].span.first_line, 3);
    }

    #[test]
    fn list_and_port_guid_forms() {
        let parsed = parse(&lines_of("mlx5_0\nmlx5_1\n"));
        assert_eq!(parsed.value.ca_names, vec!["mlx5_0", "mlx5_1"]);
        let parsed = parse(&lines_of("0x0c42a10300a1b2c3\n"));
        assert_eq!(parsed.value.port_guids, vec![Guid(0x0c42_a103_00a1_b2c3)]);
    }

    /// Header-less ports are written too, before the adapters: fields
    /// pasted alone, a `Port N:` block without its `CA '…'` line, and
    /// fields appended below the listing read back as the same ports.
    /// Before, `render` left them out.
    #[test]
    fn render_writes_header_less_ports_and_reads_back_the_same() {
        let text = format!(
            "\t\tState: Down\n\t\tPhysical state: Polling\n\tPort 2:\n\t\tState: Active\n\
             \t\tRate: 100\n{TWO_CAS}\t\tState: Down\n\t\tRate: 10\n"
        );
        let first = parse(&lines_of(&text)).value;
        let numbers: Vec<u32> = first.headerless_ports.iter().map(|p| p.number).collect();
        assert_eq!(numbers, [0, 2, 0]);
        let rendered = render(&first);
        assert!(
            rendered.contains("\tPort 2:\n\t\tState: Active\n"),
            "{rendered}"
        );
        let again = parse(&lines_of(&rendered));
        assert_eq!(again.warnings, []);
        let strip = |mut m: Ibstat| {
            let ports = m
                .cas
                .iter_mut()
                .flat_map(|c| {
                    c.span = crate::span::LineSpan::line(1);
                    c.ports.iter_mut()
                })
                .chain(m.headerless_ports.iter_mut());
            for p in ports {
                p.span = crate::span::LineSpan::line(1);
                if let Some(partial) = &mut p.partial {
                    partial.line = 1;
                }
            }
            m
        };
        assert_eq!(strip(first), strip(again.value));
    }

    #[test]
    fn render_then_parse_gives_the_same_model() {
        let first = parse(&lines_of(TWO_CAS)).value;
        let again = parse(&lines_of(&render(&first))).value;
        let strip = |mut m: Ibstat| {
            for ca in &mut m.cas {
                ca.span = crate::span::LineSpan::line(1);
                for p in &mut ca.ports {
                    p.span = crate::span::LineSpan::line(1);
                }
            }
            m
        };
        assert_eq!(strip(first), strip(again));
    }

    #[test]
    fn a_filtered_paste_is_found_in_a_whole_input() {
        // `ibstat | grep -E "CA '|State"` pasted on its own: the parser
        // reads it (above), and the split must hand it to the parser.
        let text = "CA 'mlx5_0'\n\t\tState: Active\n\t\tPhysical state: LinkUp\nCA 'mlx5_1'\n\t\tState: Down\n\t\tPhysical state: Polling\n";
        let doc = crate::input::read(text, &crate::ReadOptions::default()).expect("recognised");
        let ports: Vec<_> = doc
            .sections
            .iter()
            .filter_map(|s| match &s.data {
                crate::parse::SectionData::Ibstat(i) => Some(i),
                _ => None,
            })
            .flat_map(|i| {
                i.cas
                    .iter()
                    .flat_map(|c| c.ports.iter().map(move |p| (c.name.as_str(), p.state)))
            })
            .collect();
        assert_eq!(
            ports,
            [
                ("mlx5_0", Some(PortState::Active)),
                ("mlx5_1", Some(PortState::Down))
            ]
        );
        // So is one filtered for rates, and a switch's.
        for text in [
            "CA 'mlx5_0'\n\t\tRate: 200\n",
            "Switch 'sw1'\n\t\tLink layer: InfiniBand\n",
        ] {
            assert!(detect(&lines_of(text)).is_some(), "{text}");
        }
        // A CA header followed by anything else is not ibstat.
        assert!(detect(&lines_of("CA 'mlx5_0'\nStatus: fine\n")).is_none());
        // Port fields alone (`ibstat | grep -i state`, `grep Rate`) are
        // ibstat's, with ibstat's values; one `State:` line of anything
        // else is not.
        for text in [
            "\t\tState: Active\n\t\tPhysical state: LinkUp\n",
            "State: Down\nState: Active\n",
            "Rate: 400\nRate: 200\n",
            "Physical state: Polling\nRate: 10\n",
            "Rate: 40 (FDR10)\nState: Down\n",
        ] {
            assert!(detect(&lines_of(text)).is_some(), "{text}");
        }
        for text in [
            "State: running\nJobs: 0 queued\n",
            "State: Active\nUptime: 3 days\n",
            "State: Active\n",
            "State: PORT_ACTIVE (4)\nState: PORT_DOWN (1)\n",
            "Rate: fast\nRate: 10\n",
            "Rate: 10\n",
            "Rate: 10 MB/s\nRate: 10 MB/s\n",
            "State: Down\nLink layer: Ethernet\n",
        ] {
            assert!(detect(&lines_of(text)).is_none(), "{text}");
        }
    }

    #[test]
    fn detects_headers_followed_by_fields_only() {
        assert!(detect(&lines_of("CA 'mlx5_0'\n\tCA type: MT4123")).is_some());
        assert!(detect(&lines_of("CA: 'mlx5_0'\nPort 1:")).is_some());
        assert!(detect(&lines_of("CA 'mlx5_0'\nsomething else")).is_none());
        assert!(detect(&lines_of("CA: host01 mlx5_0:")).is_none());
    }
}
