//! Layer 3, what a run says: the summary (Markdown and JSON), the last screen, failures grouped by cause, JUnit, the
//! diff of two reports, many reports as one matrix, an expectation file written from a report, and
//! the timeline of a run.
//! Reads the harness's records; never runs a trial.

pub mod causes;
pub mod diff;
pub mod expectations;
pub mod junit;
pub mod matrix;
pub mod screen;
pub mod summary;
pub mod timeline;
