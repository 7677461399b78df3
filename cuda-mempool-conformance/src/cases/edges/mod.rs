//! The edges of every size, ordinal, flag and bit-field argument of the 14 APIs, table-driven: each
//! trial is one (API, argument) and runs every row of its table (the extremes, and each unknown bit
//! or value on its own), reporting every row the driver answers wrongly, not only the first.
//! Garbage handles and pointers are not here (they may crash the driver: see the API groups).

mod access;
mod attr;
mod ipc;
mod model;
mod props;
mod run;
mod sizes;

use crate::cases::prelude::*;

fn all() -> impl Iterator<Item = &'static model::Edge> {
    [sizes::EDGES, props::EDGES, ipc::EDGES, access::EDGES, attr::EDGES]
        .into_iter()
        .flatten()
}

pub fn cases() -> Vec<Case> {
    all().map(run::case).collect()
}

/// Child role `edge-rows`: see `run::rows_child_main`.
pub fn rows_child_main() -> i32 {
    run::rows_child_main(&all().collect::<Vec<_>>())
}
