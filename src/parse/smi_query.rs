//! `nvidia-smi -q` in full, any `-q -d CLOCK,TEMPERATURE,PERFORMANCE,…`
//! subset, and `nvidia-smi -q -x` (XML).
//!
//! Text form (driver 580 capture; older drivers differ in names, not shape):
//! an `==============NVSMI LOG==============` banner, `Timestamp`, `Driver
//! Version`, `CUDA Version`, `Attached GPUs`, then one block per GPU headed
//! `GPU 00000000:00:06.0` whose `Key : value` lines nest by four spaces.
//! Every line becomes a [`Field`] in a tree; the fields rules need are
//! lifted out by name, accepting old and new spellings (`Clocks Throttle
//! Reasons` → `Clocks Event Reasons`, `Power Readings`/`Power Draw` →
//! `GPU Power Readings`/`Average Power Draw`).
//!
//! XML form: one element a line as nvidia-smi writes it (`<gpu_temp>31 C</gpu_temp>`,
//! `<gpu id="…">`, closing tags on their own lines). It is read into the
//! same tree with tag names as field names, so the same typed fields come
//! out. It is not a general XML parser: a document with several elements on
//! one line is reported line by line, not misread.

use crate::diag::WarningKind;
use crate::model::partial::{Partial, PartialReason};
use crate::model::smi_query::{
    active_flag, ClockEventCounter, ClockEventReason, ClockReason, Clocks, EccCount, Field, Power,
    QueryGpu, SmiQuery, Temperatures,
};
use crate::parse::text::{is_help, label_value, quantity, trim, Unread};
use crate::parse::timestamp::asctime_to_unix;
use crate::parse::{Block, Line, Parsed, Spec};
use crate::span::LineSpan;
use std::fmt::Write as _;

pub(crate) const FORMAT: Spec<SmiQuery> = Spec {
    command: |argv| {
        argv.first() == Some(&"nvidia-smi")
            && argv.iter().any(|a| *a == "-q" || *a == "--query")
            && !is_help(argv)
    },
    starts: super::any_byte,
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &["timestamp", "driver", "cuda", "version", "gpu"],
};

/// Reads `nvidia-smi -q` output, text or XML.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<SmiQuery> {
    let mut unread = Unread::default();
    let first = lines.iter().find(|l| !l.is_blank());
    let xml = first.is_some_and(|l| l.text().trim_start().starts_with('<'));
    let mut cut = None;
    let roots = if xml {
        xml_tree(lines, &mut unread, &mut cut)
    } else {
        text_tree(lines, &mut unread)
    };
    let mut out = SmiQuery {
        xml,
        partial: cut,
        ..SmiQuery::default()
    };
    let fragment = is_fragment(lines, &roots, xml);
    // Pieces of GPU blocks without their heading, split at grep's `--`:
    // the groups grep printed may come from different GPUs.
    let mut pieces: Vec<Vec<Field>> = vec![Vec::new()];
    for f in roots {
        if is_separator_field(&f) {
            if pieces.last().is_some_and(|p| !p.is_empty()) {
                pieces.push(Vec::new());
            }
        } else if is_gpu_node(&f, xml) {
            out.gpus.push(gpu_from(f));
        } else if fragment && !is_top_level(&f.name) {
            // Around a fragment, prose such as `Previously: PASSED` is not
            // nvidia-smi's padded `Key : value` (a space before the colon).
            let source = lines
                .binary_search_by_key(&f.line, |l| l.number)
                .ok()
                .and_then(|i| lines.get(i));
            match source {
                Some(l) if !xml && f.children.is_empty() && query_line(l.text()).is_none() => {
                    unread.line(l, "not nvidia-smi's padded `Key : value` line");
                }
                _ => {
                    if let Some(piece) = pieces.last_mut() {
                        piece.push(f);
                    }
                }
            }
        } else {
            out.fields.push(f);
        }
    }
    pieces.retain(|p| !p.is_empty());
    if let Some(first) = pieces.first().and_then(|p| p.first()) {
        // A piece of one GPU's block: read for what it holds, as a GPU
        // whose identity is unknown.
        let line = first.line;
        let nested = if xml {
            " (it starts inside the `<gpu>` element)"
        } else if lines
            .iter()
            .find(|l| l.number == line)
            .is_some_and(|l| indent_of(l.text()) > 4)
        {
            " (it starts inside a nested block whose heading is missing)"
        } else {
            ""
        };
        let split = if pieces.len() > 1 {
            format!(
                "; grep's `--` separates {} pieces, each read as a GPU of its own (they may be the same GPU)",
                pieces.len()
            )
        } else {
            String::new()
        };
        unread.warn(
            WarningKind::Truncated,
            LineSpan::line(line),
            format!(
                "a fragment of `nvidia-smi -q` without its banner and GPU heading{nested}: the GPU it describes is unknown, and only the fields shown are read{split}"
            ),
        );
        for piece in pieces {
            let line = piece.first().map_or(line, |f| f.line);
            let mut gpu = gpu_from(Field {
                name: if xml { "gpu" } else { "GPU" }.to_owned(),
                value: None,
                line,
                children: piece,
            });
            gpu.headerless = true;
            out.gpus.push(gpu);
        }
    }
    let top = |names: &[&str]| Field::find_in(&out.fields, &[names]).and_then(|f| f.value.clone());
    out.timestamp = top(&["Timestamp", "timestamp"]);
    out.driver_version = top(&["Driver Version", "driver_version"]);
    out.cuda_version = top(&["CUDA Version", "cuda_version"]);
    out.attached_gpus = top(&["Attached GPUs", "attached_gpus"]).and_then(|v| v.parse().ok());
    out.timestamp_unix = out.timestamp.as_deref().and_then(asctime_to_unix);
    if let (Some(text), None) = (&out.timestamp, out.timestamp_unix) {
        let line =
            Field::find_in(&out.fields, &[&["Timestamp", "timestamp"]]).map_or(1, |f| f.line);
        unread.warn(
            WarningKind::Suspicious,
            LineSpan::line(line),
            format!("`Timestamp` `{text}` is not a date this version can read"),
        );
    }
    let mut warnings = unread.finish();
    warnings.sort_by_key(|w| w.span);
    Parsed {
        value: out,
        warnings,
    }
}

/// A field's value holding more padded `Key : value` fields: what a chat
/// tool or a rendered quote leaves when it drops the line breaks
/// (`Timestamp : Wed Jan 10 … Driver Version : 535.129.03`). nvidia-smi
/// prints one field per line, and no value of its holds ` : `, so the
/// fields' boundaries are lost: read as one, the first field's value would
/// carry the others (a timestamp that is not a date, a GPU count that is
/// not a number).
fn runs_fields_together(value: &str) -> bool {
    value.contains(" : ")
}

fn is_gpu_node(f: &Field, xml: bool) -> bool {
    if xml {
        f.name == "gpu"
    } else {
        f.name == "GPU" && f.value.as_deref().is_some_and(is_bus_id)
    }
}

/// Fields printed above the GPU blocks (text and XML names).
fn is_top_level(name: &str) -> bool {
    matches!(
        name,
        "Timestamp"
            | "Driver Version"
            | "CUDA Version"
            | "Attached GPUs"
            | "timestamp"
            | "driver_version"
            | "cuda_version"
            | "attached_gpus"
    )
}

/// Output without its banner (text) or document element (XML), without
/// the fields printed above the GPU blocks and without any GPU heading: a
/// piece cut from inside a GPU block.
fn is_fragment(lines: &[Line<'_>], roots: &[Field], xml: bool) -> bool {
    let framed = if xml {
        lines
            .iter()
            .any(|l| l.text().trim_start().starts_with("<nvidia_smi_log"))
    } else {
        lines.iter().any(|l| is_banner(l.text()))
    };
    !framed
        && !roots
            .iter()
            .any(|f| is_gpu_node(f, xml) || is_top_level(&f.name))
}

/// `00000000:00:06.0` (domain of 4 or 8 hex digits).
fn is_bus_id(t: &str) -> bool {
    let mut parts = t.split(':');
    let (Some(domain), Some(bus), Some(rest), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let Some((dev, func)) = rest.split_once('.') else {
        return false;
    };
    let hex =
        |s: &str, n: &[usize]| n.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit());
    hex(domain, &[4, 8]) && hex(bus, &[2]) && hex(dev, &[2]) && hex(func, &[1])
}

/// `GPU 00000000:00:06.0` → the bus id.
fn gpu_heading(t: &str) -> Option<&str> {
    let id = trim(trim(t).strip_prefix("GPU ")?);
    is_bus_id(id).then_some(id)
}

fn is_banner(t: &str) -> bool {
    let t = trim(t);
    t.starts_with("=====") && t.contains("NVSMI LOG")
}

/// A line of the text form before nesting.
struct Item {
    indent: usize,
    field: Field,
}

fn text_tree(lines: &[Line<'_>], unread: &mut Unread) -> Vec<Field> {
    let last = crate::parse::text::last_text_line(lines).unwrap_or(0);
    let mut items = Vec::new();
    for line in lines.iter().filter(|l| !l.is_blank()) {
        let text = line.text();
        if is_banner(text) {
            continue;
        }
        if is_grep_separator(text) {
            // Column 0 whatever the paste did to it: it closes every block
            // open above it, as the lines grep left out would have.
            items.push(Item {
                indent: 0,
                field: Field {
                    name: GREP_SEPARATOR.to_owned(),
                    value: None,
                    line: line.number,
                    children: Vec::new(),
                },
            });
            continue;
        }
        let indent = indent_of(text);
        let label = label_value(text);
        if label.is_some_and(|(_, value)| runs_fields_together(value)) {
            unread.line(
                line,
                "several `Key : value` fields run together on one line (the paste lost its line breaks)",
            );
            continue;
        }
        let field = if let Some(id) = gpu_heading(text) {
            Field {
                name: "GPU".to_owned(),
                value: Some(id.to_owned()),
                line: line.number,
                children: Vec::new(),
            }
        } else if let Some((name, value)) = label {
            Field {
                name: name.to_owned(),
                value: Some(value.to_owned()),
                line: line.number,
                children: Vec::new(),
            }
        } else {
            Field {
                name: text.trim().to_owned(),
                value: None,
                line: line.number,
                children: Vec::new(),
            }
        };
        items.push(Item { indent, field });
    }
    // For each item, where the next GPU heading is (or the end): computed
    // once, so many top-level lines cost no rescans.
    let mut next_gpu = vec![items.len(); items.len() + 1];
    for i in (0..items.len()).rev() {
        let here = items.get(i).is_some_and(|it| is_gpu_node(&it.field, false));
        let after = next_gpu.get(i + 1).copied().unwrap_or(items.len());
        if let Some(slot) = next_gpu.get_mut(i) {
            *slot = if here { i } else { after };
        }
    }
    let mut roots = Vec::new();
    let mut pos = 0;
    while pos < items.len() {
        let Some(item) = items.get_mut(pos) else {
            break;
        };
        let indent = item.indent;
        let mut field = std::mem::replace(&mut item.field, empty_field());
        pos += 1;
        let end = next_gpu.get(pos).copied().unwrap_or(items.len());
        if is_gpu_node(&field, false) {
            // Everything up to the next GPU heading belongs to this GPU,
            // whatever its indentation (pastes lose it).
            let mut inner = pos;
            field.children = nest(&mut items, &mut inner, end, None, 0, last, unread);
            pos = end;
        } else if !is_separator_field(&field) {
            field.children = nest(&mut items, &mut pos, end, Some(indent), 0, last, unread);
            check_heading(&field, last, unread);
        }
        roots.push(field);
    }
    roots
}

fn empty_field() -> Field {
    Field {
        name: String::new(),
        value: None,
        line: 0,
        children: Vec::new(),
    }
}

/// nvidia-smi nests five levels at most; deeper input (hostile or
/// damaged) is flattened at this depth instead of recursing without bound.
const MAX_DEPTH: usize = 32;

/// Builds the fields indented deeper than `parent` from `items[*pos..end]`.
#[allow(clippy::too_many_arguments)] // one recursion's state, passed down
fn nest(
    items: &mut [Item],
    pos: &mut usize,
    end: usize,
    parent: Option<usize>,
    depth: usize,
    last: usize,
    unread: &mut Unread,
) -> Vec<Field> {
    let mut out = Vec::new();
    while *pos < end {
        let Some(item) = items.get_mut(*pos) else {
            break;
        };
        if parent.is_some_and(|p| item.indent <= p) {
            break;
        }
        let indent = item.indent;
        let mut field = std::mem::replace(&mut item.field, empty_field());
        *pos += 1;
        if is_separator_field(&field) {
            // Only a GPU's own level (no parent indent) gets here: the
            // groups after it are still that GPU's, up to its next heading.
            continue;
        }
        if depth < MAX_DEPTH {
            field.children = nest(items, pos, end, Some(indent), depth + 1, last, unread);
        }
        check_heading(&field, last, unread);
        out.push(field);
    }
    out
}

/// The line `grep -A/-B/-C` prints between two groups of context lines
/// (`nvidia-smi -q | grep -C3 CliqueId`): lines were left out there. It is
/// neither a field nor a heading cut from its value.
fn is_grep_separator(text: &str) -> bool {
    text.trim() == GREP_SEPARATOR
}

const GREP_SEPARATOR: &str = "--";

/// A field made from grep's group separator (a real field always has a
/// value, children, or a name that is not `--`).
fn is_separator_field(f: &Field) -> bool {
    f.name == GREP_SEPARATOR && f.value.is_none() && f.children.is_empty()
}

/// A line without `:` is a heading only if something is nested under it.
/// The last line of the output, without its value (`Memory Max Operati`,
/// `SRAM Correctable :`), was cut: its value is unknown, not empty.
fn check_heading(field: &Field, last: usize, unread: &mut Unread) {
    let childless = field.children.is_empty();
    if field.line == last && childless && field.value.as_deref().is_none_or(str::is_empty) {
        unread.warn(
            WarningKind::Truncated,
            LineSpan::line(field.line),
            // Said as the input layer says a cut line, so that IN001
            // names it.
            format!(
                "{}: the output ends on `{}` without its value: cut here, the value is unknown",
                crate::input::CUT_LINE,
                field.name
            ),
        );
    } else if field.value.is_none() && childless {
        unread.warn(
            WarningKind::Unreadable,
            LineSpan::line(field.line),
            "not a `Key : value` line, and nothing is nested under it",
        );
    }
}

/// Width of leading white space, a tab counting as four spaces (the
/// tool's own step).
fn indent_of(text: &str) -> usize {
    text.chars()
        .take_while(|c| c.is_whitespace())
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}

fn xml_tree(lines: &[Line<'_>], unread: &mut Unread, cut: &mut Option<Partial>) -> Vec<Field> {
    let mut stack: Vec<Field> = Vec::new();
    let mut roots: Vec<Field> = Vec::new();
    let attach = |stack: &mut Vec<Field>, roots: &mut Vec<Field>, f: Field| match stack.last_mut() {
        Some(parent) => parent.children.push(f),
        None => roots.push(f),
    };
    let last = crate::parse::text::last_text_line(lines).unwrap_or(1);
    for line in lines.iter().filter(|l| !l.is_blank()) {
        let t = line.text().trim();
        if t.starts_with("<?") || t.starts_with("<!") {
            continue;
        }
        if let Some(name) = t.strip_prefix("</").and_then(|r| r.strip_suffix('>')) {
            match stack.pop() {
                Some(open) if open.name == name.trim() => attach(&mut stack, &mut roots, open),
                Some(open) => {
                    unread.line(line, "closing tag does not match the open element");
                    stack.push(open);
                }
                // A fragment that starts inside an element closes it
                // without having opened it: everything read so far at the
                // top level (the roots) is its content, under its name.
                None if !roots.is_empty() => {
                    let children = std::mem::take(&mut roots);
                    roots.push(Field {
                        name: name.trim().to_owned(),
                        value: None,
                        line: children.first().map_or(line.number, |c| c.line),
                        children,
                    });
                }
                None => unread.line(line, "closing tag with no open element"),
            }
            continue;
        }
        match xml_element(t) {
            Some(XmlLine::Leaf(name, value)) => attach(
                &mut stack,
                &mut roots,
                Field {
                    name,
                    value,
                    line: line.number,
                    children: Vec::new(),
                },
            ),
            Some(XmlLine::Open(name, id)) if stack.len() >= MAX_DEPTH => {
                unread.warn(
                    WarningKind::Limit,
                    line.span(),
                    format!("XML nested deeper than {MAX_DEPTH} levels; `<{name}>` read as empty"),
                );
                attach(
                    &mut stack,
                    &mut roots,
                    Field {
                        name,
                        value: id,
                        line: line.number,
                        children: Vec::new(),
                    },
                );
            }
            Some(XmlLine::Open(name, id)) => stack.push(Field {
                name,
                value: id,
                line: line.number,
                children: Vec::new(),
            }),
            None if !t.starts_with('<') => match stack.last_mut() {
                Some(open) if open.value.is_none() => open.value = Some(unescape(t)),
                _ => unread.line(line, "text outside an element"),
            },
            None if line.number == last && opens_element(t) => unread.warn(
                WarningKind::Truncated,
                line.span(),
                // Said as the input layer says a cut line, so that IN001
                // names it.
                format!(
                    "{}: the output ends inside `{t}` before its closing tag: cut here, the value is unknown",
                    crate::input::CUT_LINE
                ),
            ),
            None => unread.line(line, "not an XML element this reader understands"),
        }
    }
    if !stack.is_empty() {
        unread.warn(
            WarningKind::Truncated,
            LineSpan::line(last),
            format!(
                "{} XML element(s) are not closed; the output may be cut short",
                stack.len()
            ),
        );
        // nvidia-smi closes every element it opens: the output was cut
        // here, and IN001 names what the open elements lacked.
        *cut = Some(Partial::new(
            PartialReason::MissingFields,
            stack
                .iter()
                .rev()
                .map(|f| format!("`</{}>`", f.name))
                .collect(),
            last,
        ));
        while let Some(open) = stack.pop() {
            attach(&mut stack, &mut roots, open);
        }
    }
    // The document element holds everything.
    match roots.len() {
        1 if roots.first().is_some_and(|r| r.name == "nvidia_smi_log") => {
            roots.pop().map(|r| r.children).unwrap_or_default()
        }
        _ => roots,
    }
}

/// `<vbios_version>9`, `<fb_memory_usa`: an element's opening (a name
/// right after `<`) that the line does not complete. On the output's last
/// line it is where the paste was cut (nvidia-smi writes each leaf whole on
/// one line), not a line of some other form.
fn opens_element(t: &str) -> bool {
    t.strip_prefix('<')
        .and_then(|r| r.bytes().next())
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
}

enum XmlLine {
    /// `<a>text</a>`, `<a/>`.
    Leaf(String, Option<String>),
    /// `<a>` or `<a id="x">`, with the `id` attribute.
    Open(String, Option<String>),
}

fn xml_element(t: &str) -> Option<XmlLine> {
    let inner = t.strip_prefix('<')?;
    let name_end = inner.find(|c: char| c.is_whitespace() || c == '>' || c == '/')?;
    let (name, rest) = inner.split_at(name_end);
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return None;
    }
    let close = rest.find('>')?;
    let (attrs, after) = rest.split_at(close);
    let after = after.get(1..)?;
    let id = attribute(attrs, "id");
    if attrs.trim_end().ends_with('/') {
        return after.is_empty().then(|| XmlLine::Leaf(name.to_owned(), id));
    }
    if after.is_empty() {
        return Some(XmlLine::Open(name.to_owned(), id));
    }
    let text = after
        .strip_suffix('>')?
        .strip_suffix(name)?
        .strip_suffix("</")?;
    Some(XmlLine::Leaf(name.to_owned(), Some(unescape(text))))
}

fn attribute(attrs: &str, key: &str) -> Option<String> {
    let start = attrs.find(&format!("{key}=\""))? + key.len() + 2;
    let rest = attrs.get(start..)?;
    let end = rest.find('"')?;
    rest.get(..end).map(unescape)
}

fn unescape(t: &str) -> String {
    t.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Typed fields of one GPU block, from text or XML names.
fn gpu_from(node: Field) -> QueryGpu {
    let fields = node.children;
    let last = last_line(&fields).max(node.line);
    let mut gpu = QueryGpu {
        bus_id: node.value.unwrap_or_default(),
        span: LineSpan::new(node.line, last),
        ..QueryGpu::default()
    };
    let text = |path: &[&[&str]]| Field::find_in(&fields, path).and_then(|f| f.value.clone());
    let num = |path: &[&[&str]]| {
        Field::find_in(&fields, path)
            .and_then(|f| f.value.as_deref())
            .and_then(quantity)
            .map(|(v, _)| v)
    };
    gpu.product_name = text(&[&["Product Name", "product_name"]]);
    gpu.uuid = text(&[&["GPU UUID", "uuid"]]);
    gpu.performance_state = text(&[&["Performance State", "performance_state"]]);
    const TEMP: &[&str] = &["Temperature", "temperature"];
    gpu.temperature = Temperatures {
        gpu_c: num(&[TEMP, &["GPU Current Temp", "gpu_temp"]]),
        memory_c: num(&[TEMP, &["Memory Current Temp", "memory_temp"]]),
        tlimit_c: num(&[TEMP, &["GPU T.Limit Temp", "gpu_temp_tlimit"]]),
        slowdown_c: num(&[TEMP, &["GPU Slowdown Temp", "gpu_temp_slow_threshold"]]),
        shutdown_c: num(&[TEMP, &["GPU Shutdown Temp", "gpu_temp_max_threshold"]]),
    };
    let clocks = |section: &[&str]| Clocks {
        graphics_mhz: num(&[section, &["Graphics", "graphics_clock"]]),
        sm_mhz: num(&[section, &["SM", "sm_clock"]]),
        memory_mhz: num(&[section, &["Memory", "mem_clock"]]),
        video_mhz: num(&[section, &["Video", "video_clock"]]),
    };
    gpu.clocks = clocks(&["Clocks", "clocks"]);
    gpu.max_clocks = clocks(&["Max Clocks", "max_clocks"]);
    const POWER: &[&str] = &[
        "GPU Power Readings",
        "Power Readings",
        "gpu_power_readings",
        "power_readings",
    ];
    gpu.power = Power {
        draw_w: num(&[POWER, &["Average Power Draw", "average_power_draw"]])
            .or_else(|| num(&[POWER, &["Power Draw", "power_draw"]])),
        instant_w: num(&[POWER, &["Instantaneous Power Draw", "instant_power_draw"]]),
        limit_w: num(&[
            POWER,
            &[
                "Current Power Limit",
                "Enforced Power Limit",
                "Power Limit",
                "current_power_limit",
                "enforced_power_limit",
                "power_limit",
            ],
        ]),
    };
    let reasons = Field::find_in(
        &fields,
        &[&[
            "Clocks Event Reasons",
            "Clocks Throttle Reasons",
            "clocks_event_reasons",
            "clocks_throttle_reasons",
        ]],
    );
    if let Some(section) = reasons {
        gpu.clock_event_reasons = section
            .leaves()
            .into_iter()
            .map(|(_, f)| ClockEventReason {
                reason: ClockReason::parse(&f.name),
                name: f.name.clone(),
                active: f.value.as_deref().and_then(active_flag),
                line: f.line,
            })
            .collect();
    }
    let counters = Field::find_in(
        &fields,
        &[&[
            "Clocks Event Reasons Counters",
            "Clocks Throttle Reasons Counters",
            "clocks_event_reasons_counters",
            "clocks_throttle_reasons_counters",
        ]],
    );
    if let Some(section) = counters {
        gpu.clock_event_counters = section
            .leaves()
            .into_iter()
            .map(|(_, f)| ClockEventCounter {
                reason: ClockReason::parse(&f.name),
                name: f.name.clone(),
                microseconds: f
                    .value
                    .as_deref()
                    .and_then(quantity)
                    .filter(|(_, unit)| *unit == "us")
                    .map(|(v, _)| v),
                line: f.line,
            })
            .collect();
    }
    if let Some(section) = Field::find_in(&fields, &[&["ECC Errors", "ecc_errors"]]) {
        gpu.ecc_errors = section
            .leaves()
            .into_iter()
            .filter_map(|(path, f)| {
                let v = f.value.as_deref()?.trim();
                let value = v.parse::<u64>().ok();
                (value.is_some() || v == "N/A").then_some(EccCount {
                    path,
                    value,
                    line: f.line,
                })
            })
            .collect();
    }
    gpu.fields = fields;
    gpu
}

fn last_line(fields: &[Field]) -> usize {
    fields
        .iter()
        .map(|f| f.line.max(last_line(&f.children)))
        .max()
        .unwrap_or(0)
}

/// Recognises the start of `-q` output: the banner, `Timestamp` followed
/// by `Driver Version`, a GPU heading followed by a field, or the XML
/// prolog / document element.
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let first = lines.first()?.text();
    let mut rest = lines.iter().skip(1).filter(|l| !l.is_blank());
    if is_banner(first) {
        return Some(Block::keyed("banner"));
    }
    let t = trim(first);
    if t.starts_with("<?xml") {
        let doc = rest.take(3).any(|l| {
            let t = trim(l.text());
            t.starts_with("<!DOCTYPE nvidia_smi_log") || t.starts_with("<nvidia_smi_log")
        });
        return doc.then(|| Block::keyed("xml"));
    }
    if t.starts_with("<nvidia_smi_log>") {
        // Its own key: it follows the prolog inside the same document.
        return Some(Block::keyed("xml-root"));
    }
    if let Some(id) = gpu_heading(t) {
        let next = rest.next()?;
        let nested = indent_of(next.text()) > indent_of(first) || next.text().contains(" : ");
        let field_like = next
            .text()
            .trim()
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || " :./-()_".contains(c));
        return (nested && field_like).then(|| Block::keyed(format!("gpu:{id}")));
    }
    // The cheap test first: most lines asked are not `Timestamp`.
    let timestamp = if t.starts_with("Timestamp") {
        label_value(t)
    } else {
        None
    };
    if let Some((label, _)) = timestamp {
        if label == "Timestamp" {
            let next = label_value(rest.next()?.text())?;
            return (next.0 == "Driver Version").then(|| Block::keyed("timestamp"));
        }
    }
    let number = lines.first()?.number;
    let fragment = if t.starts_with('<') {
        is_xml_fragment(lines)
    } else {
        is_text_fragment(lines)
    };
    // Keyed by line: inside a whole `-q` output these lines continue it.
    fragment.then(|| Block::keyed(format!("fragment at line {number}")))
}

/// How many lines fragment detection reads ahead.
const FRAGMENT_LOOKAHEAD: usize = 12;

/// Field names only `nvidia-smi -q` prints (driver 450–580 spellings): a
/// fragment must show one of them, so that other `Key : value` output
/// (mlxlink) is not taken for it.
const QUERY_KEYS: &[&str] = &[
    "Product Name",
    "Product Brand",
    "Product Architecture",
    "Persistence Mode",
    "MIG Mode",
    "GPU UUID",
    "VBIOS Version",
    "MultiGPU Board",
    "GPU Part Number",
    "Inforom Version",
    "GPU Virtualization Mode",
    "GPU Reset Status",
    "GPU Link Info",
    "PCIe Generation",
    "Link Width",
    "Bridge Chip",
    "Replays Since Reset",
    "Replay Number Rollovers",
    "Tx Throughput",
    "Rx Throughput",
    "Fan Speed",
    "Performance State",
    "Clocks Throttle Reasons",
    "Clocks Event Reasons",
    "Clocks Event Reasons Counters",
    "FB Memory Usage",
    "BAR1 Memory Usage",
    "Compute Mode",
    "Ecc Mode",
    "ECC Errors",
    "Retired Pages",
    "Remapped Rows",
    "Bank Remap Availability Histogram",
    "Remapping Failure Occurred",
    "Pending Page Blacklist",
    "SRAM Correctable",
    "SRAM Uncorrectable",
    "DRAM Correctable",
    "DRAM Uncorrectable",
    "GPU Current Temp",
    "GPU Shutdown Temp",
    "GPU Slowdown Temp",
    "GPU Max Operating Temp",
    "Memory Current Temp",
    "GPU Power Readings",
    "Power Readings",
    "Applications Clocks",
    "Max Customer Boost Clocks",
    "HW Slowdown",
    "HW Thermal Slowdown",
    "SW Thermal Slowdown",
    "SW Power Cap",
    "Applications Clocks Setting",
    "Fabric",
    "CliqueId",
    "ClusterUUID",
];

/// XML element names of a `<gpu>` block (prefixes where families share one).
const QUERY_TAGS: &[&str] = &[
    "product_",
    "uuid",
    "pci",
    "fan_speed",
    "performance_state",
    "clocks_event_reason",
    "clocks_throttle_reason",
    "fb_memory_usage",
    "bar1_memory_usage",
    "ecc_",
    "retired_pages",
    "remapped_rows",
    "temperature",
    "gpu_temp",
    "gpu_power_readings",
    "power_readings",
    "max_clocks",
    "fabric",
];

/// `Key<spaces>: value` as nvidia-smi pads it (a space before the colon,
/// which ibstat's and ibv_devinfo's `key: value` never have), or a heading
/// (words, no colon); `None` for anything else.
fn query_line(t: &str) -> Option<(&str, bool)> {
    let t = trim(t);
    match t.split_once(':') {
        Some((key, _)) if key.ends_with([' ', '\t']) && !trim(key).is_empty() => {
            Some((trim(key), false))
        }
        Some(_) => None,
        None => {
            let words = t.len() <= 48
                && t.chars()
                    .all(|c| c.is_ascii_alphanumeric() || " .-_()/".contains(c));
            (words && !t.is_empty()).then_some((t, true))
        }
    }
}

/// A text fragment from inside a GPU block: from the first line on, at
/// least three lines in nvidia-smi's padded `Key : value` form (headings
/// allowed only with a deeper line under them), and one of them a field
/// only `-q` prints.
fn is_text_fragment(lines: &[Line<'_>]) -> bool {
    // Runs on every line of every input: most fail on their own text.
    if lines.first().is_none_or(|l| query_line(l.text()).is_none()) {
        return false;
    }
    let run: Vec<&Line<'_>> = lines
        .iter()
        .filter(|l| !l.is_blank())
        .take(FRAGMENT_LOOKAHEAD)
        .collect();
    let mut fields = 0;
    let mut known = false;
    for (i, line) in run.iter().enumerate() {
        let Some((key, heading)) = query_line(line.text()) else {
            break;
        };
        if heading {
            let deeper = run
                .get(i + 1)
                .is_some_and(|n| indent_of(n.text()) > indent_of(line.text()));
            if !deeper {
                break;
            }
        } else {
            fields += 1;
        }
        known |= QUERY_KEYS.contains(&key);
    }
    fields >= 3 && known
}

/// An XML fragment from inside a `<gpu>` element: at least three element
/// lines from the first on, one of them named as `-q -x` names its fields.
fn is_xml_fragment(lines: &[Line<'_>]) -> bool {
    let mut elements = 0;
    let mut known = false;
    for line in lines
        .iter()
        .filter(|l| !l.is_blank())
        .take(FRAGMENT_LOOKAHEAD)
    {
        let t = line.text().trim();
        let name = match (t.strip_prefix("</"), xml_element(t)) {
            (Some(close), _) => close.strip_suffix('>'),
            (None, Some(XmlLine::Leaf(name, _) | XmlLine::Open(name, _))) => {
                known |= QUERY_TAGS.iter().any(|tag| name.starts_with(tag));
                Some("")
            }
            (None, None) => None,
        };
        if name.is_none() {
            break;
        }
        elements += 1;
    }
    elements >= 3 && known
}

/// `2 GPU(s) NVIDIA H200, driver 580.159.04; GPU temp 31–33 C; no slowdown active`.
#[must_use]
pub fn summary(q: &SmiQuery) -> String {
    let mut s = format!("{} GPU(s)", q.gpus.len());
    let mut names: Vec<&str> = q
        .gpus
        .iter()
        .filter_map(|g| g.product_name.as_deref())
        .collect();
    names.dedup();
    if !names.is_empty() {
        let _ = write!(s, " {}", names.join(", "));
    }
    if let Some(d) = &q.driver_version {
        let _ = write!(s, ", driver {d}");
    }
    if q.gpus.iter().any(|g| g.headerless) {
        s.push_str(" (fragment of an unknown GPU: no GPU heading)");
    }
    if q.xml {
        s.push_str(" (XML)");
    }
    let temps: Vec<f64> = q.gpus.iter().filter_map(|g| g.temperature.gpu_c).collect();
    if let (Some(lo), Some(hi)) = (
        temps.iter().copied().reduce(f64::min),
        temps.iter().copied().reduce(f64::max),
    ) {
        if lo < hi {
            let _ = write!(s, "; GPU temp {lo}–{hi} C");
        } else {
            let _ = write!(s, "; GPU temp {lo} C");
        }
    }
    if q.gpus.iter().any(|g| !g.clock_event_reasons.is_empty()) {
        let slowed = q
            .gpus
            .iter()
            .filter(|g| g.active_slowdowns().next().is_some())
            .count();
        if slowed == 0 {
            s.push_str("; no slowdown active");
        } else {
            let _ = write!(s, "; {slowed} GPU(s) slowed down");
        }
    }
    s
}

/// Renders the text form (`nvidia-smi -q` layout) of a model read from
/// either form. A fragment without its heading is rendered without one
/// (and without the banner, when it is all there is).
#[must_use]
pub fn render(q: &SmiQuery) -> String {
    let mut s = String::new();
    if !q.fields.is_empty() || q.gpus.iter().any(|g| !g.headerless) {
        s.push_str("\n==============NVSMI LOG==============\n\n");
    }
    for f in &q.fields {
        render_field(&mut s, f, 0);
    }
    for g in &q.gpus {
        if g.headerless {
            for f in &g.fields {
                render_field(&mut s, f, 1);
            }
            continue;
        }
        let _ = writeln!(s, "GPU {}", g.bus_id);
        for f in &g.fields {
            render_field(&mut s, f, 1);
        }
        s.push('\n');
    }
    s
}

fn render_field(s: &mut String, f: &Field, depth: usize) {
    let key = format!("{}{}", "    ".repeat(depth), f.name);
    match &f.value {
        Some(v) => {
            let _ = writeln!(s, "{key:<55}: {v}");
        }
        // An empty XML element has neither value nor children; give it an
        // empty value so the text form stays a `Key : value` line.
        None if f.children.is_empty() => {
            let _ = writeln!(s, "{key:<55}: ");
        }
        None => {
            let _ = writeln!(s, "{key}");
        }
    }
    for c in &f.children {
        render_field(s, c, depth + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::smi_query::ClockReason;
    use crate::parse::lines_of;

    /// An older-driver block (R470 names: Clocks Throttle Reasons, Power
    /// Readings / Power Draw, Single/Double Bit ECC), two GPUs.
    const OLD: &str = "
==============NVSMI LOG==============

Timestamp                                 : Tue Jan  9 10:00:00 2024
Driver Version                            : 470.82.01
CUDA Version                              : 11.4

Attached GPUs                             : 2
GPU 00000000:07:00.0
    Product Name                          : NVIDIA A100-SXM4-80GB
    GPU UUID                              : GPU-aaaa
    Performance State                     : P0
    Clocks Throttle Reasons
        Idle                              : Not Active
        SW Power Cap                      : Active
        HW Slowdown                       : Not Active
            HW Thermal Slowdown           : Active
        SW Thermal Slowdown               : N/A
    ECC Errors
        Volatile
            Single Bit
                Device Memory             : 3
                Total                     : 3
            Double Bit
                Device Memory             : 1
                Total                     : 1
    Temperature
        GPU Current Temp                  : 87 C
        GPU Shutdown Temp                 : 92 C
        GPU Slowdown Temp                 : 89 C
    Power Readings
        Power Draw                        : 398.12 W
        Power Limit                       : 400.00 W
    Clocks
        Graphics                          : 1110 MHz
        SM                                : 1110 MHz
        Memory                            : 1593 MHz

GPU 00000000:0F:00.0
    Product Name                          : NVIDIA A100-SXM4-80GB
    Temperature
        GPU Current Temp                  : 40 C
";

    #[test]
    fn reads_older_driver_names_into_the_same_fields() {
        let p = parse(&lines_of(OLD));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let q = &p.value;
        assert_eq!(q.driver_version.as_deref(), Some("470.82.01"));
        assert_eq!(q.attached_gpus, Some(2));
        // `date -u -d 2024-01-09T10:00:00 +%s`
        assert_eq!(q.timestamp_unix, Some(1_704_794_400));
        assert_eq!(q.gpus.len(), 2);
        let g = &q.gpus[0];
        assert_eq!(g.bus_id, "00000000:07:00.0");
        assert_eq!(g.temperature.gpu_c, Some(87.0));
        assert_eq!(g.temperature.slowdown_c, Some(89.0));
        assert_eq!(g.power.draw_w, Some(398.12));
        assert_eq!(g.power.limit_w, Some(400.0));
        assert_eq!(g.clocks.sm_mhz, Some(1110.0));
        let active: Vec<ClockReason> = g.active_slowdowns().map(|r| r.reason).collect();
        assert_eq!(
            active,
            vec![ClockReason::SwPowerCap, ClockReason::HwThermalSlowdown]
        );
        let sw = g
            .clock_event_reasons
            .iter()
            .find(|r| r.reason == ClockReason::SwThermalSlowdown);
        assert_eq!(sw.unwrap().active, None);
        assert_eq!(g.clock_event_reasons[3].line, 17);
        let dbe: Vec<&EccCount> = g
            .ecc_errors
            .iter()
            .filter(|e| e.is_uncorrectable())
            .collect();
        assert_eq!(dbe.len(), 2);
        assert_eq!(dbe[1].path, "Volatile/Double Bit/Total");
        assert_eq!(dbe[1].value, Some(1));
        assert!(dbe[1].is_volatile());
        assert_eq!(g.span, LineSpan::new(9, 37));
        assert_eq!(q.gpus[1].temperature.gpu_c, Some(40.0));
        assert_eq!(
            summary(q),
            "2 GPU(s) NVIDIA A100-SXM4-80GB, driver 470.82.01; GPU temp 40–87 C; 1 GPU(s) slowed down"
        );
    }

    #[test]
    fn xml_form_reads_into_the_same_fields() {
        let text = "<?xml version=\"1.0\" ?>
<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v13.dtd\">
<nvidia_smi_log>
\t<timestamp>Mon Nov 30 00:10:32 2026</timestamp>
\t<driver_version>580.159.04</driver_version>
\t<attached_gpus>1</attached_gpus>
\t<gpu id=\"00000000:00:06.0\">
\t\t<product_name>NVIDIA H200</product_name>
\t\t<mig_devices>
\t\t\tNone
\t\t</mig_devices>
\t\t<clocks_event_reasons>
\t\t\t<clocks_event_reason_gpu_idle>Active</clocks_event_reason_gpu_idle>
\t\t\t<clocks_event_reason_hw_slowdown>Active</clocks_event_reason_hw_slowdown>
\t\t</clocks_event_reasons>
\t\t<temperature>
\t\t\t<gpu_temp>31 C</gpu_temp>
\t\t</temperature>
\t\t<gpu_power_readings>
\t\t\t<average_power_draw>77.68 W</average_power_draw>
\t\t\t<current_power_limit>700.00 W</current_power_limit>
\t\t</gpu_power_readings>
\t\t<empty/>
\t\t<name>A &amp; B</name>
\t</gpu>
</nvidia_smi_log>
";
        let p = parse(&lines_of(text));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let q = &p.value;
        assert!(q.xml);
        assert_eq!(q.timestamp_unix, Some(1_795_997_432));
        let g = &q.gpus[0];
        assert_eq!(g.bus_id, "00000000:00:06.0");
        assert_eq!(g.product_name.as_deref(), Some("NVIDIA H200"));
        assert_eq!(g.temperature.gpu_c, Some(31.0));
        assert_eq!(g.power.limit_w, Some(700.0));
        assert_eq!(
            g.active_slowdowns().next().unwrap().reason,
            ClockReason::HwSlowdown
        );
        assert_eq!(
            g.field(&[&["mig_devices"]]).unwrap().value.as_deref(),
            Some("None")
        );
        assert_eq!(
            g.field(&[&["name"]]).unwrap().value.as_deref(),
            Some("A & B")
        );
        // The XML read renders as text that reads back to the same values.
        let again = parse(&lines_of(&render(q)));
        assert!(again.warnings.is_empty(), "{:?}", again.warnings);
        assert_eq!(again.value.gpus[0].temperature.gpu_c, Some(31.0));
    }

    #[test]
    fn broken_xml_is_reported_not_misread() {
        let text = "<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n<gpu id=\"00000000:00:06.0\">\n<a>1</a><b>2</b>\n</nvidia_smi_log>\n";
        let p = parse(&lines_of(text));
        let kinds = p.warning_lines();
        assert_eq!(
            kinds,
            vec![
                (4, WarningKind::Unreadable),
                (5, WarningKind::Unreadable),
                (5, WarningKind::Truncated)
            ]
        );
    }

    #[test]
    fn xml_cut_inside_its_elements_is_partial_naming_the_closing_tags() {
        let head = "<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n<attached_gpus>1</attached_gpus>\n\
                    <gpu id=\"00000000:1A:00.0\">\n<product_name>NVIDIA A100</product_name>\n\
                    <temperature>\n<gpu_temp>44 C</gpu_temp>\n";
        let p = parse(&lines_of(head));
        let cut = p
            .value
            .partial
            .clone()
            .expect("elements left open: partial");
        assert_eq!(cut.reason, PartialReason::MissingFields);
        assert_eq!(
            cut.missing,
            ["`</temperature>`", "`</gpu>`", "`</nvidia_smi_log>`"]
        );
        assert_eq!(cut.line, 7);
        // What it shows is still read.
        assert_eq!(p.value.gpus.len(), 1);
        let whole = format!("{head}</temperature>\n</gpu>\n</nvidia_smi_log>\n");
        let p = parse(&lines_of(&whole));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert_eq!(p.value.partial, None);
    }

    #[test]
    fn xml_last_line_cut_inside_a_leaf_is_a_cut_line_not_an_unread_one() {
        let head = "<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n<gpu id=\"00000000:2B:00.0\">\n\
                    <product_name>NVIDIA L4</product_name>\n";
        for cut in ["<vbios_version>95.04", "<vbios_ver", "<serial>N/A</ser"] {
            let p = parse(&lines_of(&format!("{head}{cut}\n")));
            let at: Vec<_> = p
                .warnings
                .iter()
                .filter(|w| w.span.first_line == 5)
                .collect();
            assert!(
                at.iter().any(|w| w.kind == WarningKind::Truncated
                    && w.message.starts_with(crate::input::CUT_LINE)),
                "{cut}: {:?}",
                p.warnings
            );
            assert!(
                at.iter().all(|w| w.kind != WarningKind::Unreadable),
                "{cut}: {:?}",
                p.warnings
            );
            assert_eq!(p.value.gpus.len(), 1);
        }
        // The same line with more after it is no cut: unread.
        let p = parse(&lines_of(&format!(
            "{head}<vbios_version>95.04\n<uuid>GPU-1</uuid>\n"
        )));
        assert!(p
            .warnings
            .iter()
            .any(|w| w.span.first_line == 5 && w.kind == WarningKind::Unreadable));
        // Nor is a last line that opens no element.
        let p = parse(&lines_of(&format!("{head}<1 bad\n")));
        assert!(p
            .warnings
            .iter()
            .any(|w| w.span.first_line == 5 && w.kind == WarningKind::Unreadable));
    }

    #[test]
    fn junk_lines_warn_and_flattened_pastes_keep_top_level_values() {
        let text = "Timestamp : Mon Nov 30 00:10:31 2026\nDriver Version : 580.1\nGPU 00000000:00:06.0\nProduct Name : X\nthis is junk\n";
        let p = parse(&lines_of(text));
        assert_eq!(p.warnings.len(), 1);
        assert_eq!(p.warnings[0].span.first_line, 5);
        assert_eq!(p.value.gpus[0].product_name.as_deref(), Some("X"));
    }

    #[test]
    fn render_then_parse_gives_the_same_model() {
        let first = parse(&lines_of(OLD)).value;
        let again = parse(&lines_of(&render(&first)));
        assert!(again.warnings.is_empty(), "{:?}", again.warnings);
        let strip = |mut q: SmiQuery| {
            fn zero(fs: &mut [Field]) {
                for f in fs {
                    f.line = 0;
                    zero(&mut f.children);
                }
            }
            zero(&mut q.fields);
            for g in &mut q.gpus {
                zero(&mut g.fields);
                g.span = LineSpan::line(1);
                g.clock_event_reasons.iter_mut().for_each(|r| r.line = 0);
                g.ecc_errors.iter_mut().for_each(|e| e.line = 0);
                g.clock_event_counters.iter_mut().for_each(|c| c.line = 0);
            }
            q
        };
        assert_eq!(strip(first), strip(again.value));
    }

    #[test]
    fn deep_nesting_is_flattened_not_recursed() {
        fn depth(fs: &[Field]) -> usize {
            fs.iter().map(|f| 1 + depth(&f.children)).max().unwrap_or(0)
        }
        let text: String = (0..300)
            .map(|i| format!("{}k{i} : v\n", " ".repeat(i)))
            .collect();
        let p = parse(&lines_of(&text));
        // No banner, no GPU heading: read as a fragment of an unknown GPU.
        let kinds: Vec<WarningKind> = p.warnings.iter().map(|w| w.kind).collect();
        assert_eq!(kinds, [WarningKind::Truncated]);
        assert!(p.value.gpus[0].headerless);
        // Nested up to the cap (the root line and 33 levels below it), no deeper.
        assert_eq!(depth(&p.value.gpus[0].fields), MAX_DEPTH + 2);
        let xml: String = "<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n".to_owned()
            + &"<a>\n".repeat(300)
            + &"</a>\n".repeat(300)
            + "</nvidia_smi_log>\n";
        let p = parse(&lines_of(&xml));
        assert!(p.warnings.iter().any(|w| w.kind == WarningKind::Limit));
        assert!(depth(&p.value.fields) <= MAX_DEPTH + 2);
    }

    #[test]
    fn fragments_are_read_for_one_unknown_gpu() {
        // Starts inside `ECC Errors` (its heading and the GPU's missing),
        // ends on a key whose value was cut.
        let text = "            DRAM Uncorrectable            : 0
        Aggregate
            SRAM Correctable              : 0
    Clocks Event Reasons
        Idle                              : Active
        HW Slowdown                       : Not Active
    Temperature
        GPU Current Temp                  : 33 C
        Memory Max Operati
";
        let lines = lines_of(text);
        assert!(detect(&lines).is_some());
        let p = parse(&lines);
        let q = &p.value;
        assert!(q.fields.is_empty());
        assert_eq!(q.gpus.len(), 1);
        let g = &q.gpus[0];
        assert!(g.headerless && g.bus_id.is_empty());
        assert_eq!(g.temperature.gpu_c, Some(33.0));
        assert_eq!(g.clock_event_reasons.len(), 2);
        assert_eq!(g.active_slowdowns().count(), 0);
        // No `ECC Errors` heading: the counters are not lifted as ECC counts.
        assert!(g.ecc_errors.is_empty());
        let w = p.warning_lines();
        assert_eq!(
            w,
            [(1, WarningKind::Truncated), (9, WarningKind::Truncated)]
        );
        assert!(p.warnings[0].message.contains("nested block"));
        assert!(p.warnings[1].message.contains("Memory Max Operati"));
        assert!(summary(q).contains("unknown GPU"), "{}", summary(q));
        // Rendered without heading or banner, it reads back the same.
        let again = parse(&lines_of(&render(q))).value;
        assert_eq!(again.gpus[0].temperature.gpu_c, Some(33.0));
        assert!(again.gpus[0].headerless);

        // An empty value on the last line was cut, not zero.
        let cut = parse(&lines_of(
            "    ECC Errors\n        Volatile\n            SRAM Correctable : 0\n        Aggregate\n            SRAM Correctable :\n",
        ));
        let g = &cut.value.gpus[0];
        assert_eq!(g.ecc_errors.len(), 1);
        assert_eq!(g.ecc_errors[0].path, "Volatile/SRAM Correctable");
        assert!(cut
            .warnings
            .iter()
            .any(|w| w.kind == WarningKind::Truncated && w.span.first_line == 5));

        // XML from inside a `<gpu>` element, no prolog, no root, cut.
        let xml = "\t\t<clocks_event_reasons>\n\t\t\t<clocks_event_reason_gpu_idle>Active</clocks_event_reason_gpu_idle>\n\t\t\t<clocks_event_reason_hw_slowdown>Not Active</clocks_event_reason_hw_slowdown>\n\t\t</clocks_event_reasons>\n\t\t<clocks_event_reasons_counters>\n\t\t\t<clocks_event_reasons_counters_sw_power_cap>0 us</clocks_event_reasons_counters_sw_power_cap>\n";
        let lines = lines_of(xml);
        assert!(detect(&lines).is_some());
        let p = parse(&lines);
        let g = &p.value.gpus[0];
        assert!(p.value.xml && g.headerless);
        assert_eq!(g.clock_event_reasons.len(), 2);
        assert_eq!(g.clock_event_counters[0].microseconds, Some(0.0));
        let kinds: Vec<WarningKind> = p.warnings.iter().map(|w| w.kind).collect();
        assert_eq!(kinds, [WarningKind::Truncated, WarningKind::Truncated]);

        // XML from deeper inside: the elements it closes without opening
        // hold what came before (no unread line), and are read in place.
        let deeper = "\t\t\t\t<bridge_chip_fw>N/A</bridge_chip_fw>\n\t\t\t</pci_bridge_chip>\n\t\t\t<replay_counter>0</replay_counter>\n\t\t</pci>\n\t\t<fan_speed>30 %</fan_speed>\n\t\t<temperature>\n\t\t\t<gpu_temp>41 C</gpu_temp>\n\t\t</temperature>\n";
        let p = parse(&lines_of(deeper));
        assert!(
            p.warnings.iter().all(|w| w.kind != WarningKind::Unreadable),
            "{:?}",
            p.warnings
        );
        let g = &p.value.gpus[0];
        assert_eq!(g.temperature.gpu_c, Some(41.0));
        let pci = g
            .fields
            .iter()
            .find(|f| f.name == "pci")
            .expect("pci rebuilt");
        assert_eq!(pci.children.len(), 2, "{pci:?}");
        assert_eq!(pci.children[0].name, "pci_bridge_chip");

        // Prose after a fragment is not one of its fields.
        let p = parse(&lines_of(
            "Fabric\n    State                : Completed\n    CliqueId             : 0\n    ClusterUUID          : 0\nPreviously: PASSED\n",
        ));
        let g = &p.value.gpus[0];
        assert_eq!(g.fields.len(), 1);
        assert_eq!(g.fields[0].children.len(), 3);
        assert!(p
            .warnings
            .iter()
            .any(|w| w.kind == WarningKind::Unreadable && w.span.first_line == 5));

        // A whole output is not a fragment.
        assert!(!parse(&lines_of(OLD))
            .value
            .gpus
            .iter()
            .any(|g| g.headerless));
    }

    /// `nvidia-smi -q | grep -C3 CliqueId`: groups of context lines with
    /// grep's `--` between them (and after the last, when the paste stops
    /// there).
    const GREP_GROUPS: &str = "    Fabric
        State                             : Completed
        Status                            : Success
        CliqueId                          : 4
        Health
            Summary                       : Healthy
--
    Fabric
        State                             : In Progress
        Status                            : N/A
        CliqueId                          : 4
--
";

    #[test]
    fn grep_separators_are_not_cut_values_and_split_the_groups() {
        let p = parse(&lines_of(GREP_GROUPS));
        assert!(
            !p.warnings
                .iter()
                .any(|w| w.message.contains("`--`") && w.message.contains("without its value")),
            "{:?}",
            p.warnings
        );
        assert!(
            !p.warnings.iter().any(|w| w.kind == WarningKind::Unreadable),
            "{:?}",
            p.warnings
        );
        // Each group is a GPU of its own: grep does not say whose it is.
        let gpus = &p.value.gpus;
        assert_eq!(gpus.len(), 2, "{gpus:?}");
        assert!(gpus.iter().all(|g| g.headerless));
        let state = |g: &QueryGpu| {
            g.field(&[&["Fabric"], &["State"]])
                .and_then(|f| f.value.clone())
        };
        assert_eq!(state(&gpus[0]).as_deref(), Some("Completed"));
        assert_eq!(state(&gpus[1]).as_deref(), Some("In Progress"));
        assert_eq!(gpus[1].span.first_line, 8);
        assert!(gpus.iter().all(|g| g.fields.iter().all(|f| f.name != "--")));

        // Inside a GPU's block, the groups are still that GPU's.
        let text = format!(
            "GPU 00000000:1B:00.0\n    Product Name : NVIDIA H100 80GB HBM3\n--\n{GREP_GROUPS}"
        );
        let p = parse(&lines_of(&text));
        assert_eq!(p.value.gpus.len(), 1, "{:?}", p.value.gpus);
        let fabrics = p.value.gpus[0].fields.iter().filter(|f| f.name == "Fabric");
        assert_eq!(fabrics.count(), 2);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    }

    #[test]
    fn a_genuine_cut_after_grep_groups_is_still_said() {
        // A heading left without anything under it at the end is cut,
        // `--` or not before it.
        let text = format!("{GREP_GROUPS}    Fabric\n        State                             : Completed\n        Health\n");
        let p = parse(&lines_of(&text));
        assert!(
            p.warnings.iter().any(|w| w.kind == WarningKind::Truncated
                && w.message.contains("`Health` without its value")),
            "{:?}",
            p.warnings
        );
        // So is `--` written as a field's value: only the bare line is grep's.
        let p = parse(&lines_of(
            "    Fabric\n        State                             : Completed\n        CliqueId                          : 4\n        Status                            :\n",
        ));
        assert!(p
            .warnings
            .iter()
            .any(|w| w.kind == WarningKind::Truncated && w.span.first_line == 4));
    }

    #[test]
    fn fragment_detection_wants_query_fields() {
        let det = |t: &str| detect(&lines_of(t)).is_some();
        // The Fabric block alone.
        assert!(det("Fabric\n    State                             : Completed\n    Status                            : Insufficient Resources\n    CliqueId                          : 0\n"));
        // Padded `Key : value` lines that no `-q` prints (mlxlink).
        assert!(!det("State                           : Active\nPhysical state                  : LinkUp\nSpeed                           : IB-NDR\nWidth                           : 4x\n"));
        // ibstat's `Key: value` has no space before the colon.
        assert!(!det("Product Name: x\nFan Speed: 1\nCompute Mode: y\n"));
        // Too short to tell.
        assert!(!det("    Fan Speed                 : 27 %\n"));
        // XML of something else.
        assert!(!det("<html>\n<body>\n<p>x</p>\n"));
    }

    #[test]
    fn detection_is_specific() {
        assert!(detect(&lines_of("==============NVSMI LOG==============")).is_some());
        assert!(detect(&lines_of("Timestamp : x\nDriver Version : 1")).is_some());
        assert!(detect(&lines_of("Timestamp : x\nSomething : 1")).is_none());
        assert!(detect(&lines_of("GPU 00000000:00:06.0\n    Product Name : H200")).is_some());
        assert!(detect(&lines_of(
            "GPU 0: NVIDIA H200 (UUID: GPU-1)\nGPU 1: NVIDIA H200"
        ))
        .is_none());
        assert!(detect(&lines_of("GPU 00000000:00:06.0\nGPU 00000000:00:07.0")).is_none());
        assert!(detect(&lines_of("<?xml version=\"1.0\"?>\n<html>")).is_none());
        assert!(is_bus_id("0000:3b:00.0"));
        assert!(!is_bus_id("00000000:00:06"));
    }
}
