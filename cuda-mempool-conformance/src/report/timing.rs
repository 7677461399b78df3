//! A trial's timing as report.json has it (`model::Timing`) and as the harness keeps it
//! (`outcome::Timing`), each into the other: the report keeps the run's, and the timeline draws
//! the report's.

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

/// The harness's timing `t` as the report keeps it.
pub fn to_model(t: &Timing) -> model::Timing {
    model::Timing {
        worker: t.worker.clone(),
        wait_s: t.wait_s,
        turn: t.turn.map(|turn| match turn {
            Turn::Free => model::Turn::Free,
            Turn::Shared => model::Turn::Shared,
            Turn::Beyond => model::Turn::Beyond,
            Turn::Exclusive => model::Turn::Exclusive,
        }),
        settle_s: t.settle_s,
        children: t
            .children
            .iter()
            .map(|c| model::ChildSpan {
                role: c.role.clone(),
                span: c.span,
                extra: model::Extra::new(),
            })
            .collect(),
        worker_start: t.worker_start,
        extra: model::Extra::new(),
    }
}
