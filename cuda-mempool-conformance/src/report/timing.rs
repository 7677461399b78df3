//! A trial's timing as report.json has it (`model::Timing`), as the harness keeps it
//! (`outcome::Timing`): what the timeline draws from a report.

use crate::harness::child::ChildSpan;
use crate::harness::outcome::{Timing, Turn};
use crate::report::model;

/// `t` as the harness's timing (what the model keeps beyond it, no field of the harness's, is left
/// out).
pub fn of_model(t: &model::Timing) -> Timing {
    Timing {
        worker: t.worker.clone(),
        wait_s: t.wait_s,
        turn: t.turn.map(|turn| match turn {
            model::Turn::Free => Turn::Free,
            model::Turn::Shared => Turn::Shared,
            model::Turn::Beyond => Turn::Beyond,
            model::Turn::Exclusive => Turn::Exclusive,
        }),
        settle_s: t.settle_s,
        children: t
            .children
            .iter()
            .map(|c| ChildSpan {
                role: c.role.clone(),
                span: c.span,
            })
            .collect(),
        worker_start: t.worker_start,
    }
}
