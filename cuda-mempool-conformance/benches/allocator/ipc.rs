//! The two messages of the ipc group, between the exporter (this process) and its `bench-ipc`
//! child: declared once here, written and read by both ends.

use serde::{Deserialize, Serialize};

/// Exporter to importer (sent with the pool's fd): each pointer's `CUmemPoolPtrExportData`, as hex.
#[derive(Serialize, Deserialize)]
pub(super) struct Exported {
    pub(super) data: Vec<String>,
}

/// Importer to exporter: the time of each pointer's import, and of the pool's, in microseconds.
#[derive(Serialize, Deserialize)]
pub(super) struct Imported {
    pub(super) import_us: Vec<f64>,
    pub(super) pool_us: f64,
}
