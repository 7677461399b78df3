//! 826 cuMemPoolExportToShareableHandle and 829 cuMemPoolImportFromShareableHandle: the handle
//! type and the flags.

use super::model::*;
use crate::cases::prelude::*;
use crate::driver::cu::CUmemAllocationHandleType_enum as HT;

/// Export an IPC pool's handle with `ht` and `flags` into a 64-byte buffer; an fd it got is closed.
fn export_code(e: &Env, ht: u64, flags: u64) -> R<Answer> {
    let pool = Pool::ipc(e.dev)?;
    let mut buf = [0xffu8; 64];
    let code = unsafe { cuMemPoolExportToShareableHandle(buf.as_mut_ptr().cast(), pool.0, HT(ht as u32), flags) };
    let fd = i32::from_ne_bytes(buf[..4].try_into().unwrap());
    if code == SUCCESS && fd >= 0 {
        crate::os::close(fd);
    }
    Answer::code(code)
}

/// "flags: must be 0": each of the 64 bits alone, and all of them.
fn flags_rows(_: &Env) -> Vec<Row> {
    let mut v = each_bit(0, "", 0, 63, REFUSED);
    v.extend(named(&[(u64::MAX, "every bit")], REFUSED));
    v
}
fn export_flags(e: &Env, v: u64) -> R<Answer> {
    export_code(e, POSIX, v)
}

/// A POSIX-only pool: NONE, the Windows types alone and beside POSIX, each unknown bit alone and
/// beside POSIX, and every bit but fabric (a fabric export can crash R580: `pool.rs`).
fn export_handle_type_rows(_: &Env) -> Vec<Row> {
    let mut v = named(
        &[
            (0, "NONE"),
            (2, "WIN32"),
            (4, "WIN32_KMT"),
            (3, "POSIX | WIN32"),
            (5, "POSIX | WIN32_KMT"),
        ],
        REFUSED,
    );
    v.extend(each_bit(0, "", 4, 31, REFUSED));
    v.extend(each_bit(POSIX, "POSIX", 4, 31, REFUSED));
    v.extend(named(
        &[
            (0x7fff_fff7, "INT_MAX but fabric"),
            (0xffff_fff7, "UINT_MAX but fabric"),
        ],
        REFUSED,
    ));
    v
}
fn export_handle_type(e: &Env, v: u64) -> R<Answer> {
    export_code(e, v, 0)
}

/// Import a fresh export of an IPC pool with `ht` and `flags`: the driver's code. A pool it got is
/// destroyed; the fd stays the caller's (one the import closed is not closed again).
fn import_code(e: &Env, ht: u64, flags: u64) -> R<Answer> {
    use std::os::fd::AsRawFd;
    let pool = Pool::ipc(e.dev)?;
    let fd = export_pool_fd(pool.0)?;
    let raw = fd.as_raw_fd();
    let mut imported = std::ptr::null_mut();
    let code =
        unsafe { cuMemPoolImportFromShareableHandle(&mut imported, raw as isize as *mut _, HT(ht as u32), flags) };
    if code == SUCCESS && !imported.is_null() {
        let _ = unsafe { cuMemPoolDestroy(imported) };
    }
    if !crate::os::fd_is_open(raw) {
        std::mem::forget(fd);
    }
    Answer::code(code)
}
fn import_flags(e: &Env, v: u64) -> R<Answer> {
    import_code(e, POSIX, v)
}
/// NONE, and each unknown bit beside POSIX; no Windows or fabric type, which would make the
/// driver read the fd number as a pointer.
fn import_handle_type_rows(_: &Env) -> Vec<Row> {
    let mut v = named(&[(0, "NONE")], REFUSED);
    v.extend(each_bit(POSIX, "POSIX", 4, 31, REFUSED));
    v
}
fn import_handle_type(e: &Env, v: u64) -> R<Answer> {
    import_code(e, v, 0)
}

pub const EDGES: &[Edge] = &[
    // Kills 826-flags-high-half-dropped (and 826-flags-ignored).
    Edge {
        api: 826,
        arg: "flags",
        needs: &[Cap::Ipc],
        sharing: Sharing::Shared,
        rows: flags_rows,
        call: export_flags,
    },
    // Kills 826-handle-type-unknown-bits-dropped.
    Edge {
        api: 826,
        arg: "handle_type",
        needs: &[Cap::Ipc],
        sharing: Sharing::Shared,
        rows: export_handle_type_rows,
        call: export_handle_type,
    },
    // Kills 829-flags-high-half-dropped (and 829-flags-ignored).
    Edge {
        api: 829,
        arg: "flags",
        needs: &[Cap::Ipc],
        sharing: Sharing::Shared,
        rows: flags_rows,
        call: import_flags,
    },
    // Kills 829-handle-type-unknown-bits-dropped.
    Edge {
        api: 829,
        arg: "handle_type",
        needs: &[Cap::Ipc],
        sharing: Sharing::Shared,
        rows: import_handle_type_rows,
        call: import_handle_type,
    },
];
