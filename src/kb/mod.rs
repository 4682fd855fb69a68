//! What healthy hardware should show: a small, sourced table.
//!
//! - [`gpu_nvlink_expectation`]: per GPU product (matched from the name
//!   `nvidia-smi` prints), how many NVLink links it has, how many should be
//!   active, and the per-link speed `nvidia-smi nvlink -s` prints.
//! - [`pair_nvlink_expectation`]: per system type, the `NV#` expected
//!   between two GPUs in `nvidia-smi topo -m`.
//! - [`hca_expected_rate`]: per InfiniBand HCA (`ibstat`'s `CA type`), the
//!   fastest rate its ports can show.
//! - [`xid_spec`]: per NVIDIA Xid code, what it means, how severe one line
//!   of it is and NVIDIA's recommended action.
//!
//! Every entry names its `source` (a document, an issue thread holding a
//! real capture, or our own capture) and says whether a real capture
//! confirmed it (`observed`). Entries not confirmed by a capture are
//! deductions from specifications and say so.
//!
//! # Precedence: the input beats the table
//! A healthy machine must never be flagged because of a table entry. So
//! expectations the input itself carries always win:
//! 1. An `NV#` cell in `topo -m` states how many links join that pair
//!    (`NV18` = 18); `nvidia-smi nvlink -R` shows which links go where.
//! 2. Links inactive by design are not faults: on PCIe boards with a bridge
//!    the same link numbers are `<inactive>` on every GPU of the host (the
//!    HPE H100 PCIe sample: 4, 5, 10, 11, 16, 17 on both GPUs), and a PCIe
//!    board without a bridge reports all links inactive
//!    ([`GpuNvlinkSpec::all_inactive_can_be_normal`]).
//! 3. What the peers in the same input agree on (the other GPUs of the host,
//!    the other hosts of the fleet) beats the table.
//!
//! The table is the fallback when the input says nothing about what to
//! expect, and a rule may only use it to add a finding when the input is
//! consistent with the entry (same product, same form factor). A name that
//! matches no entry has no expectation: rules then compare peers only.
//!
//! ```
//! use fabricscope::kb;
//! let h200 = kb::gpu_nvlink_expectation("NVIDIA H200").unwrap();
//! assert_eq!((h200.active_links, h200.speed_gb_per_s), (18, Some(26.562)));
//! let cx7 = kb::hca_expected_rate("MT4129").unwrap();
//! assert_eq!(cx7.max_ib_rate_gbps, Some(400.0));
//! ```

mod ib;
mod nvlink;
mod xid;

pub use ib::{hca_expected_rate, HcaSpec, HCAS};
pub use nvlink::{
    gpu_nvlink_expectation, pair_nvlink_expectation, FormFactor, GpuNvlinkSpec, PairNvlinkSpec,
    GPUS, PAIRS,
};
pub use xid::{sxid_severity, xid_spec, XidSpec, XIDS};
