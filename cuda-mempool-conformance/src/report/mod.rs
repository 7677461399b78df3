//! Layer 3, what a run says: the summary (Markdown and JSON), the last screen, failures grouped by cause, JUnit, the
//! diff of two reports, many reports as one matrix, an expectation file written from a report, and
//! the timeline of a run. `model` is report.json as one typed model: every reader of a report reads
//! it through that.
//! Reads the harness's records; never runs a trial.

pub mod causes;
pub mod diff;
pub mod expectations;
#[cfg(test)]
mod fixture;
pub mod junit;
pub mod matrix;
pub mod model;
#[cfg(test)]
mod model_check;
#[cfg(test)]
mod render_check;
pub mod screen;
pub mod summary;
pub mod timeline;
pub mod timing;
