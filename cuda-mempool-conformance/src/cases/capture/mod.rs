//! Stream-ordered allocation under stream capture (trials named `…::capture::…`): what
//! cuMemAllocAsync (820), cuMemAllocFromPoolAsync (821) and cuMemFreeAsync (822) do on a capturing
//! stream in each capture mode — graph memory nodes instead of allocations, the address fixed at
//! capture, relaunch rules with and without CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH, graph
//! memory accounting and trimming. What the pool APIs answer while a stream captures is
//! `pool_calls`'s.
//!
//! Every trial runs alone in its process (`alone`): a stream capturing in global mode makes
//! other threads' unsafe calls fail. Each ends its capture on every path, destroys its graphs and
//! trims the device's graph memory, and checks that none is left.

mod all;
mod allocs;
mod graph;
mod pool_calls;

pub use all::cases;
pub(crate) use graph::{capture, Exec, Graph};
