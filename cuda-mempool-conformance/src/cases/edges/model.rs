//! The model of the edge trials: a row (a value of one argument, the answer expected, whether its
//! call is watched for a hang), a class of rows (one API and argument: one trial), the helpers that
//! build rows, and the trial of a class (its runner is `run.rs`).

use crate::cases::prelude::*;

pub const E_VALUE: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
pub const E_OOM: CUresult = CUresult::CUDA_ERROR_OUT_OF_MEMORY;
pub const MIB: usize = 1 << 20;
pub const POSIX: u64 = 1;

/// The answer a row expects.
#[derive(Clone, Copy, Debug)]
pub enum Want {
    /// This code; after a success, the class's check of the value's effect too.
    Code(CUresult),
    /// The documented code, or a declared departure's (`driver/departures.rs`).
    Departure(&'static str),
}
pub const REFUSED: Want = Want::Code(E_VALUE);
pub const ACCEPTED: Want = Want::Code(SUCCESS);
pub const OOM: Want = Want::Code(E_OOM);

/// Whether a row's call runs on a watched thread (`harness::bounded`), given up after
/// `Deadline::driver_hang`: the driver may leave it unanswered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watch {
    /// Called on the trial's thread.
    Off,
    /// An argument beyond the device's memory (where the driver was seen to hang): watched for a
    /// quarter of the deadline (`Deadline::beyond_device`: the out-of-memory path is slow); a hang
    /// fails the row.
    On,
    /// A call with this declared hang (`hangs::HANGS`), watched for a twentieth of the deadline
    /// (`Deadline::driver_hang`): a hang is judged as it declares.
    Hangs(&'static str),
}

/// One row: the value the argument takes, its name in a failure message, the answer expected,
/// whether its call is watched.
pub struct Row {
    pub value: u64,
    pub label: String,
    pub want: Want,
    pub watch: Watch,
}

/// `rows`, each watched as `watch` says.
pub fn watched(rows: Vec<Row>, watch: Watch) -> Vec<Row> {
    rows.into_iter().map(|r| Row { watch, ..r }).collect()
}

/// What one call under a row came to: the driver's code and, after a success, what the class's
/// check of the effect found. Whatever the call got (a pool, an allocation, an fd) is given back
/// before it returns.
pub struct Answer {
    pub code: CUresult,
    pub effect: R,
}
impl Answer {
    pub fn code(code: CUresult) -> R<Answer> {
        Ok(Answer { code, effect: Ok(()) })
    }
}

/// Whom an edge trial runs beside.
#[derive(Clone, Copy)]
pub enum Sharing {
    /// Any trial.
    Shared,
    /// No other trial in its process ([`Case::alone`]): it provokes out-of-memory in it or watches
    /// reserved memory.
    Alone,
    /// Beside no trial that holds memory: it asks for more than the device has (the driver's
    /// out-of-memory path, up to 9 s on the H100 beside a dozen processes creating contexts, refused
    /// another process's cuGraphLaunch meanwhile), as the `caps::beyond_reported_total_*` trials do.
    Beyond,
}

/// One (API, argument): the trial `edges_<arg>` of the API.
pub struct Edge {
    pub api: u32,
    pub arg: &'static str,
    pub needs: &'static [Cap],
    /// Whom it runs beside.
    pub sharing: Sharing,
    pub rows: fn(&Env) -> Vec<Row>,
    pub call: fn(&Env, u64) -> R<Answer>,
}

/// Rows from (value, name) pairs, all expecting `want`.
pub fn named(values: &[(u64, &str)], want: Want) -> Vec<Row> {
    values
        .iter()
        .map(|&(value, name)| Row {
            value,
            label: format!("{name} ({value:#x})"),
            want,
            watch: Watch::Off,
        })
        .collect()
}

/// One row per bit `lo..=hi`, each alone over `base` (`base | 1 << k`), all expecting `want`.
pub fn each_bit(base: u64, base_name: &str, lo: u32, hi: u32, want: Want) -> Vec<Row> {
    (lo..=hi)
        .map(|k| {
            let value = base | 1u64 << k;
            let label = match base_name {
                "" => format!("bit {k} ({value:#x})"),
                b => format!("{b} | bit {k} ({value:#x})"),
            };
            Row {
                value,
                label,
                want,
                watch: Watch::Off,
            }
        })
        .collect()
}

/// An int argument as a row value (its 32 bits), and back.
pub fn int(v: i32) -> u64 {
    v as u32 as u64
}
pub fn as_int(v: u64) -> i32 {
    v as u32 as i32
}

/// Device ordinals no device has: -1, the count of devices, one past it, INT_MAX and INT_MIN.
pub fn bad_ordinals(e: &Env) -> Vec<(u64, String)> {
    let n = e.m.devices.len() as i32;
    vec![
        (int(-1), "-1".to_string()),
        (int(n), format!("the device count {n}")),
        (int(n + 1), format!("the device count + 1 ({})", n + 1)),
        (int(i32::MAX), "INT_MAX".to_string()),
        (int(i32::MIN), "INT_MIN".to_string()),
    ]
}
pub fn ordinal_rows(e: &Env, want: Want) -> Vec<Row> {
    bad_ordinals(e)
        .into_iter()
        .map(|(value, label)| Row {
            value,
            label,
            want,
            watch: Watch::Off,
        })
        .collect()
}

/// Location types no header knows (CUDA 13.5's INVISIBLE and DEVICE_LOCALITY_DOMAIN, 5 and 6, are
/// left out: a newer driver may take them), the INVALID 0 and the MAX sentinel among them.
pub const UNKNOWN_LOCATION_TYPES: &[(u64, &str)] = &[
    (0, "CU_MEM_LOCATION_TYPE_INVALID"),
    (7, "7"),
    (8, "8"),
    (16, "16"),
    (0x1000, "0x1000"),
    (0x7fff_ffff, "CU_MEM_LOCATION_TYPE_MAX"),
    (0x8000_0000, "INT_MIN as unsigned"),
    (0xffff_ffff, "UINT_MAX"),
];
