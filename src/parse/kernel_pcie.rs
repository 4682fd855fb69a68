//! PCIe AER error reports and NVIDIA GPU initialisation lines of a kernel
//! log, read line by line for [`super::kernel_log`].
//!
//! AER (Linux drivers/pci/pcie/aer.c, `aer_print_error`,
//! `__aer_print_error`, `aer_print_port_info`; older kernels'
//! aer/aerdrv_errprint.c), each line after `DRIVER ADDRESS: ` and, since
//! 4.19, `AER: ` (its `dev_fmt`):
//! - `pcieport 0000:00:03.1: AER: Corrected error received: 0000:07:00.0`
//!   (`Multiple Corrected …`, `Uncorrected (Non-Fatal) …`, `Uncorrected
//!   (Fatal) …`; kernels before 4.19 `… received: id=00e8`, 6.x
//!   `Correctable error message received from 0000:06:00.0`): the root
//!   port's receipt;
//! - `nvidia 0000:07:00.0: PCIe Bus Error: severity=Corrected,
//!   type=Physical Layer, (Receiver ID)` (before 4.19 `…, id=00e8(Receiver
//!   ID)`; 6.x `severity=Correctable`/`Uncorrectable (Fatal)`): the error
//!   of the device the line names;
//! - `nvidia 0000:07:00.0:   device [10de:2184] error status/mask=
//!   00001000/0000a000` and `nvidia 0000:07:00.0:    [12] Timeout` (`[ 0]
//!   RxErr (First)`; before 4.x `Receiver Error`): its registers and bits;
//! - `TLP Header: …`, `Error of this Agent is reported first`, `can't find
//!   device of ID00e5`: more of the event.
//!
//! As pasted in github.com/pop-os/pop issues 751 and 3363,
//! github.com/archfan/coreboot issue 2, github.com/Dasharo/coreboot pull
//! 815, github.com/endlessm/linux pull 131.
//!
//! GPU initialisation (the NVIDIA driver's `NVRM:` lines):
//! - `NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)` and
//!   `NVRM: GPU 0000:0a:00.0: rm_init_adapter failed, device minor number
//!   5` (github.com/NVIDIA/gpu-operator issues 649 and 1146,
//!   github.com/geerlingguy/raspberry-pi-pcie-devices issue 26);
//! - `NVRM: GPU 0000:01:00.0: GPU has fallen off the bus.`, and the
//!   three-line `NVRM: The NVIDIA GPU 0000:b3:00.0` / `NVRM: (PCI ID:
//!   10de:26b5) installed in this system has` / `NVRM: fallen off the bus
//!   and is not responding to commands.` (github.com/NVIDIA/NVSentinel
//!   issue 155);
//! - `NVRM: The NVIDIA GPU 0000:02:00.0 (PCI ID: 10de:1b38)` / `NVRM:
//!   installed in this system is not supported by the` / `NVRM: NVIDIA
//!   535.104.05 driver release.` (github.com/flatcar/Flatcar issue 1283;
//!   the open module's `… not supported by open nvidia.ko because it does
//!   not include the required GPU System Processor (GSP).`,
//!   github.com/NVIDIA/open-gpu-kernel-modules issue 696);
//! - `[drm] Initialized nvidia-drm 0.0.0 20160202 for 0000:01:00.0 on
//!   minor 1`: the GPU was brought up.

use super::kernel_log::is_pci_address;
use crate::model::kernel_log::{AerSeverity, GpuInitWhat};

/// An AER line after the kernel log's prefix.
#[derive(Debug, PartialEq)]
pub(crate) enum AerLine<'a> {
    /// The root port's receipt: the port, the severity, `Multiple`, and
    /// the device it names (an address, or `id=00e8` made one).
    Receipt {
        port: &'a str,
        driver: &'a str,
        severity: Option<AerSeverity>,
        multiple: bool,
        source: Option<String>,
    },
    /// `PCIe Bus Error: severity=…, type=…, (…)` of a device.
    Error {
        device: &'a str,
        driver: &'a str,
        /// `None` when the line ends before it is whole.
        severity: Option<AerSeverity>,
        layer: Option<&'a str>,
        agent: Option<&'a str>,
    },
    /// `device [vvvv:dddd] error status/mask=SSSSSSSS/MMMMMMMM`.
    Status {
        device: &'a str,
        driver: &'a str,
        vendor_device: &'a str,
        status: Option<&'a str>,
    },
    /// `[ 0] RxErr (First)`.
    Bit {
        device: &'a str,
        driver: &'a str,
        name: &'a str,
    },
    /// `TLP Header: …` and the like: more of the event.
    Detail { device: &'a str, driver: &'a str },
    /// `pcieport 0000:00:03.1: AER: enabled with IRQ 28`: the port's AER
    /// service is on (printed at boot).
    Enabled { port: &'a str, driver: &'a str },
}

impl<'a> AerLine<'a> {
    /// The address of the line's device.
    pub(crate) fn device(&self) -> &'a str {
        match self {
            Self::Receipt { port, .. } | Self::Enabled { port, .. } => port,
            Self::Error { device, .. }
            | Self::Status { device, .. }
            | Self::Bit { device, .. }
            | Self::Detail { device, .. } => device,
        }
    }

    /// The driver the line names first.
    pub(crate) fn driver(&self) -> &'a str {
        match self {
            Self::Receipt { driver, .. }
            | Self::Enabled { driver, .. }
            | Self::Error { driver, .. }
            | Self::Status { driver, .. }
            | Self::Bit { driver, .. }
            | Self::Detail { driver, .. } => driver,
        }
    }
}

/// `DRIVER ADDRESS: MESSAGE` → the three (the message with `AER: ` and
/// its indentation taken off).
fn device_head(text: &str) -> Option<(&str, &str, &str)> {
    let (driver, rest) = text.split_once(' ')?;
    let named = !driver.is_empty()
        && driver.len() <= 32
        && driver
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !named {
        return None;
    }
    let address = rest.get(..12).filter(|a| is_pci_address(a))?;
    let message = rest.get(12..)?.strip_prefix(':')?.trim_start();
    let message = message
        .strip_prefix("AER:")
        .map_or(message, str::trim_start);
    Some((driver, address, message))
}

/// `Corrected`, `Correctable`, `Uncorrected (Non-Fatal)`, `Uncorrectable
/// (Fatal)` at the start of `text`, and the text after it.
fn severity_words(text: &str) -> Option<(AerSeverity, &str)> {
    const WORDS: &[(&str, AerSeverity)] = &[
        ("Corrected", AerSeverity::Corrected),
        ("Correctable", AerSeverity::Corrected),
        ("Uncorrected (Non-Fatal)", AerSeverity::NonFatal),
        ("Uncorrectable (Non-Fatal)", AerSeverity::NonFatal),
        ("Uncorrected (Fatal)", AerSeverity::Fatal),
        ("Uncorrectable (Fatal)", AerSeverity::Fatal),
    ];
    WORDS
        .iter()
        .find_map(|(w, s)| text.strip_prefix(w).map(|r| (*s, r)))
}

/// Older kernels' requester id `00e8` (bus << 8 | devfn) as an address in
/// the port's domain: `0000:00:1d.0`.
fn id_address(id: &str, port: &str) -> Option<String> {
    let n = u16::from_str_radix(id.get(..4)?, 16).ok()?;
    let domain = port.get(..4)?;
    Some(format!(
        "{domain}:{:02x}:{:02x}.{}",
        n >> 8,
        (n & 0xff) >> 3,
        n & 7
    ))
}

/// Reads an AER line: `whole` is false on a block's last line, where the
/// error line's severity is read only when its `,` follows it.
pub(crate) fn aer_line(text: &str) -> Option<AerLine<'_>> {
    let (driver, device, message) = device_head(text)?;
    if let Some(rest) = message.strip_prefix("PCIe Bus Error: severity=") {
        let (severity, rest) = match severity_words(rest) {
            Some((s, r)) if r.starts_with(',') => (Some(s), r),
            _ => (None, ""),
        };
        let rest = rest.trim_start_matches(',').trim_start();
        let (layer, agent) = match rest.strip_prefix("type=") {
            Some(r) => {
                let (layer, after) = r.split_once(',').unwrap_or((r, ""));
                let agent = after
                    .split_once('(')
                    .and_then(|(_, a)| a.strip_suffix(')'))
                    .map(str::trim);
                (Some(layer.trim()), agent)
            }
            None => (None, None),
        };
        return Some(AerLine::Error {
            device,
            driver,
            severity,
            layer,
            agent,
        });
    }
    if let Some(rest) = message.strip_prefix("device [") {
        let (vendor_device, rest) = rest.split_once(']')?;
        let status = rest
            .trim_start()
            .strip_prefix("error status/mask=")
            .and_then(|r| r.get(..8));
        return Some(AerLine::Status {
            device,
            driver,
            vendor_device,
            status,
        });
    }
    if let Some(rest) = message.strip_prefix('[') {
        let (n, name) = rest.split_once(']')?;
        if n.trim().is_empty() || !n.trim().bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let name = name.trim();
        let name = name.strip_suffix("(First)").map_or(name, str::trim_end);
        return (!name.is_empty()).then_some(AerLine::Bit {
            device,
            driver,
            name,
        });
    }
    if message.starts_with("enabled with IRQ") {
        return Some(AerLine::Enabled {
            port: device,
            driver,
        });
    }
    if message.starts_with("TLP Header")
        || message.starts_with("Error of this Agent")
        || message.starts_with("can't find device of ID")
    {
        return Some(AerLine::Detail { device, driver });
    }
    let (multiple, rest) = match message.strip_prefix("Multiple ") {
        Some(r) => (true, r),
        None => (false, message),
    };
    let (severity, rest) = severity_words(rest)?;
    let source = rest
        .strip_prefix(" error received:")
        .or_else(|| rest.strip_prefix(" error message received from"))?
        .trim();
    let source = match source.strip_prefix("id=") {
        Some(id) => id_address(id, device),
        None => source
            .get(..12)
            .filter(|a| is_pci_address(a))
            .map(str::to_owned),
    };
    Some(AerLine::Receipt {
        port: device,
        driver,
        severity: Some(severity),
        multiple,
        source,
    })
}

/// An NVIDIA driver line about a GPU's initialisation.
#[derive(Debug, PartialEq)]
pub(crate) struct InitLine<'a> {
    pub(crate) bus_id: &'a str,
    /// `None` for the first line of a message the next `NVRM:` lines go
    /// on with (`NVRM: The NVIDIA GPU 0000:b3:00.0 …`).
    pub(crate) what: Option<GpuInitWhat>,
    pub(crate) pci_id: Option<&'a str>,
    pub(crate) message: &'a str,
}

/// The bus id at the start of `text` (`0000:3b:00.0`, `0000:3b:00`), and
/// the text after it.
fn bus_at(text: &str) -> Option<(&str, &str)> {
    let len = text
        .bytes()
        .take_while(|b| b.is_ascii_hexdigit() || *b == b':' || *b == b'.')
        .count();
    let bus = text.get(..len)?.trim_end_matches([':', '.']);
    (bus.len() >= 10 && bus.matches(':').count() == 2)
        .then(|| (bus, text.get(bus.len()..).unwrap_or("")))
}

/// `(PCI ID: 10de:26b5)` in a message.
pub(crate) fn pci_id_in(message: &str) -> Option<&str> {
    let (_, rest) = message.split_once("(PCI ID: ")?;
    let (id, _) = rest.split_once(')')?;
    (id.len() == 9).then_some(id)
}

/// What a whole `The NVIDIA GPU …` message says.
pub(crate) fn init_what(message: &str) -> Option<GpuInitWhat> {
    if message.contains("fallen off the bus") {
        Some(GpuInitWhat::FallenOffBus)
    } else if message.contains("is not supported") {
        Some(GpuInitWhat::NotSupported)
    } else {
        None
    }
}

/// Reads an NVIDIA driver line about a GPU's initialisation.
pub(crate) fn init_line(text: &str) -> Option<InitLine<'_>> {
    if let Some(rest) = text.strip_prefix("[drm] Initialized nvidia-drm ") {
        let (_, after) = rest.split_once(" for ")?;
        let (bus, _) = bus_at(after)?;
        return Some(InitLine {
            bus_id: bus,
            what: Some(GpuInitWhat::Initialized),
            pci_id: None,
            message: text,
        });
    }
    let message = text.strip_prefix("NVRM: ")?.trim_start();
    if let Some(rest) = message.strip_prefix("The NVIDIA GPU ") {
        let (bus, _) = bus_at(rest)?;
        return Some(InitLine {
            bus_id: bus,
            what: None,
            pci_id: pci_id_in(rest),
            message,
        });
    }
    let rest = message
        .strip_prefix("GPU at PCI:")
        .or_else(|| message.strip_prefix("GPU at "))
        .or_else(|| message.strip_prefix("GPU "))?;
    let (bus, after) = bus_at(rest)?;
    let after = after.trim_start_matches(':').trim_start();
    let what = if let Some(r) = after.strip_prefix("RmInitAdapter failed!") {
        let code = r
            .trim()
            .strip_prefix('(')
            .and_then(|c| c.strip_suffix(')'))
            .map(str::to_owned);
        GpuInitWhat::RmInitAdapterFailed { code }
    } else if let Some(r) = after.strip_prefix("rm_init_adapter failed") {
        let minor = r
            .split_once("device minor number ")
            .and_then(|(_, n)| n.trim().parse().ok());
        GpuInitWhat::RmInitFailed { minor }
    } else if after.contains("fallen off the bus") {
        GpuInitWhat::FallenOffBus
    } else {
        return None;
    };
    Some(InitLine {
        bus_id: bus,
        what: Some(what),
        pci_id: None,
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_aer_line_of_each_kernel() {
        let e = aer_line(
            "nvidia 0000:07:00.0: PCIe Bus Error: severity=Correctable, type=Data Link Layer, (Transmitter ID)",
        );
        assert_eq!(
            e,
            Some(AerLine::Error {
                device: "0000:07:00.0",
                driver: "nvidia",
                severity: Some(AerSeverity::Corrected),
                layer: Some("Data Link Layer"),
                agent: Some("Transmitter ID"),
            })
        );
        let old = aer_line("pcieport 0000:00:1d.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, id=00e8(Requester ID)");
        assert!(matches!(
            old,
            Some(AerLine::Error {
                severity: Some(AerSeverity::Fatal),
                agent: Some("Requester ID"),
                ..
            })
        ));
        assert_eq!(
            aer_line("pcieport 0000:00:1d.0: AER: Multiple Corrected error received: id=00e8"),
            Some(AerLine::Receipt {
                port: "0000:00:1d.0",
                driver: "pcieport",
                severity: Some(AerSeverity::Corrected),
                multiple: true,
                source: Some("0000:00:1d.0".into()),
            })
        );
        assert!(matches!(
            aer_line("pcieport 0000:00:03.1: AER: Uncorrected (Non-Fatal) error received: 0000:41:00.0"),
            Some(AerLine::Receipt { severity: Some(AerSeverity::NonFatal), source: Some(s), .. }) if s == "0000:41:00.0"
        ));
        assert!(matches!(
            aer_line("pcieport 0000:00:1d.3: AER: Correctable error message received from 0000:06:00.0"),
            Some(AerLine::Receipt { source: Some(s), .. }) if s == "0000:06:00.0"
        ));
        assert_eq!(
            aer_line(
                "mlx5_core 0000:41:00.0:   device [15b3:1021] error status/mask=00000001/0000e000"
            ),
            Some(AerLine::Status {
                device: "0000:41:00.0",
                driver: "mlx5_core",
                vendor_device: "15b3:1021",
                status: Some("00000001"),
            })
        );
        assert_eq!(
            aer_line("nvme 0000:03:00.0: AER: [ 0] RxErr                  (First)"),
            Some(AerLine::Bit {
                device: "0000:03:00.0",
                driver: "nvme",
                name: "RxErr"
            })
        );
        assert!(matches!(
            aer_line("pcieport 0000:00:1c.5:    [ 0] Receiver Error         (First)"),
            Some(AerLine::Bit {
                name: "Receiver Error",
                ..
            })
        ));
        // Cut inside the severity: not read.
        assert!(matches!(
            aer_line("nvidia 0000:07:00.0: PCIe Bus Error: severity=Corr"),
            Some(AerLine::Error { severity: None, .. })
        ));
        // Other device lines are not AER's.
        assert_eq!(
            aer_line("nvidia 0000:07:00.0: enabling device (0000 -> 0003)"),
            None
        );
        assert_eq!(
            aer_line("mlx5_core 0000:53:00.0 enp83s0f0np0: Link down"),
            None
        );
    }

    #[test]
    fn reads_the_gpu_init_lines() {
        let l =
            init_line("NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)").unwrap();
        assert_eq!(l.bus_id, "0000:0a:00.0");
        assert_eq!(
            l.what,
            Some(GpuInitWhat::RmInitAdapterFailed {
                code: Some("0x24:0x72:1568".into())
            })
        );
        let l = init_line("NVRM: GPU 0000:0a:00.0: rm_init_adapter failed, device minor number 5")
            .unwrap();
        assert_eq!(l.what, Some(GpuInitWhat::RmInitFailed { minor: Some(5) }));
        let l = init_line("NVRM: GPU at PCI:0000:65:00: GPU has fallen off the bus.").unwrap();
        assert_eq!(
            (l.bus_id, l.what),
            ("0000:65:00", Some(GpuInitWhat::FallenOffBus))
        );
        let l = init_line("NVRM: The NVIDIA GPU 0000:02:00.0 (PCI ID: 10de:1b38)").unwrap();
        assert_eq!(
            (l.bus_id, l.what, l.pci_id),
            ("0000:02:00.0", None, Some("10de:1b38"))
        );
        let l =
            init_line("[drm] Initialized nvidia-drm 0.0.0 20160202 for 0000:01:00.0 on minor 1")
                .unwrap();
        assert_eq!(l.what, Some(GpuInitWhat::Initialized));
        assert_eq!(
            init_line("NVRM: GPU 0000:3b:00.0: GPU serial number is 0."),
            None
        );
        assert_eq!(
            init_line("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15"),
            None
        );
    }
}
