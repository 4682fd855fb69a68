//! `nvidia-smi -L` / `--list-gpus`: one line per GPU,
//! `GPU 0: NVIDIA H200 (UUID: GPU-d4a16625-…)`, and on MIG-enabled GPUs
//! indented lines `  MIG 1g.10gb     Device  0: (UUID: MIG-…)`.
//!
//! `nvidia-smi nvlink` prints the same GPU line as the heading of each
//! block, so detection only claims a GPU line followed by another GPU line,
//! a MIG line or nothing. `nvidia-smi nvlink -cBridge` prints bare GPU lines
//! too and cannot be told apart by content; after a prompt the command
//! decides.

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

/// `GPU 0: NVIDIA H200 (UUID: GPU-…)` → (0, name, uuid).
pub(crate) fn gpu_line(t: &str) -> Option<(u32, &str, Option<&str>)> {
    let rest = t.trim().strip_prefix("GPU ")?;
    let (index, rest) = rest.split_once(':')?;
    let index: u32 = index.trim().parse().ok()?;
    let rest = rest.trim();
    let (name, uuid) = match rest.rsplit_once(" (UUID: ") {
        Some((name, uuid)) => (name.trim(), Some(uuid.strip_suffix(')')?.trim())),
        None => (rest, None),
    };
    (!name.is_empty() && uuid.is_some()).then_some((index, name, uuid))
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
    let (index, _, _) = gpu_line(lines.first()?.text())?;
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
    for line in lines.iter().filter(|l| !l.is_blank()) {
        if let Some((index, name, uuid)) = gpu_line(line.text()) {
            out.gpus.push(ListedGpu {
                index,
                name: name.to_owned(),
                uuid: uuid.map(str::to_owned),
                mig_devices: Vec::new(),
                line: line.number,
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
