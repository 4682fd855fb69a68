//! `fabricscope parse`: print what was read.

use crate::inputs::{gather, Input, InputOptions};
use crate::{Format, InputArgs};
use fabricscope::{read_bytes, Document, ReadOptions};
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;

/// One input's result in the JSON output.
#[derive(Serialize)]
struct FileResult<'a> {
    /// The input's name.
    input: &'a str,
    #[serde(flatten)]
    document: &'a Document,
}

pub fn run(args: &InputArgs) -> Result<ExitCode, String> {
    let (mut inputs, listing) = gather(&args.paths, &InputOptions::default());
    if args.redact {
        redact_inputs(&mut inputs);
    }
    let mut documents = Vec::new();
    let mut errors: Vec<String> = listing
        .problems
        .iter()
        .map(|p| format!("{}: {}", p.input, p.reason))
        .collect();
    for note in &listing.notes {
        eprintln!("fabricscope: {note}");
    }
    for input in &inputs {
        match read_input(input) {
            Ok(doc) => documents.push((input, doc)),
            Err(e) => errors.push(format!("{}: {e}", input.name)),
        }
    }
    for e in &errors {
        eprintln!("fabricscope: {e}");
    }
    let recognised = documents.iter().any(|(_, d)| !d.sections.is_empty());
    let lines: usize = documents.iter().map(|(_, d)| d.line_count).sum();
    match args.format {
        Format::Json => print_json(&documents)?,
        Format::Text => print_text(&documents),
    }
    // The documents end with the process, not freed one link and counter
    // at a time first: for a 12 MB paste that was about 4 % of `parse`.
    std::mem::forget(documents);
    if !recognised {
        return Err(format!(
            "no output of a supported tool found in {lines} line(s) (supported: {})",
            fabricscope::parse::supported_formats().join(", ")
        ));
    }
    Ok(if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// `--redact`: replaces identifiers in every input, consistently across
/// inputs, before anything is read from them. Hosts are collected from all
/// inputs first, so a host named in one file is replaced in the others too.
fn redact_inputs(inputs: &mut [Input]) {
    let mut redactor = fabricscope::redact::Redactor::default();
    let texts: Vec<Option<String>> = inputs
        .iter()
        .map(|i| {
            i.bytes
                .as_ref()
                .ok()
                .map(|b| String::from_utf8_lossy(b).into_owned())
        })
        .collect();
    for (input, text) in inputs.iter().zip(&texts) {
        redactor.add_hosts(input.host.iter().cloned());
        if let Some(text) = text {
            redactor.add_hosts(fabricscope::redact::hosts_in(text));
        }
    }
    for (input, text) in inputs.iter_mut().zip(texts) {
        if let Some(text) = text {
            input.bytes = Ok(redactor.redact(&text).into_bytes());
        }
        input.host = input.host.as_deref().map(|h| redactor.redact(h));
        input.name = redactor.redact(&input.name);
    }
}

pub(crate) fn read_input(input: &Input) -> Result<Document, String> {
    let bytes = input.bytes.as_ref().map_err(Clone::clone)?;
    let options = ReadOptions::default().with_default_host(input.host.clone());
    if let Some(saved) = document_from_json(bytes) {
        return saved.map_err(|e| format!("JSON input: {e}"));
    }
    let mut doc = read_bytes(bytes, &options).map_err(|e| e.to_string())?;
    if input.name != "-" {
        for s in &mut doc.sections {
            s.source.get_or_insert_with(|| input.name.clone());
        }
    }
    name_from_file_headers(&mut doc, input);
    Ok(doc)
}

/// The document of a saved parse: the JSON `fabricscope parse --format json`
/// prints (one document, or `files` of several, joined into one: each
/// section keeps its `source`), or the `document(s)` of an analyze report.
/// `None` when the input is not such JSON (then it is read as text).
fn document_from_json(bytes: &[u8]) -> Option<Result<Document, String>> {
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace())?;
    if bytes.get(start) != Some(&b'{') {
        return None;
    }
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let one = |v: &serde_json::Value| {
        serde_json::from_value::<Document>(v.clone()).map_err(|e| e.to_string())
    };
    let many = |list: &serde_json::Value| -> Option<Result<Document, String>> {
        let docs: Result<Vec<Document>, String> = list.as_array()?.iter().map(one).collect();
        Some(docs.map(join))
    };
    if value.get("sections").is_some() {
        Some(one(&value))
    } else if let Some(doc) = value.get("document") {
        Some(one(doc))
    } else if let Some(files) = value.get("files") {
        many(files)
    } else {
        value.get("documents").and_then(many)
    }
}

/// Several saved documents as one.
fn join(docs: Vec<Document>) -> Document {
    let mut all = Document::default();
    for d in docs {
        all.sections.extend(d.sections);
        all.unrecognised.extend(d.unrecognised);
        all.warnings.extend(d.warnings);
        all.messages.extend(d.messages);
        all.framing.extend(d.framing);
        all.repairs.extend(d.repairs);
        all.line_count = all.line_count.max(d.line_count);
    }
    all
}

/// A section after a `==> node07/ibstat.txt <==` header (`tail` of several
/// files) that the text does not otherwise name is named after that file.
fn name_from_file_headers(doc: &mut Document, input: &Input) {
    for s in &mut doc.sections {
        let Some(source) = s.source.as_deref().filter(|src| *src != input.name) else {
            continue;
        };
        if s.host.is_some() && s.host != input.host {
            continue;
        }
        let mut dirs: Vec<String> = source.split('/').map(str::to_owned).collect();
        let file = dirs.pop().unwrap_or_default();
        let place = crate::naming::Place {
            root_name: String::new(),
            dirs,
            file,
        };
        let (names, _) =
            crate::naming::name_all(std::slice::from_ref(&place), &crate::naming::HostFrom::Auto);
        if let Some(n) = names
            .into_iter()
            .next()
            .filter(|n| !n.why.starts_with("no host-like"))
        {
            s.host = Some(n.host);
        }
    }
}

/// Any JSON output with the report shape's version in front.
#[derive(Serialize)]
struct Versioned<'a, T: Serialize> {
    schema_version: u32,
    #[serde(flatten)]
    inner: &'a T,
}

/// Writes the JSON straight to stdout as it is serialised: the text of a
/// 12 MB paste's document is 75 MB, and holding it in a `String` first (and
/// growing that string by doubling) doubled `parse`'s peak memory.
fn print_json(documents: &[(&Input, Document)]) -> Result<(), String> {
    let schema_version = fabricscope::report::SCHEMA_VERSION;
    let mut w = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let written = if let [(_, doc)] = documents {
        serde_json::to_writer_pretty(
            &mut w,
            &Versioned {
                schema_version,
                inner: doc,
            },
        )
    } else {
        serde_json::to_writer_pretty(
            &mut w,
            &Versioned {
                schema_version,
                inner: &Files {
                    files: EachAsValue(documents),
                },
            },
        )
    }
    .map_err(std::io::Error::from)
    .and_then(|()| {
        w.write_all(b"\n")?;
        w.flush()
    });
    match written {
        Ok(()) => Ok(()),
        // `fabricscope parse … | head`: end quietly, as Unix filters do.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(format!("cannot write output: {e}")),
    }
}

/// The output of several inputs: `{"files": [...]}`.
#[derive(Serialize)]
struct Files<'a> {
    files: EachAsValue<'a>,
}

/// Each input's result, serialised through a `serde_json::Value` one input
/// at a time: the output of several inputs has always had the keys of each
/// file's object in sorted order (it was built as one `Value` of all of
/// them), and keeps that shape without holding every file's tree at once.
struct EachAsValue<'a>(&'a [(&'a Input, Document)]);

impl Serialize for EachAsValue<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for (input, document) in self.0 {
            let value = serde_json::to_value(FileResult {
                input: &input.name,
                document,
            })
            .map_err(S::Error::custom)?;
            seq.serialize_element(&value)?;
        }
        seq.end()
    }
}

fn print_text(documents: &[(&Input, Document)]) {
    for (input, doc) in documents {
        if documents.len() > 1 {
            outln!("== {}", input.name);
        }
        for s in &doc.sections {
            let host = s
                .host
                .as_deref()
                .map(|h| format!(" host {h}"))
                .unwrap_or_default();
            outln!(
                "{:<14} {}{}: {}",
                s.kind.name(),
                s.span,
                host,
                s.data.summary()
            );
            for w in &s.warnings {
                outln!("    warning: {w}");
            }
            for m in &s.messages {
                outln!("    line {}: {}", m.line, m.text);
            }
        }
        for u in &doc.unrecognised {
            outln!("{:<14} {}: {}", "unrecognised", u.span, u.reason);
        }
        for w in &doc.warnings {
            outln!("warning: {w}");
        }
    }
}
