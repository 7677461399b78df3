//! The parts of a major's module that bindgen does not write, derived from bindgen's own output and
//! from the headers: C unions rewritten as values every constructor writes whole, `name()` and
//! `Debug` for every enum newtype, `Debug`, `PartialEq`, `Eq` and `Hash` for the structs that hold a
//! union, the test that every type is `Debug`, and the entry-point table `EntryPoints` (one field per function, the ABI version each is resolved at,
//! loaders, call methods). Also the C assertions the ABI probe makes about the table.

mod abi;
mod entry_points;
mod enums;
mod signatures;
mod template;
mod traits;
mod unions;

pub use abi::{abi_versions, candidates, Abi};
pub use entry_points::{table, Table};
pub use enums::{enum_name_and_debug, enum_newtypes};
pub use signatures::{extern_fns, without_extern_fns};
pub use traits::{debug_test, struct_traits};
pub use unions::{probe_entries, whole_unions, WholeUnion};
