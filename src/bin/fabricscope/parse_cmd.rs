//! `fabricscope parse`: print what was read.
//!
//! Sections are printed as they are read, one at a time, not gathered into
//! a document first: a 12 MB pdsh paste of NVLink counters is 16 MB of
//! sections, more than the paste itself.

use crate::inputs::{gather, Input, InputOptions};
use crate::spool::Nested;
use crate::{Format, InputArgs};
use fabricscope::input::Decoded;
use fabricscope::{Document, ReadOptions, Section};
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

/// What was read of all inputs, for the exit status.
#[derive(Default)]
struct Tally {
    sections: usize,
    lines: usize,
}

pub fn run(args: &InputArgs) -> Result<ExitCode, String> {
    let (mut inputs, listing) = gather(&args.paths, &InputOptions::default());
    if args.redact {
        redact_inputs(&mut inputs);
    }
    let mut readable = Vec::new();
    let mut errors: Vec<String> = listing
        .problems
        .iter()
        .map(|p| format!("{}: {}", p.input, p.reason))
        .collect();
    for note in &listing.notes {
        eprintln!("fabricscope: {note}");
    }
    for input in &inputs {
        match prepare(input) {
            Ok(r) => readable.push((input, r)),
            Err(e) => errors.push(format!("{}: {e}", input.name)),
        }
    }
    for e in &errors {
        eprintln!("fabricscope: {e}");
    }
    let tally = match args.format {
        Format::Json => print_json(readable)?,
        Format::Text => print_text(readable),
    };
    if tally.sections == 0 {
        return Err(format!(
            "no output of a supported tool found in {} line(s) (supported: {})",
            tally.lines,
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

/// An input ready to be read: a saved document, or text.
enum Readable<'a> {
    Saved(Document),
    Text(Decoded<'a>),
}

/// Decides how an input is read, or why it cannot be.
fn prepare(input: &Input) -> Result<Readable<'_>, String> {
    let bytes = input.bytes.as_ref().map_err(Clone::clone)?;
    if let Some(saved) = document_from_json(bytes) {
        return saved
            .map(Readable::Saved)
            .map_err(|e| format!("JSON input: {e}"));
    }
    Decoded::new(bytes, &read_options(input))
        .map(Readable::Text)
        .map_err(|e| e.to_string())
}

fn read_options(input: &Input) -> ReadOptions {
    ReadOptions::default().with_default_host(input.host.clone())
}

/// Reads an input whole.
pub(crate) fn read_input(input: &Input) -> Result<Document, String> {
    Ok(read_whole(prepare(input)?, input))
}

/// Reads a prepared input whole: the document with its sections.
fn read_whole(readable: Readable<'_>, input: &Input) -> Document {
    let mut sections = Vec::new();
    let mut doc = read_each(readable, input, &mut |s| sections.push(s));
    doc.sections = sections;
    doc
}

/// Reads an input, handing each section to `each` as soon as it is read
/// (a saved document's as they were saved); returns the rest.
fn read_each(readable: Readable<'_>, input: &Input, each: &mut dyn FnMut(Section)) -> Document {
    match readable {
        Readable::Saved(mut doc) => {
            std::mem::take(&mut doc.sections).into_iter().for_each(each);
            doc
        }
        Readable::Text(decoded) => {
            let mut doc = decoded.read_each(&read_options(input), &mut |mut s| {
                if input.name != "-" {
                    s.source.get_or_insert_with(|| input.name.clone());
                }
                name_from_file_header(&mut s, input);
                each(s);
            });
            // A tool's failure outside any section names the file as a
            // section's lines do.
            if input.name != "-" {
                for m in &mut doc.messages {
                    m.source.get_or_insert_with(|| input.name.clone());
                }
            }
            doc
        }
    }
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
        all.last_prompt = all.last_prompt.max(d.last_prompt);
    }
    all
}

/// A section after a `==> node07/ibstat.txt <==` header (`tail` of several
/// files) that the text does not otherwise name is named after that file.
fn name_from_file_header(s: &mut Section, input: &Input) {
    let Some(source) = s.source.as_deref().filter(|src| *src != input.name) else {
        return;
    };
    if s.host.is_some() && s.host != input.host {
        return;
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

/// Any JSON output with the report shape's version in front.
#[derive(Serialize)]
struct Versioned<'a, T: Serialize> {
    schema_version: u32,
    #[serde(flatten)]
    inner: &'a T,
}

/// Writes the JSON to stdout as it is read and serialised: one input's
/// sections as they come (the text of a 12 MB paste's document is 75 MB,
/// its sections 16 MB in memory), several inputs' one input at a time.
///
/// The output is the pretty JSON of the whole: `{"schema_version", …}`
/// over one input's document, or `{"schema_version", "files": […]}` with
/// each input's object, whose keys have always been in sorted order (each
/// was made a `serde_json::Value` first).
fn print_json(readable: Vec<(&Input, Readable<'_>)>) -> Result<Tally, String> {
    let mut tally = Tally::default();
    let mut w = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let written = write_json(&mut w, readable, &mut tally).and_then(|()| {
        w.write_all(b"\n")?;
        w.flush()
    });
    match written {
        Ok(()) => Ok(tally),
        // `fabricscope parse … | head`: end quietly, as Unix filters do.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(format!("cannot write output: {e}")),
    }
}

fn write_json(
    w: &mut impl Write,
    mut readable: Vec<(&Input, Readable<'_>)>,
    tally: &mut Tally,
) -> std::io::Result<()> {
    match readable.pop() {
        Some((input, one)) if readable.is_empty() => write_one(w, input, one, tally),
        last => {
            readable.extend(last);
            write_files(w, readable, tally)
        }
    }
}

/// One input's document, its sections written as they are read.
fn write_one(
    w: &mut impl Write,
    input: &Input,
    one: Readable<'_>,
    tally: &mut Tally,
) -> std::io::Result<()> {
    let head = head_of(&versioned(&Document::default()), "sections")?;
    w.write_all(head.as_bytes())?;
    let mut list = NestedList::new(&mut *w);
    // A write that fails ends the writing; the reading goes on to its end.
    let mut written = Ok(());
    let rest = read_each(one, input, &mut |section| {
        tally.sections += 1;
        if written.is_ok() {
            written = list.push(&section);
        }
    });
    written?;
    list.end()?;
    tally.lines += rest.line_count;
    write_tail(w, &versioned(&rest), &head)
}

/// Several inputs' objects (or none), one input at a time.
fn write_files(
    w: &mut impl Write,
    readable: Vec<(&Input, Readable<'_>)>,
    tally: &mut Tally,
) -> std::io::Result<()> {
    let frame = versioned(&Files { files: [] });
    let head = head_of(&frame, "files")?;
    w.write_all(head.as_bytes())?;
    let mut list = NestedList::new(&mut *w);
    for (input, one) in readable {
        let document = read_whole(one, input);
        tally.sections += document.sections.len();
        tally.lines += document.line_count;
        let value = serde_json::to_value(FileResult {
            input: &input.name,
            document: &document,
        })?;
        list.push(&value)?;
    }
    list.end()?;
    write_tail(w, &frame, &head)
}

/// `inner` with the report shape's version in front.
fn versioned<T: Serialize>(inner: &T) -> Versioned<'_, T> {
    Versioned {
        schema_version: fabricscope::report::SCHEMA_VERSION,
        inner,
    }
}

/// The pretty JSON of `frame` up to the `[` of its top-level field `key`,
/// an empty list whose elements [`NestedList`] writes.
fn head_of(frame: &impl Serialize, key: &str) -> std::io::Result<String> {
    let text = serde_json::to_string_pretty(frame)?;
    let field = format!("\n  \"{key}\": [");
    let open = text
        .find(&field)
        .map(|at| at + field.len())
        .filter(|&at| text.get(at..at + 1) == Some("]"))
        .ok_or_else(|| std::io::Error::other(format!("no empty list {key} in the JSON frame")))?;
    Ok(text.get(..open).unwrap_or_default().to_owned())
}

/// Writes the pretty JSON of `frame` that follows `head` and the `]` of
/// its empty list: the rest of the output once the list's elements are
/// written. Streamed: a 12 MB paste's framing lines alone are 6 MB of it.
fn write_tail(w: &mut impl Write, frame: &impl Serialize, head: &str) -> std::io::Result<()> {
    let mut after = AfterPrefix {
        prefix: format!("{head}]").into_bytes(),
        seen: 0,
        inner: w,
    };
    // Buffered: the serialiser writes a token at a time.
    let mut buffered = std::io::BufWriter::new(&mut after);
    serde_json::to_writer_pretty(&mut buffered, frame)?;
    buffered.flush()?;
    drop(buffered);
    if after.seen < after.prefix.len() {
        return Err(std::io::Error::other("the JSON frame changed"));
    }
    Ok(())
}

/// Passes on what is written after `prefix`, which must come first.
struct AfterPrefix<W: Write> {
    prefix: Vec<u8>,
    /// How much of `prefix` has been written.
    seen: usize,
    inner: W,
}

impl<W: Write> Write for AfterPrefix<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let expected = self.prefix.get(self.seen..).unwrap_or_default();
        let skip = expected.len().min(buf.len());
        if buf.get(..skip) != expected.get(..skip) {
            return Err(std::io::Error::other("the JSON frame changed"));
        }
        self.seen += skip;
        self.inner.write_all(buf.get(skip..).unwrap_or_default())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The elements of a list that is the value of a top-level field, written
/// one at a time as `serde_json`'s pretty printer writes them there.
struct NestedList<W: Write> {
    w: W,
    written: usize,
}

impl<W: Write> NestedList<W> {
    fn new(w: W) -> Self {
        Self { w, written: 0 }
    }

    fn push(&mut self, item: &impl Serialize) -> std::io::Result<()> {
        let separator: &[u8] = if self.written == 0 { b"\n" } else { b",\n" };
        self.w.write_all(separator)?;
        self.w.write_all(b"    ")?;
        // Two levels deep: the root, then the list.
        let mut nested = serde_json::Serializer::with_formatter(&mut self.w, Nested::at(2));
        item.serialize(&mut nested)?;
        self.written += 1;
        Ok(())
    }

    /// Closes the list: `]` on its own line after elements, else `[]`.
    fn end(mut self) -> std::io::Result<()> {
        if self.written > 0 {
            self.w.write_all(b"\n  ")?;
        }
        self.w.write_all(b"]")
    }
}

/// The output of several inputs: `{"files": [...]}` (the frame of it:
/// the files are written one at a time).
#[derive(Serialize)]
struct Files {
    files: [(); 0],
}

fn print_text(readable: Vec<(&Input, Readable<'_>)>) -> Tally {
    let mut tally = Tally::default();
    let several = readable.len() > 1;
    for (input, one) in readable {
        if several {
            outln!("== {}", input.name);
        }
        let doc = read_each(one, input, &mut |s| {
            tally.sections += 1;
            print_section(&s);
        });
        tally.lines += doc.line_count;
        for u in &doc.unrecognised {
            outln!("{:<14} {}: {}", "unrecognised", u.span, u.reason);
        }
        for w in &doc.warnings {
            outln!("warning: {w}");
        }
    }
    tally
}

fn print_section(s: &Section) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every text input the tests keep, as the CLI would gather it.
    fn inputs() -> Vec<Input> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let (inputs, _) = gather(
            &[root.join("tests/fixtures"), root.join("examples")],
            &InputOptions::default(),
        );
        assert!(inputs.len() > 100, "only {} inputs", inputs.len());
        inputs
    }

    fn streamed(inputs: &[Input]) -> String {
        let readable = inputs
            .iter()
            .filter_map(|i| Some((i, prepare(i).ok()?)))
            .collect();
        let mut out = Vec::new();
        write_json(&mut out, readable, &mut Tally::default()).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// One input's JSON, written a section at a time, is the pretty JSON
    /// of its whole document.
    #[test]
    fn one_input_streamed_is_its_whole_document() {
        let mut with_sections = 0;
        for input in inputs() {
            let Ok(doc) = read_input(&input) else {
                continue;
            };
            with_sections += usize::from(!doc.sections.is_empty());
            let whole = serde_json::to_string_pretty(&versioned(&doc)).unwrap();
            assert_eq!(
                streamed(std::slice::from_ref(&input)),
                whole,
                "{}",
                input.name
            );
        }
        assert!(with_sections > 100, "only {with_sections} with sections");
    }

    /// Several inputs' JSON, written an input at a time, is the pretty
    /// JSON of all their objects, each with its keys sorted.
    #[test]
    fn several_inputs_streamed_are_the_whole_list() {
        #[derive(Serialize)]
        struct Whole {
            schema_version: u32,
            files: Vec<serde_json::Value>,
        }
        let inputs = inputs();
        for some in [&inputs[..3], &inputs[..]] {
            let files = some
                .iter()
                .filter_map(|input| {
                    let document = read_input(input).ok()?;
                    serde_json::to_value(FileResult {
                        input: &input.name,
                        document: &document,
                    })
                    .ok()
                })
                .collect();
            let whole = Whole {
                schema_version: fabricscope::report::SCHEMA_VERSION,
                files,
            };
            assert_eq!(
                streamed(some),
                serde_json::to_string_pretty(&whole).unwrap()
            );
        }
    }

    /// A list with no elements is written `[]`, as the pretty printer does.
    #[test]
    fn nothing_read_is_an_empty_list() {
        assert_eq!(
            streamed(&[]),
            serde_json::to_string_pretty(&versioned(&Files { files: [] })).unwrap()
        );
    }
}
