//! The edges of every size, ordinal, flag and bit-field argument of the 14 APIs, table-driven: each
//! trial is one (API, argument) and runs every row of its table (the extremes, and each unknown bit
//! or value on its own), reporting every row the driver answers wrongly, not only the first.
//! Garbage handles and pointers are not here (they may crash the driver: see the API groups).

mod access;
mod all;
mod attr;
mod ipc;
mod messages;
mod model;
mod props;
mod run;
mod sizes;

pub use all::{cases, rows_child_main};
