//! `--matrix REPORT.json… [--out DIR] [--expect FILE]` (and `cargo xtask matrix`): many reports as
//! one matrix, written as matrix.md, matrix.json and one self-contained matrix.html
//! (templates/matrix.html). Its parts, one job each:
//! - `origin`: a report as the matrix reads it (through the model, `conformance_model`, reports of any age): what it
//!   was run on and with (GPU models, driver, library under test, entry mode, settings);
//! - `fold`: reports into runs (the shards of one run merged back into one, as they always were)
//!   and runs into columns (every run of one origin: a fleet's hosts of one GPU model, driver and
//!   library fold into one column, with a host count and the hosts that differ named);
//! - `verdict`: an API's Test Passed in a column, ✓ only when every trial of it was judged;
//! - `expect`: `--expect FILE`, a fleet's inventory, and its `missing` columns;
//! - `markdown` and `html`: the two drawings (the page opens with the API × column grid);
//! - `rows`: a column's rows (an API's, a cause's, a trial's cell), what `origin` reads a report into;
//! - `columns`: the matrix as data (matrix.json); `program`: reading the files, writing the page,
//!   `--matrix` as a program.

mod columns;
mod expect;
mod fold;
mod html;
mod markdown;
mod origin;
mod program;
mod rows;
#[cfg(test)]
mod tests;
mod verdict;

pub use columns::{Column, Difference, Expected, Matrix, Run, Unreadable};
pub use origin::Origin;
pub use program::{from_files, from_files_expecting, main, DEFAULT_OUT, INCOMPLETE};
pub use rows::{ApiRow, CauseRow, Cell};
