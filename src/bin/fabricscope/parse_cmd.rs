//! `fabricscope parse`: print what was read.

use crate::inputs::{gather, Input};
use crate::{Format, InputArgs};
use fabricscope::{read_bytes, Document, ReadOptions};
use serde::Serialize;
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
    let mut inputs = gather(&args.paths);
    if args.redact {
        redact_inputs(&mut inputs);
    }
    let mut documents = Vec::new();
    let mut errors = Vec::new();
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
    match args.format {
        Format::Json => print_json(&documents)?,
        Format::Text => print_text(&documents),
    }
    if !recognised {
        let lines: usize = documents.iter().map(|(_, d)| d.line_count).sum();
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
    let options = ReadOptions {
        default_host: input.host.clone(),
        ..ReadOptions::default()
    };
    let mut doc = read_bytes(bytes, &options).map_err(|e| e.to_string())?;
    if input.name != "-" {
        for s in &mut doc.sections {
            s.source.get_or_insert_with(|| input.name.clone());
        }
    }
    Ok(doc)
}

fn print_json(documents: &[(&Input, Document)]) -> Result<(), String> {
    let json = if let [(_, doc)] = documents {
        serde_json::to_string_pretty(doc)
    } else {
        let files: Vec<FileResult<'_>> = documents
            .iter()
            .map(|(i, d)| FileResult {
                input: &i.name,
                document: d,
            })
            .collect();
        serde_json::to_string_pretty(&serde_json::json!({ "files": files }))
    }
    .map_err(|e| e.to_string())?;
    outln!("{json}");
    Ok(())
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
