//! Layer 3, how trials run: in worker processes (`worker`, `scheduler`) or in this process's test
//! threads, a crash case in a child of its own (`runner`); fewer workers where the library holds
//! each new process at its first GPU work (`first_wait`). Hands back judged records; reports
//! nothing.

mod admission;
mod clock;
pub mod first_wait;
mod gates;
pub mod interrupt;
pub mod order;
mod runner;
pub mod scheduler;
pub mod stop;
mod turns;
pub mod worker;

pub use clock::{since_start, RUN_START};
pub use runner::{run_again, Runner};
