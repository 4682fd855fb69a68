//! `nvidia-smi -L` / `--list-gpus`: one line per GPU,
//! `GPU 0: NVIDIA H200 (UUID: GPU-d4a16625-…)`, and on MIG-enabled GPUs
//! indented lines `  MIG 1g.10gb     Device  0: (UUID: MIG-…)`.
//!
//! `nvidia-smi nvlink` prints the same GPU line as the heading of each
//! block, so detection only claims a GPU line followed by another GPU line,
//! a MIG line or nothing. `nvidia-smi nvlink -cBridge` prints bare GPU lines
//! too and cannot be told apart by content; after a prompt the command
//! decides.

use crate::diag::WarningKind;
use crate::model::smi_list::{ListedGpu, ListedMig, SmiList};
use crate::parse::text::Unread;
use crate::parse::{Block, Line, Parsed, Spec};
use std::fmt::Write as _;

pub(crate) const FORMAT: Spec<SmiList> = Spec {
    command: |argv| {
        argv.first() == Some(&"nvidia-smi")
            && argv.len() == 2
            && matches!(argv.get(1), Some(&"-L") | Some(&"--list-gpus"))
    },
    starts: |b| b == b'G',
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &["gpu"],
};

/// A GPU line of `nvidia-smi -L`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GpuLine<'a> {
    pub index: u32,
    pub name: &'a str,
    pub uuid: &'a str,
    /// The line stops before the `)` that closes its UUID.
    pub unclosed: bool,
}

/// `GPU 0: NVIDIA H200 (UUID: GPU-…)`. A line that lost its closing `)`
/// (a paste cut there, an editor's wrap) is read when its UUID is whole
/// (`GPU-` and the five hex groups): what it says is all there.
pub(crate) fn gpu_line(t: &str) -> Option<GpuLine<'_>> {
    let rest = t.trim().strip_prefix("GPU ")?;
    let (index, rest) = rest.split_once(':')?;
    let index: u32 = index.trim().parse().ok()?;
    let (name, uuid) = rest.trim().rsplit_once(" (UUID: ")?;
    let (uuid, unclosed) = match uuid.strip_suffix(')') {
        Some(closed) => (closed.trim(), false),
        None if crate::parse::nvlink::is_whole_uuid(uuid) => (uuid, true),
        None => return None,
    };
    let name = name.trim();
    (!name.is_empty()).then_some(GpuLine {
        index,
        name,
        uuid,
        unclosed,
    })
}

/// `GPU 0: NVIDIA A100-SXM4-80GB`, `GPU 1: NVIDIA H100 (UUID: GPU-7f`: a
/// GPU line that stops before its UUID is whole. nvidia-smi always prints
/// the UUID, so on the output's last line this is where the paste was cut,
/// not a line of another form.
fn is_cut_gpu_line(t: &str) -> bool {
    t.trim()
        .strip_prefix("GPU ")
        .and_then(|r| r.split_once(':'))
        .is_some_and(|(index, name)| {
            !index.is_empty()
                && index.bytes().all(|b| b.is_ascii_digit())
                && !name.trim().is_empty()
        })
}

/// `MIG 1g.10gb     Device  0: (UUID: MIG-…)` → (profile, device, uuid).
fn mig_line(t: &str) -> Option<(&str, u32, Option<&str>)> {
    let rest = t.trim().strip_prefix("MIG ")?;
    let (profile, rest) = rest.trim_start().split_once(char::is_whitespace)?;
    let rest = rest.trim_start().strip_prefix("Device")?;
    let (device, rest) = rest.split_once(':')?;
    let device: u32 = device.trim().parse().ok()?;
    let uuid = rest
        .trim()
        .strip_prefix("(UUID: ")
        .and_then(|u| u.strip_suffix(')'))
        .map(str::trim);
    Some((profile, device, uuid))
}

fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let index = gpu_line(lines.first()?.text())?.index;
    let next = lines.iter().skip(1).find(|l| !l.is_blank());
    let ok = match next {
        None => true,
        Some(l) => gpu_line(l.text()).is_some() || mig_line(l.text()).is_some(),
    };
    ok.then(|| Block::keyed(format!("gpu{index}")))
}

/// Reads `nvidia-smi -L`.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<SmiList> {
    let mut unread = Unread::default();
    let mut out = SmiList::default();
    let last = crate::parse::text::last_text_line(lines);
    for line in lines.iter().filter(|l| !l.is_blank()) {
        if let Some(gpu) = gpu_line(line.text()) {
            out.gpus.push(ListedGpu {
                index: gpu.index,
                name: gpu.name.to_owned(),
                uuid: Some(gpu.uuid.to_owned()),
                mig_devices: Vec::new(),
                line: line.number,
                unclosed: gpu.unclosed,
            });
        } else if let Some((profile, device, uuid)) = mig_line(line.text()) {
            match out.gpus.last_mut() {
                Some(gpu) => gpu.mig_devices.push(ListedMig {
                    profile: profile.to_owned(),
                    device,
                    uuid: uuid.map(str::to_owned),
                    line: line.number,
                }),
                None => unread.line(line, "MIG device before any GPU line"),
            }
        } else if Some(line.number) == last && is_cut_gpu_line(line.text()) {
            unread.warn(
                WarningKind::Truncated,
                line.span(),
                // Said as the input layer says a cut line, so that IN001
                // names it.
                format!(
                    "{}: the output ends on `{}` before its UUID: cut here, the GPU is unknown",
                    crate::input::CUT_LINE,
                    line.text().trim()
                ),
            );
        } else {
            unread.line(line, "not a `GPU N: name (UUID: …)` line");
        }
    }
    Parsed {
        value: out,
        warnings: unread.finish(),
    }
}

/// `2 GPU(s): NVIDIA H200`.
#[must_use]
pub fn summary(l: &SmiList) -> String {
    let mut names: Vec<&str> = l.gpus.iter().map(|g| g.name.as_str()).collect();
    names.dedup();
    let migs: usize = l.gpus.iter().map(|g| g.mig_devices.len()).sum();
    let mut s = format!("{} GPU(s): {}", l.gpus.len(), names.join(", "));
    if migs > 0 {
        let _ = write!(s, "; {migs} MIG device(s)");
    }
    s
}

/// Renders the list as the tool prints it.
#[must_use]
pub fn render(l: &SmiList) -> String {
    let mut s = String::new();
    for g in &l.gpus {
        let _ = writeln!(
            s,
            "GPU {}: {} (UUID: {})",
            g.index,
            g.name,
            g.uuid.as_deref().unwrap_or("")
        );
        for m in &g.mig_devices {
            let _ = writeln!(
                s,
                "  MIG {:<12} Device {:>2}: (UUID: {})",
                m.profile,
                m.device,
                m.uuid.as_deref().unwrap_or("")
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;

    const LIST: &str =
        "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77)
  MIG 1g.5gb      Device  0: (UUID: MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f)
  MIG 1g.5gb      Device  1: (UUID: MIG-cba663e8-9bed-5b25-b243-5985ef7c9beb)
GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-aaaa)
";

    #[test]
    fn reads_gpus_and_mig_devices() {
        let p = parse(&lines_of(LIST));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let l = &p.value;
        assert_eq!(l.gpus.len(), 2);
        assert_eq!(l.gpus[0].mig_devices[1].device, 1);
        assert_eq!(l.gpus[0].mig_devices[1].profile, "1g.5gb");
        assert_eq!(l.gpus[1].uuid.as_deref(), Some("GPU-aaaa"));
        assert_eq!(
            summary(l),
            "2 GPU(s): NVIDIA A100-SXM4-40GB; 2 MIG device(s)"
        );
        assert_eq!(parse(&lines_of(&render(l))).value, *l);
    }

    /// A last line that stops before its UUID was cut by the paste: a cut
    /// line (IN001), not an unread one; the same line before others is
    /// unread.
    #[test]
    fn a_last_gpu_line_without_its_uuid_is_cut() {
        let whole = "GPU 0: NVIDIA L40S (UUID: GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9)\n";
        for cut in ["GPU 1: NVIDIA L40S", "GPU 1: NVIDIA L40S (UUID: GPU-0a1b"] {
            let p = parse(&lines_of(&format!("{whole}{cut}\n")));
            assert_eq!(p.value.gpus.len(), 1);
            assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
            assert_eq!(p.warnings[0].kind, WarningKind::Truncated);
            assert!(p.warnings[0].message.starts_with(crate::input::CUT_LINE));
            let p = parse(&lines_of(&format!("{cut}\n{whole}")));
            assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
            assert_eq!(p.warnings[0].kind, WarningKind::Unreadable);
        }
    }

    /// A GPU line that lost its `)` is read, its whole UUID kept and the
    /// line marked; one whose UUID is cut short too is not a GPU line.
    #[test]
    fn a_line_without_its_closing_paren_is_read_when_its_uuid_is_whole() {
        let text = "GPU 0: GeForce RTX 2080 Ti (UUID: GPU-9f8e7d6c-5b4a-3928-1706-f5e4d3c2b1a0\n";
        let p = parse(&lines_of(text));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let g = &p.value.gpus[0];
        assert_eq!(g.name, "GeForce RTX 2080 Ti");
        assert_eq!(
            g.uuid.as_deref(),
            Some("GPU-9f8e7d6c-5b4a-3928-1706-f5e4d3c2b1a0")
        );
        assert!(g.unclosed);
        assert!(detect(&lines_of(text)).is_some());
        let closed = parse(&lines_of(&render(&p.value)));
        assert!(!closed.value.gpus[0].unclosed);
        let cut = "GPU 0: GeForce RTX 2080 Ti (UUID: GPU-9f8e7d6c-5b4a\n";
        assert!(gpu_line(cut).is_none());
        assert_eq!(parse(&lines_of(cut)).warnings.len(), 1);
    }

    #[test]
    fn nvlink_blocks_are_not_claimed() {
        assert!(detect(&lines_of(
            "GPU 0: NVIDIA H200 (UUID: GPU-1)\n\t Link 0: 26.562 GB/s"
        ))
        .is_none());
        assert!(detect(&lines_of("GPU 0: NVIDIA H200 (UUID: GPU-1)\n\t NVML: Unable to retrieve NVLink information as all links are inActive")).is_none());
        assert!(detect(&lines_of(
            "GPU 0: NVIDIA H200 (UUID: GPU-1)\nGPU 1: NVIDIA H200 (UUID: GPU-2)"
        ))
        .is_some());
        assert!(detect(&lines_of("GPU 0: something")).is_none());
    }
}
