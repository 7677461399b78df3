//! Layer 3, what a run says. report.json is one typed model, the ground floor's `conformance_model`;
//! `build` makes the run's one
//! report from the harness's records and machine (the tables counted in `tables`, the failures
//! grouped in `causes`, the point where the library broke for good found in `broken`, the library's
//! long wait at a new process's first GPU work said in `first_wait`), and every
//! output is drawn from that report: report.json (its serialisation), report.md (`markdown`, the
//! machine in `machine_text`), the last screen (`screen`), JUnit, the timeline, and the files of a
//! run (`files`). Every reader of a report
//! reads it through the model too: the diff of two reports, many reports as one matrix, an
//! expectation file written from a report, a timeline redrawn. Never runs a trial.

pub mod broken;
#[cfg(test)]
mod broken_check;
pub mod build;
pub mod causes;
pub mod diff;
pub mod expectations;
pub mod files;
pub mod first_wait;
#[cfg(test)]
mod fixture;
pub mod junit;
pub mod machine_text;
pub mod markdown;
pub mod matrix;
#[cfg(test)]
mod matrix_check;
#[cfg(test)]
mod model_check;
#[cfg(test)]
mod render_check;
pub mod screen;
pub mod tables;
pub mod timeline;
