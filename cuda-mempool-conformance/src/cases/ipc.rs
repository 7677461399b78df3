//! 825 cuMemPoolExportPointer, 826 cuMemPoolExportToShareableHandle, 829
//! cuMemPoolImportFromShareableHandle, 830 cuMemPoolImportPointer: what one process can show —
//! successful exports, what export and import refuse, and a process importing its own export.
//! Cross-process round trips are their own group.

use crate::cases::prelude::*;
use crate::os::{fd_diff, fd_table};
use std::os::fd::AsRawFd;

use crate::driver::cu::CUmemAllocationHandleType_enum as HT;
const E_VALUE: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
const POSIX: HT = HT::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;

fn export_fd(pool: CUmemoryPool, ht: HT, flags: u64) -> (CUresult, i32) {
    let mut fd: i32 = -1;
    let r = unsafe { cuMemPoolExportToShareableHandle((&mut fd as *mut i32).cast(), pool, ht, flags) };
    (r, fd)
}

fn close(fd: i32) {
    if fd >= 0 {
        crate::os::close(fd);
    }
}

/// Allocate 4 KiB from `pool`, call cuMemPoolExportPointer into `data`, free; the driver's code.
fn export_pointer_code(pool: CUmemoryPool, data: *mut CUmemPoolPtrExportData) -> R<CUresult> {
    let s = Stream::new()?;
    let a = alloc_from(pool, 4096, s.0)?;
    s.sync()?;
    let r = unsafe { cuMemPoolExportPointer(data, a) };
    free_async(a, s.0)?;
    s.sync()?;
    Ok(r)
}

/// With the pool's handle exported (so that a pointer export can succeed), `bad` on a 1 MiB
/// allocation, then that allocation's genuine export: both codes (a refusal of `bad` is then its
/// own, not the pool's).
fn export_beside_genuine(dev: CUdevice, bad: impl FnOnce(CUdeviceptr) -> CUresult) -> R<(CUresult, CUresult)> {
    let p = Pool::ipc(dev)?;
    drop(export_pool_fd(p.0)?);
    let s = Stream::new()?;
    let a = alloc_from(p.0, 1 << 20, s.0)?;
    s.sync()?;
    let bad = bad(a);
    let mut data = CUmemPoolPtrExportData::default();
    let genuine = unsafe { cuMemPoolExportPointer(&mut data, a) };
    free_async(a, s.0)?;
    s.sync()?;
    Ok((bad, genuine))
}

/// Import `fd` (an export of this process) with handle type `ht` and `flags`: the driver's code. A
/// pool imported all the same is destroyed.
fn import_code(fd: i32, ht: HT, flags: u64) -> CUresult {
    let mut pool = std::ptr::null_mut();
    let r = unsafe { cuMemPoolImportFromShareableHandle(&mut pool, fd as isize as *mut _, ht, flags) };
    if r == SUCCESS && !pool.is_null() {
        let _ = unsafe { cuMemPoolDestroy(pool) };
    }
    r
}

/// Close `fd` after imports from it, which must have left it open (it stays the caller's); one an
/// import closed is not closed again.
fn keep_fd(fd: std::os::fd::OwnedFd) -> R {
    let raw = fd.as_raw_fd();
    if crate::os::fd_is_open(raw) {
        return Ok(());
    }
    std::mem::forget(fd);
    Err(format!(
        "cuMemPoolImportFromShareableHandle closed fd {raw}, which stays the caller's: the caller's own close \
         is then a double close"
    )
    .into())
}

/// (case, handle type, flags, expected code) for import refusals. Each imports a genuine export of
/// an IPC pool of this process (which R580 allows), so the refused argument is the only bad one;
/// the same import with POSIX and flags 0 then succeeds.
const IMPORT_ROWS: &[(&str, HT, u64, CUresult)] = &[
    ("handle_type_none_refused", HT::CU_MEM_HANDLE_TYPE_NONE, 0, E_VALUE),
    ("nonzero_flags_refused", POSIX, 1, E_VALUE),
];

/// (case, pool maker (true: IPC pool), handle type, flags, expected code) for export refusals.
const EXPORT_ROWS: &[(&str, bool, HT, u64, CUresult)] = &[
    ("non_ipc_pool_refused", false, POSIX, 0, E_VALUE),
    (
        "wrong_handle_type_refused",
        true,
        HT::CU_MEM_HANDLE_TYPE_WIN32,
        0,
        E_VALUE,
    ),
    (
        "handle_type_none_refused",
        true,
        HT::CU_MEM_HANDLE_TYPE_NONE,
        0,
        E_VALUE,
    ),
    ("nonzero_flags_refused", true, POSIX, 1, E_VALUE),
];

/// Pattern bytes the same-process trials write through the exporter's pointer.
const SAME_BYTES: usize = 64 * 1024;
fn same_pattern() -> Vec<u8> {
    (0..SAME_BYTES)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[1])
        .collect()
}

/// One process as both sides: an IPC pool with one allocation holding `same_pattern`, its export
/// imported back as a second pool. Dropping it frees the imports, then the allocation, then
/// destroys both pools.
pub(super) struct SameProcess {
    pub(super) stream: Stream,
    /// Imports freed on drop (a trial that frees one itself takes it off).
    pub(super) imports: Vec<CUdeviceptr>,
    ptr: CUdeviceptr,
    data: CUmemPoolPtrExportData,
    /// None once a trial destroyed it itself.
    pub(super) imported: Option<Pool>,
    pool: Pool,
}
impl SameProcess {
    pub(super) fn new(dev: CUdevice) -> R<SameProcess> {
        let pool = Pool::ipc(dev)?;
        let fd = export_pool_fd(pool.0)?;
        let mut imported = std::ptr::null_mut();
        let r = import_pool_fd(fd.as_raw_fd(), &mut imported);
        keep_fd(fd)?;
        ok("cuMemPoolImportFromShareableHandle(this process's own export)", r)?;
        let imported = Some(Pool(imported));
        let stream = Stream::new()?;
        let ptr = alloc_from(pool.0, SAME_BYTES, stream.0)?;
        let mut s = SameProcess {
            stream,
            imports: Vec::new(),
            ptr,
            data: CUmemPoolPtrExportData::default(),
            imported,
            pool,
        };
        let host = same_pattern();
        ok("cuMemcpyHtoDAsync", unsafe {
            cuMemcpyHtoDAsync_v2(ptr, host.as_ptr().cast(), host.len(), s.stream.0)
        })?;
        s.stream.sync()?;
        ok("cuMemPoolExportPointer", unsafe {
            cuMemPoolExportPointer(&mut s.data, ptr)
        })?;
        Ok(s)
    }
    pub(super) fn imported(&self) -> R<CUmemoryPool> {
        Ok(self.imported.as_ref().ok_or("the imported pool is gone")?.0)
    }
    /// Import the allocation through the imported pool.
    pub(super) fn import(&mut self) -> R<CUdeviceptr> {
        let mut q: CUdeviceptr = 0;
        ok(
            "cuMemPoolImportPointer(through the imported pool, in the exporting process)",
            unsafe { cuMemPoolImportPointer(&mut q, self.imported()?, &mut self.data) },
        )?;
        self.imports.push(q);
        Ok(q)
    }
    /// `p` holds the pattern written through the exporter's pointer.
    pub(super) fn check_bytes(&self, p: CUdeviceptr, what: &str) -> R {
        let mut host = vec![0u8; SAME_BYTES];
        ok("cuMemcpyDtoHAsync", unsafe {
            cuMemcpyDtoHAsync_v2(host.as_mut_ptr().cast(), p, host.len(), self.stream.0)
        })?;
        self.stream.sync()?;
        if let Some(i) = host.iter().zip(same_pattern()).position(|(a, b)| *a != b) {
            blame::set(830);
            return Err(format!("{what}: byte {i} differs from what the exporter wrote").into());
        }
        Ok(())
    }
}
impl Drop for SameProcess {
    fn drop(&mut self) {
        for &q in &self.imports {
            let _ = unsafe { cuMemFreeAsync(q, self.stream.0) };
        }
        let _ = unsafe { cuStreamSynchronize(self.stream.0) };
        if self.ptr != 0 {
            let _ = unsafe { cuMemFreeAsync(self.ptr, self.stream.0) };
        }
        let _ = unsafe { cuStreamSynchronize(self.stream.0) };
    }
}

pub fn cases() -> Vec<Case> {
    let mut v = vec![
        Case::gpu(826, "posix_fd_export", |e| {
            let p = Pool::ipc(e.dev)?;
            let (r, fd) = export_fd(p.0, POSIX, 0);
            close(fd);
            ok("cuMemPoolExportToShareableHandle", r)?;
            ensure!(fd >= 0, "export succeeded with fd {fd}");
            Ok(())
        })
        .needs(Cap::Ipc),
        Case::gpu(826, "default_pool_refused", |e| {
            let (r, fd) = export_fd(default_pool(e.dev)?, POSIX, 0);
            close(fd);
            expect("export of the default pool", r, E_VALUE)
        }),
        Case::gpu(826, "null_handle_out_invalid_value", |e| {
            let p = Pool::ipc(e.dev)?;
            expect(
                "export with handle out NULL",
                unsafe { cuMemPoolExportToShareableHandle(std::ptr::null_mut(), p.0, POSIX, 0) },
                E_VALUE,
            )
        })
        .needs(Cap::Ipc),
        Case::gpu(825, "export_pointer_after_pool_export", |e| {
            let p = Pool::ipc(e.dev)?;
            let (r, fd) = export_fd(p.0, POSIX, 0);
            close(fd);
            ok("cuMemPoolExportToShareableHandle", r)?;
            let s = Stream::new()?;
            let a = alloc_from(p.0, 1 << 20, s.0)?;
            s.sync()?;
            let mut data = CUmemPoolPtrExportData::default();
            let r = unsafe { cuMemPoolExportPointer(&mut data, a) };
            free_async(a, s.0)?;
            s.sync()?;
            ok("cuMemPoolExportPointer", r)?;
            ensure!(data.reserved.iter().any(|&b| b != 0), "export data is all zero");
            Ok(())
        })
        .needs(Cap::Ipc),
        Case::gpu(825, "export_pointer_before_pool_export", |e| {
            // cuda-samples export the pool handle before any pointer; this records what the driver
            // says to a pointer export from an IPC pool whose handle was never exported.
            let p = Pool::ipc(e.dev)?;
            let mut data = CUmemPoolPtrExportData::default();
            expect(
                "cuMemPoolExportPointer before the pool was exported",
                export_pointer_code(p.0, &mut data)?,
                E_VALUE,
            )
        })
        .needs(Cap::Ipc),
        Case::gpu(825, "pointer_of_non_ipc_pool_refused", |e| {
            let p = Pool::on_device(e.dev)?;
            let mut data = CUmemPoolPtrExportData::default();
            expect(
                "cuMemPoolExportPointer(non-IPC pool)",
                export_pointer_code(p.0, &mut data)?,
                E_VALUE,
            )
        }),
        Case::gpu(825, "cuMemAlloc_pointer_refused", |_| {
            let mut a: CUdeviceptr = 0;
            ok("cuMemAlloc", unsafe { cuMemAlloc_v2(&mut a, 4096) })?;
            let mut data = CUmemPoolPtrExportData::default();
            let r = unsafe { cuMemPoolExportPointer(&mut data, a) };
            let _ = unsafe { cuMemFree_v2(a) };
            expect("cuMemPoolExportPointer(cuMemAlloc memory)", r, E_VALUE)
        }),
        // A NULL data pointer is refused; the genuine export right after succeeds, so the NULL is
        // what was refused.
        Case::gpu(825, "null_data_out_invalid_value", |e| {
            let (null, real) =
                export_beside_genuine(e.dev, |a| unsafe { cuMemPoolExportPointer(std::ptr::null_mut(), a) })?;
            expect("cuMemPoolExportPointer(NULL, ptr)", null, E_VALUE)?;
            ok("cuMemPoolExportPointer(&data, ptr) after the NULL call", real)
        })
        .needs(Cap::Ipc),
        Case::gpu(825, "null_pointer_invalid_value", |_| {
            let mut data = CUmemPoolPtrExportData::default();
            expect(
                "cuMemPoolExportPointer(&data, 0)",
                unsafe { cuMemPoolExportPointer(&mut data, 0) },
                E_VALUE,
            )
        }),
        // Docs: CUDA_ERROR_INVALID_VALUE. R580 answers CUDA_ERROR_UNKNOWN (999) for a bad fd.
        Case::gpu(829, "invalid_fd_unknown_error_driver_behaviour", |e| {
            let mut pool = std::ptr::null_mut();
            let r = import_pool_fd(-1, &mut pool);
            expect_code(
                &e.policy(),
                "bad_fd_unknown_error",
                "cuMemPoolImportFromShareableHandle(fd -1)",
                r,
            )
        }),
        // Docs: CUDA_ERROR_INVALID_VALUE. R580 answers CUDA_ERROR_UNKNOWN (999).
        Case::gpu(829, "non_pool_fd_unknown_error_driver_behaviour", |e| {
            // An fd that is not a CUDA pool handle (stdin's /dev/null duplicate).
            let fd = crate::os::dup(0);
            let mut pool = std::ptr::null_mut();
            let r = import_pool_fd(fd, &mut pool);
            close(fd);
            expect_code(
                &e.policy(),
                "bad_fd_unknown_error",
                "cuMemPoolImportFromShareableHandle(a non-CUDA fd)",
                r,
            )
        }),
        // On the very driver version the departure `bad_fd_unknown_error` was recorded on, the
        // recorded answer is the answer (`invalid_fd_unknown_error_driver_behaviour` takes the
        // documented INVALID_VALUE there as the driver having changed): the same driver cannot have,
        // so a documented answer here comes from something between the suite and the driver.
        Case::gpu(829, "invalid_fd_answer_as_recorded_on_this_driver", |_| {
            let d = crate::driver::departures::get("bad_fd_unknown_error");
            let (version, _) = crate::driver::departures::driver();
            if !d.seen_on.contains(&version) {
                return ignore(format!(
                    "deviation `{}` was recorded on driver {}, this is {version:?}",
                    d.id,
                    d.seen_on.join(", ")
                ));
            }
            let mut pool = std::ptr::null_mut();
            let r = import_pool_fd(-1, &mut pool);
            let what = "cuMemPoolImportFromShareableHandle(fd -1), on a driver version its answer was recorded on";
            observe::record(observe::Observation {
                api: Some(829),
                call: what.to_string(),
                documented: d.documented.map_or_else(String::new, code_name),
                expected: code_name(d.observed),
                observed: code_name(r),
                ok: r == d.observed,
                deviation: Some(d.id.to_string()),
                ..Default::default()
            });
            if r != d.observed {
                blame::set(829);
                return Err(format!(
                    "{what}: driver {version} answered {} when deviation `{}` was recorded on it, but {} now",
                    code_name(d.observed),
                    d.id,
                    code_name(r)
                )
                .into());
            }
            Ok(())
        }),
        Case::gpu(829, "null_pool_out_invalid_value", |e| {
            let p = Pool::ipc(e.dev)?;
            let (r, fd) = export_fd(p.0, POSIX, 0);
            ok("export", r)?;
            let r =
                unsafe { cuMemPoolImportFromShareableHandle(std::ptr::null_mut(), fd as isize as *mut _, POSIX, 0) };
            close(fd);
            expect("import with pool out NULL", r, E_VALUE)
        })
        .needs(Cap::Ipc),
        // An import takes no fd of its own past the pool's life, and leaves the caller's open: after
        // a first import and destruction (whatever the driver opens once per process), importing
        // and destroying again leaves the process's fds as they were.
        Case::gpu(829, "import_leaves_fds_as_they_were", |e| {
            let p = Pool::ipc(e.dev)?;
            let fd = export_pool_fd(p.0)?;
            let raw = fd.as_raw_fd();
            let first = import_code(raw, POSIX, 0);
            if !crate::os::fd_is_open(raw) {
                return keep_fd(fd);
            }
            ok("cuMemPoolImportFromShareableHandle (first)", first)?;
            let before = fd_table();
            let r = import_code(raw, POSIX, 0);
            let after = fd_table();
            keep_fd(fd)?;
            ok("cuMemPoolImportFromShareableHandle (again)", r)?;
            ensure!(
                before == after,
                "importing and destroying the pool changed the process's fds: {}",
                fd_diff(&before, &after)
            );
            Ok(())
        })
        .needs(Cap::Ipc)
        .alone(),
        Case::gpu(829, "import_in_same_process_succeeds_driver_behaviour", |e| {
            // Importing one's own export in the same process: R580 allows it.
            let p = Pool::ipc(e.dev)?;
            let (r, fd) = export_fd(p.0, POSIX, 0);
            ok("export", r)?;
            let mut imported = std::ptr::null_mut();
            let r = import_pool_fd(fd, &mut imported);
            close(fd);
            if r == SUCCESS {
                let _ = unsafe { cuMemPoolDestroy(imported) };
            }
            ok("import of own export in the same process", r)
        })
        .needs(Cap::Ipc),
        Case::gpu(830, "import_pointer_on_non_imported_pool_refused", |e| {
            let p = Pool::ipc(e.dev)?;
            let (r, fd) = export_fd(p.0, POSIX, 0);
            close(fd);
            ok("cuMemPoolExportToShareableHandle", r)?;
            let s = Stream::new()?;
            let a = alloc_from(p.0, 4096, s.0)?;
            s.sync()?;
            let mut data = CUmemPoolPtrExportData::default();
            ok("cuMemPoolExportPointer", unsafe {
                cuMemPoolExportPointer(&mut data, a)
            })?;
            let mut b: CUdeviceptr = 0;
            let r = unsafe { cuMemPoolImportPointer(&mut b, p.0, &mut data) };
            free_async(a, s.0)?;
            s.sync()?;
            expect("cuMemPoolImportPointer into the exporting pool", r, E_VALUE)
        })
        .needs(Cap::Ipc),
        // Docs: the export data is for "a specific allocation"; an address inside one is not its
        // start (cuMemFree's rule for the same case is INVALID_VALUE). The allocation's own address
        // then exports, so the interior address is what was refused.
        // Kills 825-interior-exports-base.
        Case::gpu(825, "interior_pointer_refused", |e| {
            let mut data = CUmemPoolPtrExportData::default();
            let (inner, whole) =
                export_beside_genuine(e.dev, |a| unsafe { cuMemPoolExportPointer(&mut data, a + 4096) })?;
            expect("cuMemPoolExportPointer(allocation + 4096)", inner, E_VALUE)?;
            ok("cuMemPoolExportPointer(the allocation itself)", whole)
        })
        .needs(Cap::Ipc),
        // One process as exporter and importer (R580 imports its own pool:
        // import_in_same_process_succeeds_driver_behaviour): the import is a pool of its own.
        // Kills 829-same-process-exporter-pool.
        Case::gpu(829, "same_process_import_gives_a_new_pool_handle", |e| {
            let s = SameProcess::new(e.dev)?;
            if s.imported()? == s.pool.0 {
                blame::set(829);
                return Err("importing this process's own export gave back the exporting pool's handle".into());
            }
            Ok(())
        })
        .needs(Cap::Ipc),
        // A pointer imported through that pool: a mapping of its own (another address than the
        // exporter's) over the same memory (the exporter's bytes). Kills 830-returns-exporter-pointer.
        Case::gpu(830, "same_process_import_pointer_new_address_same_bytes", |e| {
            let mut s = SameProcess::new(e.dev)?;
            let q = s.import()?;
            note(format!("exporter's address {:#x}, import's {q:#x}", s.ptr));
            if q == s.ptr {
                blame::set(830);
                return Err(
                    format!("the import is the exporter's own address {q:#x}, not a mapping of its own").into(),
                );
            }
            s.check_bytes(q, "the import")
        })
        .needs(Cap::Ipc),
        // The documented order: the import freed first (complete before the exporter's free),
        // then the exporter's allocation, which the import's free left alone; then the imported
        // pool, which holds nothing, is destroyed. Kills 830-returns-exporter-pointer (the
        // import's free is then the exporter's, and the exporter's own free a double free).
        Case::gpu(822, "same_process_import_freed_before_the_exporter", |e| {
            let mut s = SameProcess::new(e.dev)?;
            let q = s.import()?;
            ok("cuMemFreeAsync(the import)", unsafe { cuMemFreeAsync(q, s.stream.0) })?;
            s.imports.clear();
            s.stream.sync()?;
            s.check_bytes(s.ptr, "the exporter's allocation after the import's free")?;
            let p = std::mem::take(&mut s.ptr);
            ok(
                "cuMemFreeAsync(the exporter's allocation, after the import's)",
                unsafe { cuMemFreeAsync(p, s.stream.0) },
            )?;
            s.stream.sync()?;
            let imported = s.imported.take().ok_or("the imported pool is gone")?.take();
            ok("cuMemPoolDestroy(the imported pool, its import freed)", unsafe {
                cuMemPoolDestroy(imported)
            })
        })
        .needs(Cap::Ipc),
    ];
    for &(name, ht, flags, want) in IMPORT_ROWS {
        v.push(
            Case::gpu(829, name, move |e| {
                let p = Pool::ipc(e.dev)?;
                let fd = export_pool_fd(p.0)?;
                let r = import_code(fd.as_raw_fd(), ht, flags);
                let genuine = import_code(fd.as_raw_fd(), POSIX, 0);
                keep_fd(fd)?;
                expect("cuMemPoolImportFromShareableHandle", r, want)?;
                ok(
                    "cuMemPoolImportFromShareableHandle(POSIX, flags 0) of the same fd",
                    genuine,
                )
            })
            .needs(Cap::Ipc),
        );
    }
    for &(name, ipc, ht, flags, want) in EXPORT_ROWS {
        v.push(
            Case::gpu(826, name, move |e| {
                let p = if ipc {
                    Pool::ipc(e.dev)?
                } else {
                    Pool::on_device(e.dev)?
                };
                let (r, fd) = export_fd(p.0, ht, flags);
                close(fd);
                expect("cuMemPoolExportToShareableHandle", r, want)
            })
            .needs(Cap::Ipc),
        );
    }
    v
}
