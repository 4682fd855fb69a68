//! Typed, serde-serialisable models of what the tools print.
//!
//! Models are plain owned data: no lifetimes, no parser state. Field names
//! follow the tools' own labels (snake_cased) and carry their unit where one
//! applies (`rate_gbps`, `kib`), so a reader never has to guess.

pub mod counter;
pub mod counter_id;
pub mod date;
pub mod dcgm_exporter;
pub mod dcgmi_diag;
pub mod dcgmi_nvlink;
pub mod dmon;
pub mod gpu_pcie;
pub mod ib;
pub mod ibstat;
pub mod kernel_log;
pub mod nvlink;
pub mod partial;
pub mod smi_csv;
pub mod smi_list;
pub mod smi_query;
pub mod smi_table;
pub mod topo;

pub use counter::Counter;
pub use counter_id::{
    CounterId, CounterKey, Counters, IbCounter, IbSeries, KnownCounter, NvCounter,
};
pub use partial::{Partial, PartialReason};
pub mod ibdev2netdev;
pub mod ibdiagnet_log;
pub mod iblinkinfo;
pub mod ibnetdiscover;
pub mod ibqueryerrors;
pub mod ibstatus;
pub mod ibswinfo;
pub mod ibv_devinfo;
pub mod mlxcables;
pub mod mlxlink;
pub mod mst_status;
pub mod nccl_log;
pub mod node_exporter;
pub mod perf_fields;
pub mod perfquery;
pub mod port_index;
pub mod portinfo;
pub mod rdma_link;
pub mod show_gids;
pub mod sminfo;
