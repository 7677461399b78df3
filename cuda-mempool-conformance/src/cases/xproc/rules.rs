//! The rules of imported pools (824, 826, 827–833 on an imported pool): one `ipc-rules` importer
//! asks the driver step by step and sends each answer as it gets it; the rule trials read them.

use super::common::*;
use super::messages::{RuleStep, ToRules};
use crate::cases::messages::{parse, recv, text};
use crate::cases::prelude::*;
use crate::harness::channel::hex;
use crate::harness::channel::{LostStep, Step};
use crate::harness::kept_children;
use serde_json::Value;
use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, OwnedFd};

/// The importer's steps, in the order it takes them. Each answer goes to the exporter as soon as
/// it is known, so an importer that dies or hangs inside one call loses that answer only: the
/// exporter starts another importer that skips what is already answered.
pub(super) const RULE_STEPS: &[&str] = &[
    "import",
    "import_twice",
    "alloc_from_imported",
    "get_release_threshold",
    "get_used_mem_current",
    "set_release_threshold",
    "trim",
    "set_current",
    "get_access_own_device",
    "set_access_own_device",
    "export_imported",
    "import_pointer_null_out",
    "import_pointer_null_data",
    "import_pointer_null_pool",
    "import_pointer",
    "import_pointer_twice",
    "import_pointer_garbage",
    "import_pointer_foreign",
    "free_imported_pointer",
    "peer_get_access_before",
    "peer_set_access",
    "peer_get_access_after",
    "destroy_imported",
];

/// The importer's side of the step protocol.
pub(super) struct Steps<'a> {
    chan: &'a crate::harness::channel::Channel,
    skip: Vec<String>,
}
impl Steps<'_> {
    /// Take step `key` (unless told to skip it) and send its answer at once.
    fn step(&self, key: &str, f: impl FnOnce() -> RuleStep) -> R<Option<RuleStep>> {
        debug_assert!(RULE_STEPS.contains(&key), "unknown step {key}");
        if self.skip.iter().any(|k| k == key) {
            return Ok(None);
        }
        let v = f();
        self.answer(key, &v)?;
        Ok(Some(v))
    }
    /// A step this importer cannot take, and why.
    fn cannot(&self, key: &str, why: &str, blame: u32) -> R {
        self.step(key, || RuleStep {
            not_run: Some(why.into()),
            blame: Some(blame),
            ..RuleStep::default()
        })
        .map(|_| ())
    }
    /// A step later steps depend on: taken even when its answer is already known (a new
    /// importer needs its result), answered only when it is not.
    fn always(&self, key: &str, f: impl FnOnce() -> RuleStep) -> R<RuleStep> {
        debug_assert!(RULE_STEPS.contains(&key), "unknown step {key}");
        let v = f();
        if !self.skip.iter().any(|k| k == key) {
            self.answer(key, &v)?;
        }
        Ok(v)
    }
    fn answer(&self, key: &str, value: &RuleStep) -> R {
        let key = key.to_string();
        self.chan.send(&Step::Answer { key, value }, None)
    }
}

/// A step's answer that is `r` alone.
fn code(r: CUresult) -> RuleStep {
    RuleStep::code(r.0)
}

/// The pattern the exporter writes at the start of the allocation whose export data the rules
/// importer imports, and how many bytes of it the importer reads back.
pub(super) const RULES_SEED: u8 = 0x5c;
pub(super) const RULES_BYTES: usize = 4096;

/// Child role `ipc-rules`: import the pool and ask the driver what an imported pool allows.
pub fn rules_main(env: &Env) -> i32 {
    serve("rules", env, |env, chan| {
        rules(env, chan)?;
        chan.send(&Step::<RuleStep>::Done, None)
    })
}

pub(super) fn rules(env: &Env, chan: &crate::harness::channel::Channel) -> R {
    env.bind();
    let (
        ToRules::Rules {
            data,
            foreign,
            peer,
            skip,
        },
        fd,
    ) = recv(chan)?;
    let fd = fd.ok_or("no fd")?;
    let steps = Steps { chan, skip };
    let mut pool: CUmemoryPool = std::ptr::null_mut();
    // The fd stays the caller's: open after the import, for the caller to close.
    let raw = fd.as_raw_fd();
    let import = steps.always("import", || {
        let r = import_pool_fd(raw, &mut pool);
        RuleStep {
            fd_open: Some(crate::os::fd_is_open(raw)),
            ..RuleStep::code(r.0)
        }
    })?;
    let fd = if import.fd_open == Some(true) {
        Some(fd)
    } else {
        // Closed by the import: not closed again.
        std::mem::forget(fd);
        None
    };
    if pool.is_null() {
        for k in &RULE_STEPS[1..] {
            steps.cannot(k, "the pool import did not succeed", 829)?;
        }
        return Ok(());
    }
    let pool = Pool(pool);
    // The same fd imported again.
    steps.step("import_twice", || {
        let mut again = std::ptr::null_mut();
        let r = import_pool_fd(raw, &mut again);
        let same = r == SUCCESS && again == pool.0;
        if r == SUCCESS && !same {
            let _ = unsafe { cuMemPoolDestroy(again) };
        }
        RuleStep {
            same: Some(same),
            ..RuleStep::code(r.0)
        }
    })?;
    drop(fd);
    let s = Stream::new()?;
    steps.step("alloc_from_imported", || {
        let mut p: CUdeviceptr = 0;
        let r = unsafe { cuMemAllocFromPoolAsync(&mut p, 4096, pool.0, s.0) };
        if r == SUCCESS {
            let _ = unsafe { cuMemFreeAsync(p, s.0) };
        }
        code(r)
    })?;
    let threshold = CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD;
    steps.step("get_release_threshold", || {
        let mut v: u64 = 0;
        code(unsafe { cuMemPoolGetAttribute(pool.0, threshold, (&mut v as *mut u64).cast()) })
    })?;
    steps.step("get_used_mem_current", || {
        let mut v: u64 = 0;
        let a = CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT;
        code(unsafe { cuMemPoolGetAttribute(pool.0, a, (&mut v as *mut u64).cast()) })
    })?;
    steps.step("set_release_threshold", || {
        let mut t: u64 = 1 << 20;
        code(unsafe { cuMemPoolSetAttribute(pool.0, threshold, (&mut t as *mut u64).cast()) })
    })?;
    steps.step("trim", || code(unsafe { cuMemPoolTrimTo(pool.0, 0) }))?;
    steps.step("set_current", || {
        let r = unsafe { cuDeviceSetMemPool(env.dev, pool.0) };
        if r == SUCCESS {
            if let Ok(d) = default_pool(env.dev) {
                let _ = unsafe { cuDeviceSetMemPool(env.dev, d) };
            }
        }
        code(r)
    })?;
    let own = mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, env.dev);
    steps.step("get_access_own_device", || {
        let mut flags = CUmemAccess_flags(0xdead);
        let mut loc = own;
        let r = unsafe { cuMemPoolGetAccess(&mut flags, pool.0, &mut loc) };
        RuleStep {
            flags: Some(flags.0),
            ..RuleStep::code(r.0)
        }
    })?;
    steps.step("set_access_own_device", || {
        let d = CUmemAccessDesc {
            location: own,
            flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        code(unsafe { cuMemPoolSetAccess(pool.0, &d, 1) })
    })?;
    steps.step("export_imported", || {
        let mut h: i32 = -1;
        let r = unsafe { cuMemPoolExportToShareableHandle((&mut h as *mut i32).cast(), pool.0, POSIX, 0) };
        if h >= 0 {
            drop(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(h) });
        }
        code(r)
    })?;
    // Export data: genuine, garbage, and another pool's. The NULL cases come first, each with the
    // other arguments valid (the genuine import right after shows they were).
    let mut good = data_from_hex(data.first().ok_or("no data")?)?;
    let mut q: CUdeviceptr = 0;
    steps.step("import_pointer_null_out", || {
        code(unsafe { cuMemPoolImportPointer(std::ptr::null_mut(), pool.0, &mut good) })
    })?;
    steps.step("import_pointer_null_data", || {
        code(unsafe { cuMemPoolImportPointer(&mut q, pool.0, std::ptr::null_mut()) })
    })?;
    steps.step("import_pointer_null_pool", || {
        code(unsafe { cuMemPoolImportPointer(&mut q, std::ptr::null_mut(), &mut good) })
    })?;
    q = 0;
    // The imported address holds the exporter's bytes (RULES_SEED's pattern).
    let imported = steps.always("import_pointer", || {
        let r = unsafe { cuMemPoolImportPointer(&mut q, pool.0, &mut good) };
        let mut v = code(r);
        if r == SUCCESS && q != 0 {
            let mut head = vec![0u8; RULES_BYTES];
            let read = unsafe { cuMemcpyDtoHAsync_v2(head.as_mut_ptr().cast(), q, head.len(), s.0) };
            let synced = s.sync();
            v.bytes_ok = Some(read == SUCCESS && synced.is_ok() && head == pattern(RULES_SEED, RULES_BYTES));
        }
        v
    })?;
    let imported = imported.code == Some(0) && q != 0;
    if imported {
        steps.step("import_pointer_twice", || {
            let mut q2: CUdeviceptr = 0;
            let r = unsafe { cuMemPoolImportPointer(&mut q2, pool.0, &mut good) };
            if r == SUCCESS && q2 != q {
                let _ = unsafe { cuMemFreeAsync(q2, s.0) };
            }
            RuleStep {
                same: Some(r == SUCCESS && q2 == q),
                ..RuleStep::code(r.0)
            }
        })?;
    } else {
        steps.cannot("import_pointer_twice", "the first pointer import did not succeed", 830)?;
    }
    steps.step("import_pointer_garbage", || {
        let mut garbage = CUmemPoolPtrExportData::default();
        for (i, b) in garbage.reserved.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(37) ^ 0x5a;
        }
        let mut q3: CUdeviceptr = 0;
        code(unsafe { cuMemPoolImportPointer(&mut q3, pool.0, &mut garbage) })
    })?;
    let mut foreign = data_from_hex(&foreign)?;
    steps.step("import_pointer_foreign", || {
        let mut q4: CUdeviceptr = 0;
        code(unsafe { cuMemPoolImportPointer(&mut q4, pool.0, &mut foreign) })
    })?;
    let mut freed = false;
    if imported {
        steps.always("free_imported_pointer", || {
            let r = unsafe { cuMemFreeAsync(q, s.0) };
            freed = r == SUCCESS;
            code(r)
        })?;
    } else {
        steps.cannot("free_imported_pointer", "no pointer was imported", 830)?;
    }
    s.sync()?;
    // Peer access: what the exporter granted does not come along; the importer grants its own.
    match peer {
        Some(b) => {
            let loc_b = mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, b);
            let get = || {
                let mut f = CUmemAccess_flags(0xdead);
                let mut loc = loc_b;
                let r = unsafe { cuMemPoolGetAccess(&mut f, pool.0, &mut loc) };
                RuleStep {
                    flags: Some(f.0),
                    ..RuleStep::code(r.0)
                }
            };
            steps.step("peer_get_access_before", get)?;
            steps.step("peer_set_access", || {
                let db = CUmemAccessDesc {
                    location: loc_b,
                    flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                };
                code(unsafe { cuMemPoolSetAccess(pool.0, &db, 1) })
            })?;
            steps.step("peer_get_access_after", get)?;
        }
        None => {
            for k in ["peer_get_access_before", "peer_set_access", "peer_get_access_after"] {
                steps.cannot(k, "no peer-capable device pair", 0)?;
            }
        }
    }
    // Destroying an imported pool while a pointer imported from it is live is refused (R580), so
    // the destroy step means something only once that pointer's free succeeded.
    if freed || !imported {
        steps.step("destroy_imported", || code(unsafe { cuMemPoolDestroy(pool.take()) }))?;
    } else {
        steps.cannot("destroy_imported", "the imported pointer's free did not succeed", 822)?;
    }
    Ok(())
}

/// The importer's answers by step; a step whose importer died or hung reads
/// `{"lost": why, "blame": api}`.
pub(super) type Answers = BTreeMap<String, Value>;

/// The importer's answers for the exporter's device `dev` (one run of importers per device).
pub(super) fn rules_for(dev: CUdevice) -> &'static Shared<Answers> {
    static BY_DEVICE: std::sync::Mutex<BTreeMap<CUdevice, &'static Shared<Answers>>> =
        std::sync::Mutex::new(BTreeMap::new());
    let mut by = BY_DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    let shared: &'static Shared<Answers> = by.entry(dev).or_insert_with(|| Box::leak(Box::new(Shared::new())));
    shared
}

/// Run `ipc-rules` importers until every step has an answer (shared by the rule trials, which run
/// in one lane). An importer that dies or hangs inside a step loses that step's answer (blamed on
/// the API it was inside) and the next one skips it.
pub(super) fn rules_answers(env: &Env) -> R<&'static Answers> {
    rules_for(env.dev).get(|| {
        let a = Pool::ipc(env.dev)?;
        let b = Pool::ipc(env.dev)?;
        drop(export_pool_fd(b.0)?);
        let s = Stream::new()?;
        let pa = alloc_from(a.0, 1 << 20, s.0)?;
        let pb = alloc_from(b.0, 1 << 20, s.0)?;
        let head = pattern(RULES_SEED, RULES_BYTES);
        ok("cuMemcpyHtoDAsync", unsafe {
            cuMemcpyHtoDAsync_v2(pa, head.as_ptr().cast(), head.len(), s.0)
        })?;
        s.sync()?;
        // With a peer-capable pair, the exporter grants the peer device access before exporting.
        let peer_dev = match env.m.has(Cap::Peer) {
            Ok(()) => {
                let b = env.m.peer_of(env.dev).ok_or("no peer device")?;
                let d = CUmemAccessDesc {
                    location: mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, b),
                    flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                };
                ok("cuMemPoolSetAccess(exporter grants the peer)", unsafe {
                    cuMemPoolSetAccess(a.0, &d, 1)
                })?;
                Some(b)
            }
            Err(_) => None,
        };
        let fd = export_pool_fd(a.0)?;
        let data = vec![hex(&export_ptr(pa)?.reserved)];
        let foreign = hex(&export_ptr(pb)?.reserved);
        let mut answers = Answers::new();
        for _attempt in 0..RULE_STEPS.len() {
            let skip: Vec<String> = RULE_STEPS
                .iter()
                .filter(|k| answers.contains_key(**k))
                .map(|k| k.to_string())
                .collect();
            if skip.len() == RULE_STEPS.len() {
                break;
            }
            let msg = ToRules::Rules {
                data: data.clone(),
                foreign: foreign.clone(),
                peer: peer_dev,
                skip,
            };
            let dev = env.dev.to_string();
            let peer = kept_children::take(
                &Role::IpcRules,
                &[(IMPORTER_DEVICE_VAR, &dev)],
                env.deadline().importer_step(),
                kept_children::Take::Unused,
                &env.settings,
            )?;
            peer.chan.send(&msg, Some(fd.as_raw_fd()))?;
            let ended = peer.chan.answers_until_done(&mut answers);
            match ended {
                None => {
                    peer.finish()?;
                    break;
                }
                Some(e) => {
                    // The step in flight: the first one without an answer.
                    let Some(key) = RULE_STEPS.iter().find(|k| !answers.contains_key(**k)) else {
                        return Err(peer.fail(e).into());
                    };
                    let inside = peer.inside();
                    let why = peer.fail(e);
                    let lost = format!("the importer stopped at this step: {why}");
                    answers.insert(key.to_string(), LostStep::answer(lost, inside.map(|i| i.0)));
                }
            }
        }
        drop(fd);
        free_async(pa, s.0)?;
        free_async(pb, s.0)?;
        s.sync()?;
        Ok(answers)
    })
}

/// One answer of the importer, for a trial: its value, or why there is none (and whom to blame).
pub(super) fn rule_answer(env: &Env, key: &str) -> R<RuleStep> {
    let v = crate::harness::channel::step_answer(rules_answers(env)?, key, "the importer")?;
    let a: RuleStep = parse(&v).map_err(|e| format!("the importer's answer for step {key}: {e}"))?;
    if let Some(why) = &a.not_run {
        if let Some(api) = a.blame.filter(|b| *b != 0) {
            blame::set(api);
        }
        return Err(format!("the importer could not take step {key}: {why}").into());
    }
    Ok(a)
}

/// What a rule step must answer: a code, or a departure of the driver's (`driver/departures.rs`).
#[derive(Clone, Copy)]
pub(super) enum Want {
    Code(CUresult),
    Deviation(&'static str),
}
use Want::{Code, Deviation};

/// (api, case, step, expected answer) for the imported-pool rules.
#[rustfmt::skip]
pub(super) const RULES_TABLE: &[(u32, &str, &str, Want)] = &[
    (821, "imported_pool_alloc_refused", "alloc_from_imported", Code(E_VALUE)),
    (828, "imported_pool_get_release_threshold_refused", "get_release_threshold", Deviation("imported_pool_attribute_query_refused")),
    (828, "imported_pool_get_used_mem_refused", "get_used_mem_current", Deviation("imported_pool_attribute_query_refused")),
    (832, "imported_pool_set_release_threshold_refused", "set_release_threshold", Code(E_VALUE)),
    (833, "imported_pool_trim_refused", "trim", Deviation("imported_pool_trim_refused")),
    (820, "imported_pool_cannot_become_current", "set_current", Code(E_VALUE)),
    (827, "imported_pool_get_access", "get_access_own_device", Code(SUCCESS)),
    (831, "imported_pool_set_access_own_device", "set_access_own_device", Code(SUCCESS)),
    (826, "imported_pool_export_refused", "export_imported", Code(E_VALUE)),
    (829, "import_pool", "import", Code(SUCCESS)),
    (829, "import_same_fd_twice", "import_twice", Code(SUCCESS)),
    (830, "null_pointer_out_invalid_value", "import_pointer_null_out", Code(E_VALUE)),
    (830, "null_export_data_invalid_value", "import_pointer_null_data", Code(E_VALUE)),
    (830, "null_pool_invalid_value", "import_pointer_null_pool", Code(E_VALUE)),
    (830, "import_pointer", "import_pointer", Code(SUCCESS)),
    (830, "import_same_pointer_twice", "import_pointer_twice", Code(SUCCESS)),
    (830, "garbage_export_data_refused", "import_pointer_garbage", Code(E_VALUE)),
    (830, "foreign_export_data_refused", "import_pointer_foreign", Code(E_VALUE)),
    (822, "free_imported_pointer", "free_imported_pointer", Code(SUCCESS)),
    (824, "destroy_imported_pool", "destroy_imported", Code(SUCCESS)),
];

/// What a rule step observed beyond its code (a field of [`RuleStep`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Field {
    FdOpen,
    Same,
    BytesOk,
    Flags,
    Code,
}
use Field::{BytesOk, Code as CodeField, FdOpen, Flags, Same};

impl Field {
    /// Its key in the importer's answer.
    fn name(self) -> &'static str {
        match self {
            FdOpen => "fd_open",
            Same => "same",
            BytesOk => "bytes_ok",
            Flags => "flags",
            CodeField => "code",
        }
    }

    /// Its value in `a` (booleans as 0/1), and its text there (`null` where it is absent).
    fn read(self, a: &RuleStep) -> (Option<i64>, String) {
        let flag = |b: Option<bool>| (b.map(i64::from), text(&b));
        let number = |n: Option<u32>| (n.map(i64::from), text(&n));
        match self {
            FdOpen => flag(a.fd_open),
            Same => flag(a.same),
            BytesOk => flag(a.bytes_ok),
            Flags => number(a.flags),
            CodeField => number(a.code),
        }
    }
}

/// (api, case, step, field, expected value; booleans as 0/1, needs a peer pair) for what an
/// importer observes beyond return codes. A field is only read once the step's code is SUCCESS.
#[rustfmt::skip]
pub(super) const RULE_VALUES: &[(u32, &str, &str, Field, i64, bool)] = &[
    (829, "import_leaves_callers_fd_open", "import", FdOpen, 1, false),
    (829, "import_same_fd_twice_gives_same_pool", "import_twice", Same, 1, false),
    (830, "import_pointer_reads_exporters_bytes", "import_pointer", BytesOk, 1, false),
    (830, "import_same_pointer_twice_gives_same_address", "import_pointer_twice", Same, 1, false),
    (827, "imported_pool_own_device_read_write", "get_access_own_device", Flags, 3, false),
    (827, "imported_pool_exporter_peer_grant_does_not_carry_over", "peer_get_access_before", Flags, 0, true),
    (831, "imported_pool_importer_grants_peer_itself", "peer_set_access", CodeField, 0, true),
    (827, "imported_pool_peer_read_write_after_importer_grant", "peer_get_access_after", Flags, 3, true),
];

/// The lane of the rule trials: one importer run answers them all.
pub(super) const RULES_LANE: &str = super::common::IPC_LANE;

/// The imported-pool rule cases.
pub(super) fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for &(api, name, key, want) in RULES_TABLE {
        v.push(
            Case::gpu(api, name, move |e| {
                let got = rule_answer(e, key)?
                    .code
                    .ok_or_else(|| format!("the importer's answer for {key} has no code"))?;
                // Named after the call, so that a wrong answer is blamed on it.
                let what = format!("{} ({key}, in the importer)", call_of(key));
                match want {
                    Code(c) => expect(&what, CUresult(got), c),
                    Deviation(d) => expect_code(&e.policy(), d, &what, CUresult(got)),
                }
            })
            .needs(Cap::Ipc)
            .lane(RULES_LANE),
        );
    }
    for &(api, name, key, field, want, needs_peer) in RULE_VALUES {
        let mut case = Case::gpu(api, name, move |e| {
            let a = rule_answer(e, key)?;
            expect(
                &format!("{} ({key}, in the importer)", call_of(key)),
                CUresult(a.code.unwrap_or(u32::MAX)),
                SUCCESS,
            )?;
            let (got, shown) = field.read(&a);
            ensure!(
                got == Some(want),
                "{key}: the importer observed {} = {shown}, expected {want}",
                field.name()
            );
            Ok(())
        })
        .needs(Cap::Ipc)
        .lane(RULES_LANE);
        if needs_peer {
            case = case.needs(Cap::Peer);
        }
        v.push(case);
    }
    v
}

/// The API a rule step calls (for blame).
fn call_of(key: &str) -> &'static str {
    match key {
        "import" | "import_twice" => "cuMemPoolImportFromShareableHandle",
        "alloc_from_imported" => "cuMemAllocFromPoolAsync",
        "get_release_threshold" | "get_used_mem_current" => "cuMemPoolGetAttribute",
        "set_release_threshold" => "cuMemPoolSetAttribute",
        "trim" => "cuMemPoolTrimTo",
        "set_current" => "cuDeviceSetMemPool",
        "get_access_own_device" | "peer_get_access_before" | "peer_get_access_after" => "cuMemPoolGetAccess",
        "set_access_own_device" | "peer_set_access" => "cuMemPoolSetAccess",
        "export_imported" => "cuMemPoolExportToShareableHandle",
        "free_imported_pointer" => "cuMemFreeAsync",
        "destroy_imported" => "cuMemPoolDestroy",
        _ => "cuMemPoolImportPointer",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each field a value trial reads is the one the importer's answer carries under its name.
    #[test]
    fn fields_read_what_the_importer_wrote() {
        let a = RuleStep {
            code: Some(0),
            fd_open: Some(true),
            same: Some(false),
            bytes_ok: Some(true),
            flags: Some(3),
            ..RuleStep::default()
        };
        let wire = crate::cases::messages::to_json(&a).unwrap();
        for f in [FdOpen, Same, BytesOk, Flags, CodeField] {
            let (got, shown) = f.read(&a);
            assert_eq!(shown, wire[f.name()].to_string(), "{f:?}");
            let on_wire = wire[f.name()]
                .as_i64()
                .or_else(|| wire[f.name()].as_bool().map(i64::from));
            assert_eq!(got, on_wire, "{f:?}");
        }
        assert_eq!(Flags.read(&RuleStep::code(0)), (None, "null".to_string()));
    }
}
