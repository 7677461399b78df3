//! Every edge of the tables, in one order: as the suite's trials, and as the rows the `edge-rows`
//! child runs.

use super::model::Edge;
use super::run;
use crate::cases::prelude::*;

fn every() -> impl Iterator<Item = &'static Edge> {
    [
        super::sizes::EDGES,
        super::props::EDGES,
        super::ipc::EDGES,
        super::access::EDGES,
        super::attr::EDGES,
    ]
    .into_iter()
    .flatten()
}

/// The trial of each (API, argument).
pub fn cases() -> Vec<Case> {
    every().map(run::case).collect()
}

/// Child role `edge-rows`, with the settings its entry point read: see `run::rows_child_main`.
pub fn rows_child_main(settings: &std::sync::Arc<crate::harness::settings::Settings>) -> i32 {
    run::rows_child_main(&every().collect::<Vec<_>>(), settings)
}
