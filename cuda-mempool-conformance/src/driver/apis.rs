//! The 14 APIs by their index in the PhOS support table.

/// Index and name of each API, in index order.
pub const APIS: &[(u32, &str)] = &[
    (820, "cuMemAllocAsync"),
    (821, "cuMemAllocFromPoolAsync"),
    (822, "cuMemFreeAsync"),
    (823, "cuMemPoolCreate"),
    (824, "cuMemPoolDestroy"),
    (825, "cuMemPoolExportPointer"),
    (826, "cuMemPoolExportToShareableHandle"),
    (827, "cuMemPoolGetAccess"),
    (828, "cuMemPoolGetAttribute"),
    (829, "cuMemPoolImportFromShareableHandle"),
    (830, "cuMemPoolImportPointer"),
    (831, "cuMemPoolSetAccess"),
    (832, "cuMemPoolSetAttribute"),
    (833, "cuMemPoolTrimTo"),
];

/// The API's name, or "unknown".
pub fn api_name(index: u32) -> &'static str {
    APIS.iter().find(|a| a.0 == index).map(|a| a.1).unwrap_or("unknown")
}
