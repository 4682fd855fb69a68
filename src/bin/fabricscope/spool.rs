//! Measurements and findings of finished hosts kept on disk until the
//! report is written.
//!
//! A fleet's measurements are most of its JSON report (tens of MB per
//! 1,000 hosts); holding them all would make memory grow with the fleet.
//! Each unit's records are formatted as the pretty report prints them at
//! their depth and held in memory up to [`HELD_BYTES`], beyond which they
//! go to one temporary file per category; either way they are copied into
//! the report at the end as they are ([`Spooled`] serialises as
//! [`Measurements`] too, reading them back and parsing them).
//!
//! Findings ([`FindingSpool`]) are stored whole, formatted as the report
//! prints them (in memory up to [`FINDINGS_HELD_BYTES`], in a temporary
//! file beyond), while the analysis keeps a light copy for the fleet step
//! (sort, incidents, verdict); [`write_findings`] copies them into the
//! report in its order.

use fabricscope::report::measurements::{rate_sets, WritePretty};
use fabricscope::report::notable::Omitted;
use fabricscope::report::Incident;
use fabricscope::rules::Finding;
use fabricscope::stats::Measurements;
use serde::ser::{Error as _, SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};
use std::cell::RefCell;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

/// Records sit three levels deep in the report (root, `measurements`, the
/// category's array): the pretty printer indents them by six spaces.
const INDENT: &[u8] = b"\n      ";

/// The depth [`INDENT`] is, as the record writers take it.
const RECORD_DEPTH: usize = (INDENT.len() - 1) / 2;

/// Findings sit two levels deep (root, `findings`): four spaces.
const FINDING_INDENT: &[u8] = b"\n    ";

/// The depth [`FINDING_INDENT`] is, as [`Finding::write_pretty`] takes it.
const FINDING_DEPTH: usize = (FINDING_INDENT.len() - 1) / 2;

/// A temporary file, removed when dropped.
pub struct TempFile {
    path: PathBuf,
    writer: Option<BufWriter<File>>,
}

impl TempFile {
    /// A new empty file in the system's temporary directory.
    pub fn new(what: &str) -> std::io::Result<Self> {
        let path = temp_path(what);
        let writer = BufWriter::with_capacity(1 << 16, File::create(&path)?);
        Ok(Self {
            path,
            writer: Some(writer),
        })
    }

    /// Where to write.
    pub fn writer(&mut self) -> std::io::Result<&mut BufWriter<File>> {
        self.writer
            .as_mut()
            .ok_or_else(|| std::io::Error::other("temporary file already closed"))
    }

    /// Finishes writing and opens the file for reading.
    pub fn read_back(&mut self) -> std::io::Result<File> {
        if let Some(mut w) = self.writer.take() {
            w.flush()?;
        }
        File::open(&self.path)
    }

    /// Copies everything written to `out`.
    pub fn copy_to(&mut self, out: &mut dyn Write) -> std::io::Result<()> {
        if let Some(mut w) = self.writer.take() {
            w.flush()?;
        }
        let mut file = File::open(&self.path)?;
        copy_file(&mut file, out)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        self.writer = None;
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A fresh path in the system's temporary directory.
fn temp_path(what: &str) -> PathBuf {
    static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    std::env::temp_dir().join(format!(
        "fabricscope-{}-{stamp}-{n}-{what}.tmp",
        std::process::id()
    ))
}

/// Findings kept whole, one record each as the report prints it, read back
/// by the id [`store`](Self::store) gave them: in memory up to
/// [`FINDINGS_HELD_BYTES`], all on disk beyond.
pub struct FindingSpool {
    /// The records while they are held in memory (none once they went to
    /// `file`).
    held: HeldRecords,
    /// How many bytes of records may be held before they go to `file`.
    held_limit: usize,
    /// Where the records went once they outgrew `held_limit`.
    file: Option<TempFile>,
    /// Where each record starts; the last entry is the end of the records.
    offsets: Vec<u64>,
    record: Vec<u8>,
    reader: Option<File>,
    /// Parts of the file read last: the report asks for the findings in
    /// an order close to the one they were stored in (by severity, then
    /// host), so most are read from here rather than with a read each.
    windows: RefCell<Windows>,
}

/// Bytes of the findings file from `start` on.
#[derive(Default)]
struct Window {
    start: u64,
    /// Room for the largest window read yet; the window is its first `len`.
    bytes: Vec<u8>,
    len: usize,
    /// Bytes of records read from it: few mean the report is asking for
    /// findings far apart, and the next window is read smaller.
    served: usize,
    /// When it was last read from ([`Windows::tick`]).
    used: u64,
}

/// A few windows on the findings file, one per run of findings the report
/// reads in turn. The report reads the findings of one severity and host
/// from several places at once: the host's unit and, near the end of the
/// file, each fleet rule's findings about it (stored after every unit's).
/// With one window, each turn from one place to another read a window
/// again: a 1,000-host fleet made 13,000 reads of 77 MB from its 23 MB
/// findings file; with a window per place, each place is read ahead.
#[derive(Default)]
struct Windows {
    list: Vec<Window>,
    /// Counts reads from the windows: the least recently used is reused.
    tick: u64,
}

/// Windows kept on the findings file: more than the places the report
/// reads from at once (a unit and the fleet rules' findings of a host:
/// a dozen and more places on a fleet), 2 MiB at most.
const WINDOWS: usize = 32;

/// How much of the findings file is read at once, while the findings the
/// report asks for lie close together.
const WINDOW: u64 = 1 << 16;

/// The least read at once where they do not: the report asks for the
/// findings worst first, and a severity that few findings have takes one
/// from here and there (a 1,000-host fleet read its 19 MB findings file
/// 25 times over, in full windows of which one record each was used).
const SPARSE_WINDOW: u64 = 1 << 12;

/// Copies `from` to `to` in 128 KiB reads: `std::io::copy` from a plain
/// file into a `dyn Write` reads 8 KiB at a time (a 60 MB spool file took
/// 7,500 reads); from a `BufReader` it reads into the reader's buffer.
fn copy_file(from: &mut File, to: &mut dyn Write) -> std::io::Result<()> {
    let mut reader = std::io::BufReader::with_capacity(1 << 17, from);
    std::io::copy(&mut reader, to).map(drop)
}

/// How many bytes of findings a [`FindingSpool`] holds in memory before it
/// moves them all to a file in the system's temporary directory and writes
/// every further one there.
///
/// Held, a record is copied once into the heap and once into the report.
/// On disk it was also written into the page cache, read back at the end
/// of the run (the single-threaded part) and its pages dropped when the
/// file went: 9.6 MB of findings at 1,000 generated hosts. The limit keeps
/// memory flat beyond it (about 1,700 such hosts): a spool that moved its
/// findings to disk lets go of what it held long before the fleet step,
/// where a run's memory peaks.
const FINDINGS_HELD_BYTES: usize = 16 << 20;

impl FindingSpool {
    /// An empty spool, holding its findings in memory up to
    /// [`FINDINGS_HELD_BYTES`], in the system's temporary directory beyond.
    pub fn new() -> Self {
        Self::holding(FINDINGS_HELD_BYTES)
    }

    /// [`FindingSpool::new`], moving its findings to a file once they
    /// would be more than `held_limit` bytes.
    fn holding(held_limit: usize) -> Self {
        Self {
            held: HeldRecords::default(),
            held_limit,
            file: None,
            offsets: vec![0],
            record: Vec::new(),
            reader: None,
            windows: RefCell::default(),
        }
    }

    /// Writes `finding` (fingerprinted), formatted as the pretty report
    /// prints an element of its `findings` ([`Finding::write_pretty`]), so
    /// that writing the report copies it ([`write_findings`]); returns its id.
    pub fn store(&mut self, finding: &Finding) -> std::io::Result<u64> {
        self.record.clear();
        finding.write_pretty(FINDING_DEPTH, &mut self.record);
        let record = std::mem::take(&mut self.record);
        let id = self.store_record(&record);
        self.record = record;
        id
    }

    /// Writes one record formatted as [`store`](Self::store) formats a
    /// finding (by [`RenderedFindings`], on a unit's thread); returns its id.
    pub fn store_record(&mut self, record: &[u8]) -> std::io::Result<u64> {
        match self.file.as_mut() {
            Some(file) => file.writer()?.write_all(record)?,
            None if self.held.len() + record.len() > self.held_limit => {
                let mut file = TempFile::new("findings")?;
                let w = file.writer()?;
                std::mem::take(&mut self.held).write_to(w)?;
                w.write_all(record)?;
                self.file = Some(file);
            }
            None => self.held.push(record),
        }
        let start = self.offsets.last().copied().unwrap_or(0);
        let id = self.offsets.len() as u64 - 1;
        self.offsets.push(start + record.len() as u64);
        Ok(id)
    }

    /// The id the next record stored will get.
    pub fn next_id(&self) -> u64 {
        self.offsets.len() as u64 - 1
    }

    /// Finishes writing: records can be read from now on.
    pub fn finish(&mut self) -> std::io::Result<()> {
        if let (None, Some(file)) = (self.reader.as_ref(), self.file.as_mut()) {
            self.reader = Some(file.read_back()?);
        }
        Ok(())
    }

    /// Where the records are read from: the file once they went there.
    fn records(&self) -> Records<'_> {
        match (self.file.as_ref(), self.reader.as_ref()) {
            (None, _) => Records::Held(&self.held),
            (Some(_), reader) => Records::File(reader),
        }
    }

    /// The text of the finding stored under `id`, into `buffer`.
    #[cfg(test)]
    fn read_raw(&self, id: u64, buffer: &mut Vec<u8>) -> std::io::Result<()> {
        self.with_raw(id, |record| {
            buffer.clear();
            buffer.extend_from_slice(record);
        })
    }

    /// Hands the text of the finding stored under `id` to `use_record`,
    /// straight from the window it was read into (copying a fleet's
    /// findings into the report then copies each once, not twice).
    fn with_raw<R>(&self, id: u64, use_record: impl FnOnce(&[u8]) -> R) -> std::io::Result<R> {
        self.records().read(
            &self.offsets,
            &mut self.windows.borrow_mut(),
            id,
            use_record,
        )
    }

    /// A reader of the findings' messages with windows of its own, for
    /// another thread to read beside this spool (after
    /// [`finish`](Self::finish)).
    pub fn titles(&self) -> std::io::Result<Titles<'_>> {
        let records = self.records();
        if let Records::File(None) = records {
            return Err(std::io::Error::other("the findings spool is not finished"));
        }
        Ok(Titles {
            records,
            offsets: &self.offsets,
            windows: Windows::default(),
        })
    }
}

/// Records held in memory, one after the other, in blocks of about
/// [`BLOCK`] bytes that never move as they grow: no record straddles two
/// blocks. (One vector that doubled as it grew copied what it held at each
/// step, into fresh pages the kernel had to fault in and clear.)
struct HeldRecords {
    /// How large a new block is made (a record larger makes its own).
    block: usize,
    blocks: Vec<Vec<u8>>,
    /// Where each block starts among all the records' bytes.
    starts: Vec<usize>,
    /// Bytes of records held.
    len: usize,
}

impl Default for HeldRecords {
    fn default() -> Self {
        Self::in_blocks_of(BLOCK)
    }
}

impl HeldRecords {
    /// No records, to be held in blocks of `block` bytes.
    fn in_blocks_of(block: usize) -> Self {
        Self {
            block,
            blocks: Vec::new(),
            starts: Vec::new(),
            len: 0,
        }
    }

    /// Appends `record`: to the last block, or to a new one when it does
    /// not fit there.
    fn push(&mut self, record: &[u8]) {
        let room = self.blocks.last().map_or(0, |b| b.capacity() - b.len());
        if room < record.len() {
            self.blocks
                .push(Vec::with_capacity(self.block.max(record.len())));
            self.starts.push(self.len);
        }
        if let Some(block) = self.blocks.last_mut() {
            block.extend_from_slice(record);
        }
        self.len += record.len();
    }

    /// Bytes of records held.
    fn len(&self) -> usize {
        self.len
    }

    /// The bytes from `start` to `end` (of all the records'), if they are
    /// held and in one block (as every record is).
    fn get(&self, start: usize, end: usize) -> Option<&[u8]> {
        if start == end {
            return Some(&[]);
        }
        let i = self
            .starts
            .partition_point(|&s| s <= start)
            .checked_sub(1)?;
        let base = *self.starts.get(i)?;
        self.blocks
            .get(i)?
            .get(start - base..end.checked_sub(base)?)
    }

    /// Writes every record held, in order.
    fn write_to(&self, w: &mut dyn Write) -> std::io::Result<()> {
        self.blocks.iter().try_for_each(|b| w.write_all(b))
    }

    /// All the records held, as one vector.
    fn concat(&self) -> Vec<u8> {
        self.blocks.concat()
    }
}

/// Where a [`FindingSpool`]'s records are read from.
#[derive(Clone, Copy)]
enum Records<'a> {
    /// In memory.
    Held(&'a HeldRecords),
    /// In its file (nothing before the spool is finished).
    File(Option<&'a File>),
}

impl Records<'_> {
    /// Hands the text of the record `id` (records ending at `offsets`,
    /// after a first 0) to `use_record`: from memory, or from one of
    /// `windows` on the file ([`read_record`]).
    fn read<R>(
        self,
        offsets: &[u64],
        windows: &mut Windows,
        id: u64,
        use_record: impl FnOnce(&[u8]) -> R,
    ) -> std::io::Result<R> {
        match self {
            Records::Held(held) => {
                let i = usize::try_from(id).map_err(std::io::Error::other)?;
                let at = |offset: Option<&u64>| offset.and_then(|&o| usize::try_from(o).ok());
                let record = at(offsets.get(i))
                    .zip(at(offsets.get(i + 1)))
                    .and_then(|(start, end)| held.get(start, end))
                    .ok_or_else(|| std::io::Error::other(format!("no stored finding {id}")))?;
                Ok(use_record(record))
            }
            Records::File(Some(file)) => read_record(file, offsets, windows, id, use_record),
            Records::File(None) => Err(std::io::Error::other(format!("no stored finding {id}"))),
        }
    }
}

/// The messages of a finished [`FindingSpool`]'s findings, read through
/// windows of the reader's own: [`write_incidents`] reads the incidents'
/// titles on one thread while the findings are copied on another.
pub struct Titles<'a> {
    records: Records<'a>,
    offsets: &'a [u64],
    windows: Windows,
}

impl Titles<'_> {
    /// The message of the finding stored under `id`, read from its record
    /// where it lies in memory or in the window.
    fn message(&mut self, id: u64) -> std::io::Result<String> {
        self.records
            .read(self.offsets, &mut self.windows, id, record_message)?
    }
}

/// Hands the text of the record `id` of `file` (records ending at
/// `offsets`, after a first 0) to `use_record`, from one of `windows` or
/// read into one.
fn read_record<R>(
    file: &File,
    offsets: &[u64],
    windows: &mut Windows,
    id: u64,
    use_record: impl FnOnce(&[u8]) -> R,
) -> std::io::Result<R> {
    let i = usize::try_from(id).map_err(std::io::Error::other)?;
    let (Some(&start), Some(&end), Some(&file_end)) =
        (offsets.get(i), offsets.get(i + 1), offsets.last())
    else {
        return Err(std::io::Error::other(format!("no stored finding {id}")));
    };
    windows.tick += 1;
    let tick = windows.tick;
    let end_of = |w: &Window| w.start + w.len as u64;
    let hit = windows
        .list
        .iter()
        .position(|w| start >= w.start && end <= end_of(w));
    let i = match hit {
        Some(i) => i,
        None => {
            // The window whose run this record goes on with (it starts
            // in or a little after the window), read again from it at
            // twice the size the window gave, within bounds: about as
            // far ahead as the report has been reading there. Any other
            // record starts a run: read small, in an unused window or
            // the least recently used one.
            let going_on = windows
                .list
                .iter()
                .position(|w| start >= w.start && start <= end_of(w) + WINDOW);
            let (i, size) = match going_on {
                Some(i) => {
                    let served = windows.list.get(i).map_or(0, |w| w.served);
                    let size = u64::try_from(served)
                        .unwrap_or(u64::MAX)
                        .saturating_mul(2)
                        .clamp(SPARSE_WINDOW, WINDOW);
                    (i, size)
                }
                None if windows.list.len() < WINDOWS => {
                    windows.list.push(Window::default());
                    (windows.list.len() - 1, SPARSE_WINDOW)
                }
                None => {
                    let lru = windows
                        .list
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, w)| w.used)
                        .map_or(0, |(i, _)| i);
                    (lru, SPARSE_WINDOW)
                }
            };
            // A quarter of it before the record: the report reads a
            // host's findings in another order than its unit stored
            // them (by subject), a little back and forth.
            let from = start.saturating_sub(size / 4);
            let len = usize::try_from((end - from).max(size).min(file_end - from))
                .map_err(std::io::Error::other)?;
            let window = windows
                .list
                .get_mut(i)
                .ok_or_else(|| std::io::Error::other("findings window"))?;
            // The buffer only grows: a large window after a small one
            // does not zero it again.
            if window.bytes.len() < len {
                window.bytes.resize(len, 0);
            }
            let part = window
                .bytes
                .get_mut(..len)
                .ok_or_else(|| std::io::Error::other("findings window"))?;
            read_exact_at(file, part, from)?;
            window.start = from;
            window.len = len;
            window.served = 0;
            i
        }
    };
    let window = windows
        .list
        .get_mut(i)
        .ok_or_else(|| std::io::Error::other("findings window"))?;
    window.used = tick;
    window.served = window
        .served
        .saturating_add(usize::try_from(end - start).unwrap_or(usize::MAX));
    let at = |offset: u64| usize::try_from(offset - window.start).unwrap_or(usize::MAX);
    let record = window
        .bytes
        .get(..window.len)
        .and_then(|b| b.get(at(start)..at(end)))
        .ok_or_else(|| std::io::Error::other(format!("stored finding {id} is cut")))?;
    Ok(use_record(record))
}

/// Fills `buffer` from `file` at `offset`: one `pread` where the platform
/// has it, instead of a seek and a read.
#[cfg(unix)]
fn read_exact_at(file: &File, buffer: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buffer, offset)
}

#[cfg(not(unix))]
fn read_exact_at(mut file: &File, buffer: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(offset))?;
    std::io::Read::read_exact(&mut file, buffer)
}

/// The `message` of a finding record as [`FindingSpool::store`] formats
/// it: only that string is parsed, found by its key at the depth of the
/// record's own fields (a newline and six spaces: no string holds a raw
/// newline, and nested fields sit deeper), rather than the whole record
/// (skipping its evidence was most of reading an incident's title back).
fn record_message(record: &[u8]) -> std::io::Result<String> {
    use serde::Deserialize;
    const KEY: &[u8] = b"\n      \"message\": ";
    // Found among the record's line starts (a dozen before the message),
    // not compared at every byte.
    let at = memchr::memchr_iter(b'\n', record)
        .find(|&at| record.get(at..).is_some_and(|rest| rest.starts_with(KEY)));
    let Some(at) = at else {
        return record_message_parsed(record);
    };
    let value = record.get(at + KEY.len()..).unwrap_or_default();
    let mut de = serde_json::Deserializer::from_slice(value);
    Ok(String::deserialize(&mut de)?)
}

/// [`record_message`] by parsing the whole record: for a record laid out
/// otherwise, and the test oracle.
fn record_message_parsed(record: &[u8]) -> std::io::Result<String> {
    /// Only the message is read (the rest of the record is skipped).
    #[derive(serde::Deserialize)]
    struct Message {
        message: String,
    }
    let record: Message = serde_json::from_slice(record)?;
    Ok(record.message)
}

/// A unit's findings formatted as [`FindingSpool::store`] would format
/// them, each record's end in `ends`: done on the unit's own thread, so the
/// one thread folding units in order only copies the bytes
/// ([`FindingSpool::store_record`]).
#[derive(Debug, Default)]
pub struct RenderedFindings {
    text: Vec<u8>,
    ends: Vec<usize>,
}

impl RenderedFindings {
    /// Formats `findings` (fingerprinted: stored as the report prints them).
    pub fn of(findings: &[Finding]) -> Self {
        let mut out = Self {
            text: Vec::with_capacity(findings.len() * 1024),
            ends: Vec::with_capacity(findings.len()),
        };
        for f in findings {
            f.write_pretty(FINDING_DEPTH, &mut out.text);
            out.ends.push(out.text.len());
        }
        out
    }

    /// How many findings were formatted.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The record of the `i`-th finding.
    pub fn record(&self, i: usize) -> &[u8] {
        let start = i
            .checked_sub(1)
            .and_then(|p| self.ends.get(p))
            .copied()
            .unwrap_or(0);
        let end = self.ends.get(i).copied().unwrap_or(start);
        self.text.get(start..end).unwrap_or_default()
    }
}

/// Writes the report's `incidents` value as the pretty printer does, with
/// the titles light copies left empty read back from the headline's stored
/// finding; written by hand ([`Incident::write_pretty`]) into a buffer that
/// goes out 64 KiB at a time. [`StoredIncidents`] serialising was the
/// oracle.
pub fn write_incidents(
    incidents: &[Incident],
    ids: &[Option<u64>],
    titles: &mut Titles<'_>,
    w: &mut dyn Write,
) -> std::io::Result<()> {
    if incidents.is_empty() {
        return w.write_all(b"[]");
    }
    let mut out = Vec::with_capacity(1 << 17);
    for (i, incident) in incidents.iter().enumerate() {
        out.extend_from_slice(if i == 0 { b"[" } else { b"," });
        out.extend_from_slice(FINDING_INDENT);
        let headline = incident.findings.first();
        let title = match headline.and_then(|&h| ids.get(h).copied().flatten()) {
            Some(id) if incident.title.is_empty() => Some(titles.message(id)?),
            _ => None,
        };
        // Incidents sit two levels deep (root, `incidents`), as findings do.
        incident.write_pretty(2, title.as_deref(), &mut out);
        if out.len() >= 1 << 16 {
            w.write_all(&out)?;
            out.clear();
        }
    }
    out.extend_from_slice(b"\n  ]");
    w.write_all(&out)
}

/// Chunks of the report written ahead on another thread, held at most
/// [`AHEAD_CHUNKS`] at a time: what [`ahead`] writes.
pub type Ahead = std::sync::mpsc::Receiver<Vec<u8>>;

/// Chunks [`ahead`] holds before its writer waits: the writers of the
/// report's parts write 64 KiB at a time, so a few MiB.
const AHEAD_CHUNKS: usize = 64;

/// Runs `write` on a thread of `scope`, its output held in chunks until
/// [`copy_ahead`] copies them out: a part of the report (the incidents)
/// is formatted while the parts before it (the findings) are written. The
/// writer waits while [`AHEAD_CHUNKS`] chunks are held, and stops with an
/// error when the receiver is gone.
pub fn ahead<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()> + Send + 'scope,
) -> (
    Ahead,
    std::thread::ScopedJoinHandle<'scope, std::io::Result<()>>,
) {
    /// Sends each write as a chunk.
    struct Chunks(std::sync::mpsc::SyncSender<Vec<u8>>);
    impl Write for Chunks {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .send(buf.to_vec())
                .map_err(|_| std::io::Error::other("the report's writer is gone"))?;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let (send, receive) = std::sync::mpsc::sync_channel(AHEAD_CHUNKS);
    let thread = scope.spawn(move || write(&mut Chunks(send)));
    (receive, thread)
}

/// Copies to `w` what [`ahead`]'s `write` wrote, then hands back its
/// result.
pub fn copy_ahead(
    (chunks, thread): (
        Ahead,
        std::thread::ScopedJoinHandle<'_, std::io::Result<()>>,
    ),
    w: &mut dyn Write,
) -> std::io::Result<()> {
    for chunk in &chunks {
        w.write_all(&chunk)?;
    }
    thread
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// A report's incidents, with the titles light copies left empty read back
/// from the headline's stored finding: serialises as the report's
/// `incidents` (through `serde`, a clone of each incident whose title is
/// read back: the oracle of [`write_incidents`]).
#[cfg(test)]
struct StoredIncidents<'a> {
    /// The report's incidents.
    incidents: &'a [Incident],
    /// The store id of each of the report's findings.
    ids: &'a [Option<u64>],
    /// Where they are stored.
    spool: &'a FindingSpool,
}

#[cfg(test)]
impl Serialize for StoredIncidents<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.incidents.len()))?;
        let mut titles = self.spool.titles().map_err(S::Error::custom)?;
        for incident in self.incidents {
            let headline = incident.findings.first();
            match headline.and_then(|&h| self.ids.get(h).copied().flatten()) {
                Some(id) if incident.title.is_empty() => {
                    let mut titled = incident.clone();
                    titled.title = titles.message(id).map_err(S::Error::custom)?;
                    seq.serialize_element(&titled)?;
                }
                _ => seq.serialize_element(incident)?,
            }
        }
        seq.end()
    }
}

/// One category: its records, each after its separator and indent (as
/// they are copied into the report), and how many there are.
struct Category {
    /// What its file is called after.
    name: &'static str,
    /// The records, in memory while the spool holds them there.
    held: HeldRecords,
    /// Where the records went once the spool spilled ([`Spool::spill`]).
    file: Option<CategoryFile>,
    count: usize,
}

/// A category's temporary file.
struct CategoryFile {
    path: PathBuf,
    writer: Option<BufWriter<File>>,
}

impl Category {
    /// Appends one record: to the file once there is one (nothing once it
    /// is closed), else to the last block in memory or a new one.
    fn append(&mut self, record: &[u8]) -> std::io::Result<()> {
        match self.file.as_mut() {
            Some(file) => match file.writer.as_mut() {
                Some(w) => w.write_all(record)?,
                None => return Ok(()),
            },
            None => self.held.push(record),
        }
        self.count += 1;
        Ok(())
    }

    /// Bytes of records held in memory.
    fn held_bytes(&self) -> usize {
        self.held.len()
    }

    /// Moves the records held in memory to a new temporary file, to which
    /// further records are written.
    fn spill(&mut self) -> std::io::Result<()> {
        if self.file.is_some() {
            return Ok(());
        }
        let path = temp_path(self.name);
        let mut writer = BufWriter::with_capacity(1 << 16, File::create(&path)?);
        // Made at once: dropping the spool removes it, whatever fails.
        let file = self.file.insert(CategoryFile { path, writer: None });
        std::mem::take(&mut self.held).write_to(&mut writer)?;
        file.writer = Some(writer);
        Ok(())
    }
}

/// The size of the blocks records are held in ([`HeldRecords`]).
const BLOCK: usize = 1 << 20;

/// How many bytes of records the spool holds in memory before it moves
/// them all to files and writes every further record there.
///
/// Held in memory, a record is copied once into the heap and once into the
/// report. Spooled to a file, it was also written into the page cache,
/// copied from there into the report at the end of the run (on one thread,
/// while the other core idled) and its pages dropped when the file went:
/// at 1,000 generated hosts (21 MB of notable records), 3 % of the run's
/// wall time. The limit keeps memory flat beyond it: a fleet whose records
/// outgrow it (about 1,500 such hosts, or fewer with `--measurements
/// all`) spills, its peak higher by at most this much.
const HELD_BYTES: usize = 32 << 20;

/// The spooled measurements of every unit so far, in unit order.
pub struct Spool {
    categories: Vec<Category>,
    buffer: Vec<u8>,
    /// How many bytes of records may be held before the spool spills.
    held_limit: usize,
    /// The findings, when they are stored too.
    pub findings: Option<FindingSpool>,
    /// The store id of each of the report's findings (see
    /// [`fabricscope::analyze::Analysis::finish_storing`]).
    pub finding_ids: Vec<Option<u64>>,
    /// Whether only the notable records are spooled
    /// ([`fabricscope::report::notable`]).
    notable: bool,
    /// What the units' sifting left out so far.
    pub omitted: Omitted,
}

/// The categories, in the order [`Measurements`] serialises them.
const NAMES: [&str; 10] = [
    "snapshots",
    "link_capacities",
    "counter_rates",
    "throughput",
    "saturated_counters",
    "bit_error_rates",
    "peer_groups",
    "traffic_balance",
    "trends",
    "notes",
];

impl Spool {
    /// A spool holding its records in memory up to [`HELD_BYTES`], in
    /// temporary files in the system's temporary directory beyond;
    /// `findings`: findings are stored too ([`FindingSpool`]); `notable`:
    /// only the notable measurements.
    pub fn new(findings: bool, notable: bool) -> std::io::Result<Self> {
        Self::holding(findings, notable, HELD_BYTES)
    }

    /// [`Spool::new`], spilling to files once more than `held_limit`
    /// bytes of records are held.
    fn holding(findings: bool, notable: bool, held_limit: usize) -> std::io::Result<Self> {
        let categories = NAMES
            .iter()
            .map(|&name| Category {
                name,
                held: HeldRecords::default(),
                file: None,
                count: 0,
            })
            .collect();
        Ok(Self {
            categories,
            buffer: Vec::new(),
            held_limit,
            findings: if findings {
                Some(FindingSpool::new())
            } else {
                None
            },
            finding_ids: Vec::new(),
            notable,
            omitted: Omitted::default(),
        })
    }

    /// Appends one unit's records (numbered as in the whole run), only the
    /// notable ones when the spool was made for those: `sifted` says what
    /// sifting them already left out, or they are sifted here.
    pub fn add(&mut self, mut m: Measurements, sifted: Option<Omitted>) -> std::io::Result<()> {
        if self.notable {
            self.omitted
                .add(sifted.unwrap_or_else(|| fabricscope::report::notable::keep_notable(&mut m)));
        }
        // The records most of a report is, written without serde.
        self.write_pretty(0, &m.snapshots)?;
        self.write(1, &m.link_capacities)?;
        self.write_pretty(2, rate_sets(&m.counter_rates))?;
        self.write_pretty(3, &m.throughput)?;
        self.write(4, &m.saturated_counters)?;
        self.write(5, &m.bit_error_rates)?;
        self.write_pretty(6, &m.peer_groups)?;
        self.write(7, &m.traffic_balance)?;
        self.write(8, &m.trends)?;
        self.write(9, &m.notes)?;
        if self.held_bytes() > self.held_limit {
            // Every category to a file of its own: the spool holds no
            // record in memory from then on.
            for c in &mut self.categories {
                c.spill()?;
            }
        }
        Ok(())
    }

    /// Bytes of records held in memory ([`HELD_BYTES`]).
    fn held_bytes(&self) -> usize {
        self.categories.iter().map(Category::held_bytes).sum()
    }

    fn write<T: Serialize>(
        &mut self,
        category: usize,
        records: impl IntoIterator<Item = T>,
    ) -> std::io::Result<()> {
        self.write_each(category, records, |r, depth, buffer| {
            let mut serializer = serde_json::Serializer::with_formatter(buffer, Nested::at(depth));
            r.serialize(&mut serializer).map_err(std::io::Error::from)
        })
    }

    /// As [`write`](Self::write), the records written by their
    /// [`WritePretty`] (the same bytes, without serde's calls).
    fn write_pretty<T: WritePretty>(
        &mut self,
        category: usize,
        records: impl IntoIterator<Item = T>,
    ) -> std::io::Result<()> {
        self.write_each(category, records, |r, depth, buffer| {
            r.write_pretty(depth, buffer);
            Ok(())
        })
    }

    /// Appends each record to its category's file, rendered by `render` at
    /// the depth of the report's array and preceded by what comes before it
    /// there, so that the file is copied into the report as it is.
    fn write_each<T>(
        &mut self,
        category: usize,
        records: impl IntoIterator<Item = T>,
        mut render: impl FnMut(&T, usize, &mut Vec<u8>) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let Some(c) = self.categories.get_mut(category) else {
            return Ok(());
        };
        for r in records {
            self.buffer.clear();
            self.buffer
                .extend_from_slice(if c.count == 0 { b"[" } else { b"," });
            self.buffer.extend_from_slice(INDENT);
            render(&r, RECORD_DEPTH, &mut self.buffer)?;
            c.append(&self.buffer)?;
        }
        Ok(())
    }

    /// Finishes writing: the spool can be read from now on.
    pub fn close(&mut self) -> std::io::Result<()> {
        for file in self.categories.iter_mut().filter_map(|c| c.file.as_mut()) {
            if let Some(mut w) = file.writer.take() {
                w.flush()?;
            }
        }
        if let Some(findings) = self.findings.as_mut() {
            findings.finish()?;
        }
        Ok(())
    }

    /// The spooled records (after [`close`](Self::close)) followed by
    /// `tail`'s (the fleet step's), serialising as one [`Measurements`].
    pub fn measurements<'a>(&'a self, tail: &'a Measurements) -> Spooled<'a> {
        Spooled { spool: self, tail }
    }
}

impl Spool {
    /// Removes the spool's files and lets go of the rest without freeing
    /// it, for a run that ends as soon as its report is written: the
    /// system takes the process's memory back whole as it exits.
    pub fn end_of_run(mut self) {
        drop(self.findings.take());
        self.remove_files();
        std::mem::forget(self);
    }

    fn remove_files(&mut self) {
        for file in self.categories.iter().filter_map(|c| c.file.as_ref()) {
            let _ = std::fs::remove_file(&file.path);
        }
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        self.remove_files();
    }
}

/// Writes `record` as the pretty report prints it at the depth `indent`
/// gives (a newline and two spaces per level: [`INDENT`],
/// [`FINDING_INDENT`]), using `buffer` as scratch.
fn write_indented<T: Serialize>(
    record: &T,
    indent: &[u8],
    buffer: &mut Vec<u8>,
    w: &mut dyn Write,
) -> std::io::Result<()> {
    buffer.clear();
    let depth = indent.len().saturating_sub(1) / 2;
    let mut serializer = serde_json::Serializer::with_formatter(&mut *buffer, Nested::at(depth));
    record.serialize(&mut serializer)?;
    w.write_all(buffer)
}

/// serde_json's pretty layout (two spaces a level) for a value that sits
/// `depth` levels deep in the document: what `to_writer_pretty` prints
/// with `depth` more levels of indent after every newline, written in one
/// pass (formatting the value alone and re-indenting its lines was most
/// of the cost of spooling a fleet's records). `parse` writes each
/// section of its JSON with it too.
pub struct Nested {
    /// Levels of indent after the next newline.
    depth: usize,
    /// Whether the innermost array or object has a value yet.
    has_value: bool,
}

impl Nested {
    /// The layout of a value `depth` levels deep.
    pub fn at(depth: usize) -> Self {
        Self {
            depth,
            has_value: false,
        }
    }

    /// A newline and the indent of the current depth.
    fn newline<W: ?Sized + Write>(&self, w: &mut W, lead: &[u8]) -> std::io::Result<()> {
        const SPACES: &[u8; 64] = &[b' '; 64];
        w.write_all(lead)?;
        let mut left = self.depth * 2;
        while left > 0 {
            let n = left.min(SPACES.len());
            w.write_all(SPACES.get(..n).unwrap_or_default())?;
            left -= n;
        }
        Ok(())
    }
}

/// The same calls, in the same order, as `serde_json::ser::PrettyFormatter`
/// with its default indent; every other piece of JSON is the default's.
impl serde_json::ser::Formatter for Nested {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            self.newline(w, b"\n")?;
        }
        w.write_all(b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.newline(w, if first { b"\n" } else { b",\n" })
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            self.newline(w, b"\n")?;
        }
        w.write_all(b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.newline(w, if first { b"\n" } else { b",\n" })
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Writes what comes before the next element of a pretty array at a
/// record's depth: the opening bracket before the first.
fn element_start(first: &mut bool, w: &mut dyn Write) -> std::io::Result<()> {
    let lead: &[u8] = if *first { b"[" } else { b"," };
    *first = false;
    w.write_all(lead)?;
    w.write_all(INDENT)
}

/// Copies the records of a category file: the opening of a pretty array
/// and its elements, each already preceded by its separator and indent.
fn copy_records(path: &std::path::Path, w: &mut dyn Output) -> std::io::Result<()> {
    let mut file = File::open(path)?;
    w.copy_file(&mut file)
}

/// Where a report is written: a writer that also takes a whole file's
/// bytes, by the kernel where the output is a file descriptor.
///
/// A fleet's measurements are tens of megabytes copied from the spool into
/// the report at the very end of the run, on one thread: read into memory
/// and written out again, that was a copy in and a copy out of the kernel
/// (the copy in alone ~15 ms at 1,000 hosts). `std::io::copy` between a
/// `File` and a file or standard output moves them with
/// `copy_file_range`, `sendfile` or `splice` instead (no copy through this
/// process; none at all into `/dev/null`), and falls back to reading and
/// writing where those do not apply.
pub trait Output: Write {
    /// The output as a plain writer.
    fn writer(&mut self) -> &mut dyn Write;

    /// Appends everything from `file`'s position on (what is buffered is
    /// written first).
    fn copy_file(&mut self, file: &mut File) -> std::io::Result<()>;
}

impl Output for Vec<u8> {
    fn writer(&mut self) -> &mut dyn Write {
        self
    }

    fn copy_file(&mut self, file: &mut File) -> std::io::Result<()> {
        copy_file(file, self)
    }
}

impl Output for BufWriter<File> {
    fn writer(&mut self) -> &mut dyn Write {
        self
    }

    fn copy_file(&mut self, file: &mut File) -> std::io::Result<()> {
        std::io::copy(file, self).map(drop)
    }
}

impl Output for BufWriter<std::io::StdoutLock<'_>> {
    fn writer(&mut self) -> &mut dyn Write {
        self
    }

    fn copy_file(&mut self, file: &mut File) -> std::io::Result<()> {
        std::io::copy(file, self).map(drop)
    }
}

/// Writes `records` as further elements of a pretty array.
fn tail_records<T: Serialize>(
    records: impl IntoIterator<Item = T>,
    first: &mut bool,
    w: &mut dyn Write,
) -> std::io::Result<()> {
    let mut buffer = Vec::new();
    for r in records {
        element_start(first, w)?;
        write_indented(&r, INDENT, &mut buffer, w)?;
    }
    Ok(())
}

/// As [`tail_records`], the records written by their [`WritePretty`] (the
/// fleet step's peer groups: one per port across the hosts).
fn tail_records_pretty<T: WritePretty>(
    records: impl IntoIterator<Item = T>,
    first: &mut bool,
    w: &mut dyn Write,
) -> std::io::Result<()> {
    let mut buffer = Vec::new();
    for r in records {
        element_start(first, w)?;
        buffer.clear();
        r.write_pretty(RECORD_DEPTH, &mut buffer);
        w.write_all(&buffer)?;
    }
    Ok(())
}

impl Spooled<'_> {
    /// Writes the measurements as the pretty report prints the value of its
    /// `measurements` key: the spooled records copied as they are (they
    /// were formatted when spooled), then the tail's. The same text as
    /// serialising [`Spooled`], without parsing every record back to
    /// check it (a fleet's measurements are hundreds of megabytes).
    ///
    /// `copied` is told each category file's path once it is copied: the
    /// caller may remove it then (see [`Spool::drop`]), freeing its pages
    /// on another thread while the next category is copied.
    pub fn write_pretty(
        &self,
        out: &mut dyn Output,
        copied: &mut dyn FnMut(&std::path::Path),
    ) -> std::io::Result<()> {
        let t = self.tail;
        out.write_all(b"{")?;
        for (i, name) in NAMES.iter().enumerate() {
            out.write_all(if i == 0 { b"\n    \"" } else { b",\n    \"" })?;
            out.write_all(name.as_bytes())?;
            out.write_all(b"\": ")?;
            let mut first = true;
            if let Some(c) = self.spool.categories.get(i).filter(|c| c.count > 0) {
                match &c.file {
                    Some(file) => {
                        copy_records(&file.path, out)?;
                        copied(&file.path);
                    }
                    None => c.held.write_to(out.writer())?,
                }
                first = false;
            }
            let w = out.writer();
            let f = &mut first;
            match i {
                0 => tail_records_pretty(&t.snapshots, f, w)?,
                1 => tail_records(&t.link_capacities, f, w)?,
                2 => tail_records_pretty(rate_sets(&t.counter_rates), f, w)?,
                3 => tail_records_pretty(&t.throughput, f, w)?,
                4 => tail_records(&t.saturated_counters, f, w)?,
                5 => tail_records(&t.bit_error_rates, f, w)?,
                6 => tail_records_pretty(&t.peer_groups, f, w)?,
                7 => tail_records(&t.traffic_balance, f, w)?,
                8 => tail_records(&t.trends, f, w)?,
                _ => tail_records(&t.notes, f, w)?,
            }
            w.write_all(if first { b"[]" } else { b"\n    ]" })?;
        }
        out.write_all(b"\n  }")
    }
}

/// Writes the report's `findings` value as the pretty printer does: each
/// light copy replaced by its stored finding, whose text is copied as it
/// was stored (fingerprinted and formatted when stored, nothing is parsed
/// back); findings without a stored copy are formatted here.
pub fn write_findings(
    findings: &[Finding],
    ids: &[Option<u64>],
    spool: &FindingSpool,
    w: &mut dyn Write,
) -> std::io::Result<()> {
    if findings.is_empty() {
        return w.write_all(b"[]");
    }
    let mut scratch = Vec::new();
    for (i, light) in findings.iter().enumerate() {
        w.write_all(if i == 0 { b"[" } else { b"," })?;
        w.write_all(FINDING_INDENT)?;
        match ids.get(i).copied().flatten() {
            Some(id) => spool.with_raw(id, |record| w.write_all(record))??,
            None => {
                scratch.clear();
                light.write_pretty(FINDING_DEPTH, &mut scratch);
                w.write_all(&scratch)?;
            }
        }
    }
    w.write_all(b"\n  ]")
}

/// What a [`Splice`] writes in place of its marker.
type SpliceWith<'a> = Box<dyn FnOnce(&mut dyn Write) -> std::io::Result<()> + 'a>;

/// A writer that passes everything through but writes, in place of the
/// first `marker` (which must come early: what precedes it is held until
/// it does), the marker's first `keep` bytes and then what `splice`
/// writes. A report serialised with `null` for one value gets that value
/// written straight from disk.
pub struct Splice<'a> {
    inner: &'a mut dyn Write,
    marker: &'a [u8],
    keep: usize,
    splice: Option<SpliceWith<'a>>,
    held: Vec<u8>,
}

impl<'a> Splice<'a> {
    /// See [`Splice`].
    pub fn new(
        inner: &'a mut dyn Write,
        marker: &'a [u8],
        keep: usize,
        splice: impl FnOnce(&mut dyn Write) -> std::io::Result<()> + 'a,
    ) -> Self {
        Self {
            inner,
            marker,
            keep,
            splice: Some(Box::new(splice)),
            held: Vec::new(),
        }
    }

    /// Ends writing: an error when the marker never came.
    pub fn finish(self) -> std::io::Result<()> {
        match self.splice {
            None => Ok(()),
            Some(_) => Err(std::io::Error::other(
                "the report's layout is not the one expected",
            )),
        }
    }
}

impl Write for Splice<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.splice.is_none() {
            self.inner.write_all(buf)?;
            return Ok(buf.len());
        }
        self.held.extend_from_slice(buf);
        let Some(at) = self
            .held
            .windows(self.marker.len())
            .position(|w| w == self.marker)
        else {
            return Ok(buf.len());
        };
        let (before, after) = self.held.split_at(at);
        self.inner.write_all(before)?;
        self.inner
            .write_all(self.marker.get(..self.keep).unwrap_or_default())?;
        if let Some(splice) = self.splice.take() {
            splice(&mut *self.inner)?;
        }
        self.inner
            .write_all(after.get(self.marker.len()..).unwrap_or_default())?;
        self.held = Vec::new();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A writer that holds back the last bytes written: a report serialised
/// with a placeholder for its last value can have the placeholder cut off
/// and the value written in its place.
pub struct HoldBack<'a> {
    inner: &'a mut dyn Write,
    held: Vec<u8>,
    keep: usize,
}

impl<'a> HoldBack<'a> {
    /// Holds back the last `keep` bytes written to `inner`.
    pub fn new(inner: &'a mut dyn Write, keep: usize) -> Self {
        Self {
            inner,
            held: Vec::with_capacity(keep + (1 << 16)),
            keep,
        }
    }

    /// Writes everything but the last `keep` bytes, and returns those.
    pub fn into_held(mut self) -> std::io::Result<Vec<u8>> {
        let n = self.held.len().saturating_sub(self.keep);
        self.inner
            .write_all(self.held.get(..n).unwrap_or_default())?;
        Ok(self.held.split_off(n))
    }
}

impl Write for HoldBack<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.held.extend_from_slice(buf);
        if self.held.len() > self.keep + (1 << 16) {
            let n = self.held.len() - self.keep;
            self.inner
                .write_all(self.held.get(..n).unwrap_or_default())?;
            self.held.drain(..n);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The spooled measurements and the fleet step's, as the report writes
/// [`Measurements`] (counter rates in rate sets).
pub struct Spooled<'a> {
    spool: &'a Spool,
    tail: &'a Measurements,
}

/// One category: its spooled records, then the tail's.
struct Seq<'a, T> {
    category: Option<&'a Category>,
    tail: &'a [T],
}

impl<T: Serialize> Serialize for Seq<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let spooled = self.category.map_or(0, |c| c.count);
        let mut seq = serializer.serialize_seq(Some(spooled + self.tail.len()))?;
        if let Some(c) = self.category.filter(|c| c.count > 0) {
            // Each record follows its separator (`[` or `,`) and indent.
            let text = match &c.file {
                Some(file) => std::fs::read(&file.path).map_err(S::Error::custom)?,
                None => c.held.concat(),
            };
            let mut rest = text.as_slice();
            while let Some(record) = rest.get(1 + INDENT.len()..).filter(|_| !rest.is_empty()) {
                let mut values = serde_json::Deserializer::from_slice(record)
                    .into_iter::<&serde_json::value::RawValue>();
                let raw = values
                    .next()
                    .ok_or_else(|| S::Error::custom("a spooled record is missing"))?
                    .map_err(S::Error::custom)?;
                seq.serialize_element(raw)?;
                rest = record.get(values.byte_offset()..).unwrap_or_default();
            }
        }
        for t in self.tail {
            seq.serialize_element(t)?;
        }
        seq.end()
    }
}

impl Serialize for Spooled<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let c = |i: usize| self.spool.categories.get(i);
        let t = self.tail;
        let mut s = serializer.serialize_struct("Measurements", NAMES.len())?;
        s.serialize_field(
            "snapshots",
            &Seq {
                category: c(0),
                tail: &t.snapshots,
            },
        )?;
        s.serialize_field(
            "link_capacities",
            &Seq {
                category: c(1),
                tail: &t.link_capacities,
            },
        )?;
        s.serialize_field(
            "counter_rates",
            &Seq {
                category: c(2),
                tail: &rate_sets(&t.counter_rates).collect::<Vec<_>>(),
            },
        )?;
        s.serialize_field(
            "throughput",
            &Seq {
                category: c(3),
                tail: &t.throughput,
            },
        )?;
        s.serialize_field(
            "saturated_counters",
            &Seq {
                category: c(4),
                tail: &t.saturated_counters,
            },
        )?;
        s.serialize_field(
            "bit_error_rates",
            &Seq {
                category: c(5),
                tail: &t.bit_error_rates,
            },
        )?;
        s.serialize_field(
            "peer_groups",
            &Seq {
                category: c(6),
                tail: &t.peer_groups,
            },
        )?;
        s.serialize_field(
            "traffic_balance",
            &Seq {
                category: c(7),
                tail: &t.traffic_balance,
            },
        )?;
        s.serialize_field(
            "trends",
            &Seq {
                category: c(8),
                tail: &t.trends,
            },
        )?;
        s.serialize_field(
            "notes",
            &Seq {
                category: c(9),
                tail: &t.notes,
            },
        )?;
        s.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report of a real paste with counter rates and findings.
    fn analyzed() -> fabricscope::Report {
        // Counter rates from the first, a dozen findings and incidents
        // from the second.
        let docs: Vec<_> = [
            "/tests/fixtures/rules/FL004/fires_rail_errors_growing_now.txt",
            "/tests/fixtures/rules/NV005/fires_lifetime_history.txt",
        ]
        .iter()
        .filter_map(|rel| {
            let path = format!("{}{rel}", env!("CARGO_MANIFEST_DIR"));
            let text = std::fs::read_to_string(path).unwrap_or_default();
            fabricscope::read(&text, &Default::default()).ok()
        })
        .collect();
        let options = fabricscope::AnalyzeOptions::default().with_interval(30.0);
        fabricscope::analyze(&docs, &options)
    }

    /// The measurements of that paste.
    fn measured() -> Measurements {
        analyzed().measurements
    }

    /// Everything but the last bytes goes through, however it was written.
    #[test]
    fn hold_back_keeps_only_the_last_bytes() {
        let text: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let mut out = Vec::new();
        let mut w = HoldBack::new(&mut out, 6);
        for piece in text.chunks(7_777) {
            w.write_all(piece).unwrap_or_else(|e| unreachable!("{e}"));
        }
        let held = w.into_held().unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(
            held.as_slice(),
            text.get(text.len() - 6..).unwrap_or_default()
        );
        out.extend_from_slice(&held);
        assert_eq!(out, text);
    }

    /// Stored findings copied into the report print as the pretty printer
    /// prints the findings themselves; one without a stored copy too.
    #[test]
    fn stored_findings_print_as_the_pretty_printer_prints_them() {
        let report = analyzed();
        assert!(report.findings.len() > 2, "{}", report.findings.len());
        #[derive(Serialize)]
        struct Findings<'a> {
            findings: &'a [Finding],
        }
        for (mut spool, kept) in finding_spools(&report.findings) {
            let ids = store_but_the_second(&mut spool, &report.findings, kept);
            for findings in [&report.findings[..], &[]] {
                let want = serde_json::to_string_pretty(&Findings { findings }).unwrap_or_default();
                let mut got = b"{\n  \"findings\": ".to_vec();
                write_findings(findings, &ids, &spool, &mut got)
                    .unwrap_or_else(|e| unreachable!("{e}"));
                got.extend_from_slice(b"\n}");
                assert_eq!(String::from_utf8_lossy(&got), want, "{kept:?}");
            }
        }
    }

    /// Where a test's [`FindingSpool`] keeps the findings.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Kept {
        /// In memory throughout.
        Held,
        /// Moved to disk: from the first finding, or once half of them
        /// were stored.
        OnDisk,
    }

    /// Empty finding spools for `findings`: one that holds them all, one
    /// that writes each to disk, and one that moves them there halfway.
    fn finding_spools(findings: &[Finding]) -> [(FindingSpool, Kept); 3] {
        let half = RenderedFindings::of(findings).text.len() / 2;
        [
            (FindingSpool::new(), Kept::Held),
            (FindingSpool::holding(0), Kept::OnDisk),
            (FindingSpool::holding(half), Kept::OnDisk),
        ]
    }

    /// Stores every one of `findings` in `spool` (empty, keeping them as
    /// `kept` says) and finishes it; the store ids, as the report holds
    /// them, with none for the second finding (a light copy without a
    /// stored one).
    fn store_but_the_second(
        spool: &mut FindingSpool,
        findings: &[Finding],
        kept: Kept,
    ) -> Vec<Option<u64>> {
        let mut ids: Vec<Option<u64>> = Vec::new();
        for (i, f) in findings.iter().enumerate() {
            let id = spool.store(f).unwrap_or_else(|e| unreachable!("{e}"));
            ids.push((i != 1).then_some(id));
        }
        spool.finish().unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(spool.file.is_some(), kept == Kept::OnDisk, "{kept:?}");
        ids
    }

    /// Incidents written by hand, titles read back from the store, print
    /// as serialising them through serde with the titles filled in (the
    /// old [`StoredIncidents`]) prints them: light copies without titles,
    /// incidents that keep their own, no incidents at all.
    #[test]
    fn incidents_written_by_hand_print_as_stored_incidents_serialise() {
        let report = analyzed();
        assert!(report.incidents.len() > 1, "{}", report.incidents.len());
        for (mut spool, kept) in finding_spools(&report.findings) {
            incidents_print_as_stored_incidents_serialise(&report, &mut spool, kept);
        }
    }

    /// [`incidents_written_by_hand_print_as_stored_incidents_serialise`]
    /// with `spool`, empty, storing the findings.
    fn incidents_print_as_stored_incidents_serialise(
        report: &fabricscope::Report,
        spool: &mut FindingSpool,
        kept: Kept,
    ) {
        let ids = store_but_the_second(spool, &report.findings, kept);
        // Every other incident's title left empty, as a light copy's is.
        let mut incidents = report.incidents.clone();
        for (n, i) in incidents.iter_mut().enumerate() {
            if n % 2 == 0 {
                i.title = String::new();
            }
        }
        let titles_read = incidents
            .iter()
            .filter(|i| i.title.is_empty() && ids[i.findings[0]].is_some())
            .count();
        assert!(titles_read > 0);
        #[derive(Serialize)]
        struct Root<'a> {
            incidents: &'a StoredIncidents<'a>,
        }
        for incidents in [&incidents[..], &report.incidents[..], &[]] {
            let stored = StoredIncidents {
                incidents,
                ids: &ids,
                spool,
            };
            let want =
                serde_json::to_string_pretty(&Root { incidents: &stored }).unwrap_or_default();
            let mut got = b"{\n  \"incidents\": ".to_vec();
            let mut titles = spool.titles().unwrap_or_else(|e| unreachable!("{e}"));
            write_incidents(incidents, &ids, &mut titles, &mut got)
                .unwrap_or_else(|e| unreachable!("{e}"));
            got.extend_from_slice(b"\n}");
            assert_eq!(String::from_utf8_lossy(&got), want, "{kept:?}");
        }
    }

    /// Stored findings read back in any order, across the read window's
    /// edges, are the text that was stored.
    #[test]
    fn stored_findings_read_back_in_any_order() {
        let report = analyzed();
        for (spool, kept) in finding_spools(&report.findings) {
            findings_read_back_in_any_order(&report, spool, kept);
        }
    }

    /// [`stored_findings_read_back_in_any_order`] with `spool`, empty.
    fn findings_read_back_in_any_order(
        report: &fabricscope::Report,
        mut spool: FindingSpool,
        kept: Kept,
    ) {
        let mut texts = Vec::new();
        // Enough findings for several windows.
        while texts.len() < 2_000 {
            for f in &report.findings {
                let (mut buffer, mut text) = (Vec::new(), Vec::new());
                write_indented(f, FINDING_INDENT, &mut buffer, &mut text)
                    .unwrap_or_else(|e| unreachable!("{e}"));
                let id = spool.store(f).unwrap_or_else(|e| unreachable!("{e}"));
                assert_eq!(id as usize, texts.len());
                texts.push(text);
            }
        }
        assert!(texts.iter().map(Vec::len).sum::<usize>() as u64 > 4 * WINDOW);
        spool.finish().unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(spool.file.is_some(), kept == Kept::OnDisk, "{kept:?}");
        let n = texts.len();
        // Forwards, backwards, and jumping about.
        let order = (0..n)
            .chain((0..n).rev())
            .chain((0..n).map(|i| i * 7919 % n));
        let mut buffer = Vec::new();
        for i in order {
            spool
                .read_raw(i as u64, &mut buffer)
                .unwrap_or_else(|e| unreachable!("{e}"));
            assert_eq!(buffer, texts[i], "finding {i}, {kept:?}");
        }
        assert!(spool.read_raw(n as u64, &mut buffer).is_err());
    }

    /// Findings rendered on a unit's thread are stored as the very text
    /// [`FindingSpool::store`] writes for them.
    #[test]
    fn rendered_findings_are_the_records_store_writes() {
        let report = analyzed();
        let rendered = RenderedFindings::of(&report.findings);
        assert_eq!(rendered.len(), report.findings.len());
        // Each kind of spool stores, another copies (held against on disk).
        let [held, on_disk, moved] = finding_spools(&report.findings);
        let [(held_too, _), ..] = finding_spools(&[]);
        for ((stored, _), (copied, _)) in [(held, on_disk), (moved, (held_too, Kept::Held))] {
            rendered_findings_are_stored_as_written(&report, &rendered, stored, copied);
        }
    }

    /// [`rendered_findings_are_the_records_store_writes`] with `stored`
    /// storing the findings and `copied` their rendered records, both empty.
    fn rendered_findings_are_stored_as_written(
        report: &fabricscope::Report,
        rendered: &RenderedFindings,
        mut stored: FindingSpool,
        mut copied: FindingSpool,
    ) {
        for (i, f) in report.findings.iter().enumerate() {
            let a = stored.store(f).unwrap_or_else(|e| unreachable!("{e}"));
            let b = copied
                .store_record(rendered.record(i))
                .unwrap_or_else(|e| unreachable!("{e}"));
            assert_eq!(a, b);
        }
        stored.finish().unwrap_or_else(|e| unreachable!("{e}"));
        copied.finish().unwrap_or_else(|e| unreachable!("{e}"));
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let mut titles = stored.titles().unwrap_or_else(|e| unreachable!("{e}"));
        for id in 0..report.findings.len() as u64 {
            stored
                .read_raw(id, &mut a)
                .unwrap_or_else(|e| unreachable!("{e}"));
            copied
                .read_raw(id, &mut b)
                .unwrap_or_else(|e| unreachable!("{e}"));
            assert_eq!(a, b, "finding {id}");
            assert_eq!(
                titles.message(id).unwrap_or_else(|e| unreachable!("{e}")),
                report.findings[id as usize].message
            );
        }
    }

    proptest::proptest! {
        /// Records held in blocks read back as they were pushed, each
        /// alone and all together, however the blocks fall (records larger
        /// than a block, empty ones, many per block).
        #[test]
        fn held_records_read_back_as_pushed(
            records in proptest::collection::vec(proptest::collection::vec(0_u8..=255, 0..40), 0..60),
            block in 1_usize..64,
        ) {
            let mut held = HeldRecords::in_blocks_of(block);
            let mut at = vec![0];
            for r in &records {
                held.push(r);
                at.push(at.last().copied().unwrap_or(0) + r.len());
            }
            let all = records.concat();
            proptest::prop_assert_eq!(held.len(), all.len());
            proptest::prop_assert_eq!(held.concat(), all.clone());
            let mut written = Vec::new();
            held.write_to(&mut written).unwrap_or_else(|e| unreachable!("{e}"));
            proptest::prop_assert_eq!(written, all);
            for (i, r) in records.iter().enumerate() {
                proptest::prop_assert_eq!(held.get(at[i], at[i + 1]), Some(r.as_slice()));
            }
            let longest = records.iter().map(Vec::len).max().unwrap_or(0);
            proptest::prop_assert!(held.blocks.iter().all(|b| b.len() <= block.max(longest)));
        }
    }

    proptest::proptest! {
        /// A stored finding's message read by its key alone is the message
        /// parsing the whole record gives, whatever the message and the
        /// subject and evidence around it hold (quotes, newlines, the key's
        /// own text, any character).
        #[test]
        fn message_by_key_is_the_parsed_message(
            message in "(\\PC|\n|\"|\\\\|\"message\": |      ){0,12}",
            host in "(\\PC|\"message\": ){0,6}",
            evidence in "(\\PC|\n      \"message\": ){0,8}",
        ) {
            let report = analyzed();
            let mut f = report.findings[0].clone();
            f.message = message.clone();
            f.subject.host = Some(host);
            if let Some(e) = f.evidence.first_mut() {
                e.text = evidence;
            }
            let (mut buffer, mut record) = (Vec::new(), Vec::new());
            write_indented(&f, FINDING_INDENT, &mut buffer, &mut record)
                .unwrap_or_else(|e| unreachable!("{e}"));
            let parsed = record_message_parsed(&record).unwrap_or_else(|e| unreachable!("{e}"));
            proptest::prop_assert_eq!(&parsed, &message);
            proptest::prop_assert_eq!(
                record_message(&record).unwrap_or_else(|e| unreachable!("{e}")),
                parsed
            );
        }
    }

    #[derive(Serialize)]
    struct Root<'a> {
        measurements: &'a Spooled<'a>,
    }

    /// Records copied from the spool print as serde's pretty printer prints
    /// them, spooled and tail alike, empty categories too: held in memory,
    /// spilled to files at once, and spilled after the first unit.
    #[test]
    fn copied_records_print_as_the_pretty_printer_prints_them() {
        let m = measured();
        assert!(m.counter_rates.len() > 10 && !m.snapshots.is_empty());
        let mut one = Spool::new(false, false).unwrap_or_else(|e| unreachable!("{e}"));
        one.add(m.clone(), None)
            .unwrap_or_else(|e| unreachable!("{e}"));
        let after_one = one.held_bytes();
        assert!(after_one > 0);
        for limit in [usize::MAX, 0, after_one] {
            copied_records_print_as_serde(&m, limit);
        }
    }

    /// [`copied_records_print_as_the_pretty_printer_prints_them`] for a
    /// spool that spills beyond `limit` bytes, with two units of `m`.
    fn copied_records_print_as_serde(m: &Measurements, limit: usize) {
        let mut spool = Spool::holding(false, false, limit).unwrap_or_else(|e| unreachable!("{e}"));
        spool
            .add(m.clone(), None)
            .unwrap_or_else(|e| unreachable!("{e}"));
        spool
            .add(m.clone(), None)
            .unwrap_or_else(|e| unreachable!("{e}"));
        spool.close().unwrap_or_else(|e| unreachable!("{e}"));
        let spilled = limit < usize::MAX;
        assert_eq!(
            spool.categories.iter().all(|c| c.file.is_some()),
            spilled,
            "{limit}"
        );
        assert_eq!(spool.held_bytes() == 0, spilled);
        let tail = Measurements {
            notes: vec!["the fleet's note".to_owned()],
            ..m.clone()
        };
        for tail in [&tail, &Measurements::default()] {
            let spooled = spool.measurements(tail);
            let want = serde_json::to_string_pretty(&Root {
                measurements: &spooled,
            })
            .unwrap_or_default();
            let mut got = b"{\n  \"measurements\": ".to_vec();
            let mut copied = Vec::new();
            spooled
                .write_pretty(&mut got, &mut |path| copied.push(path.to_owned()))
                .unwrap_or_else(|e| unreachable!("{e}"));
            got.extend_from_slice(b"\n}");
            assert_eq!(String::from_utf8_lossy(&got), want);
            // Each file with records is said to be copied once, in order,
            // after its records are out (the caller may remove it then);
            // records held in memory have no file.
            let with_records: Vec<PathBuf> = spool
                .categories
                .iter()
                .filter(|c| c.count > 0)
                .filter_map(|c| c.file.as_ref().map(|f| f.path.clone()))
                .collect();
            assert_eq!(with_records.len() >= 3, spilled);
            assert_eq!(copied, with_records);
        }
    }

    /// Removed as soon as it is said to be copied, a category's file is
    /// not needed again: the measurements are whole, and dropping the
    /// spool afterwards is quiet.
    #[test]
    fn category_files_may_go_once_copied() {
        let m = measured();
        let mut spool = Spool::holding(false, false, 0).unwrap_or_else(|e| unreachable!("{e}"));
        spool
            .add(m.clone(), None)
            .unwrap_or_else(|e| unreachable!("{e}"));
        spool.close().unwrap_or_else(|e| unreachable!("{e}"));
        let tail = Measurements::default();
        let spooled = spool.measurements(&tail);
        let mut kept = Vec::new();
        spooled
            .write_pretty(&mut kept, &mut |_| {})
            .unwrap_or_else(|e| unreachable!("{e}"));
        let mut removed = Vec::new();
        let mut gone = Vec::new();
        spooled
            .write_pretty(&mut removed, &mut |path| {
                std::fs::remove_file(path).unwrap_or_else(|e| unreachable!("{e}"));
                gone.push(path.to_owned());
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(removed, kept);
        assert!(!gone.is_empty() && gone.iter().all(|p| !p.exists()));
        drop(spool);
    }
}
