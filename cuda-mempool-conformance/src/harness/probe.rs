//! Probing the machine, once per process: driver, libcuda in use, which object answers each API on
//! each path, the library under test, devices (UUID, PCI bus id), pool support, handle types,
//! peers, what the library makes a new process wait at its first GPU work (`first_work`); in a
//! child of its own for the coordinator; and the device contexts it retains.

use crate::driver::check::*;
use crate::driver::cu::*;
use crate::harness::machine::{blank_device, blank_under_test, same_file, Machine, LOOKUP_SYMBOLS, NOTHING};
use crate::harness::provenance::{self, library_file};
use conformance_model::{Extra, P2p, PathAnswer, UnderTest};
use std::ffi::{c_char, c_int, c_void, CStr};

use crate::harness::settings::Settings;
pub use crate::harness::settings::LIBRARY_VAR;

/// CONFORMANCE_LIBRARY as `settings` read it: None when unset; an error naming what is wrong and
/// what to do.
pub fn library_from_env(settings: &Settings) -> Result<Option<String>, String> {
    settings.library.checked().map_err(String::from)
}

/// How each way of filling the table resolves the 14 APIs, as objects.
fn paths() -> Vec<PathAnswer> {
    Entry::ALL
        .into_iter()
        .map(|e| match crate::driver::cu::resolve_apis(e) {
            Err(error) => PathAnswer {
                mode: e,
                error: Some(error),
                objects: Vec::new(),
                extra: Extra::new(),
            },
            Ok(apis) => PathAnswer {
                mode: e,
                extra: Extra::new(),
                error: None,
                objects: apis
                    .into_iter()
                    .map(|(api, a)| {
                        let o = if a == 0 {
                            NOTHING.to_string()
                        } else {
                            crate::os::object_of(a).unwrap_or_else(|| "unknown".into())
                        };
                        (api.to_string(), o)
                    })
                    .collect(),
            },
        })
        .collect()
}

/// The libraries under test (CONFORMANCE_LIBRARY's, else LD_PRELOAD's) and the driver symbols each
/// defines itself: found through its handle and, by `dladdr`, in its own file (not in a library it
/// depends on).
fn under_test(preloaded: &[String], settings: &Settings) -> Vec<UnderTest> {
    let named: Vec<(String, &str)> = match library_from_env(settings) {
        Ok(Some(p)) => vec![(p, LIBRARY_VAR)],
        _ => preloaded.iter().map(|p| (p.clone(), "LD_PRELOAD")).collect(),
    };
    named.into_iter().map(|(path, by)| examine(path, by)).collect()
}

/// How a stand-in for libcuda that no variable named is found ([`UnderTest::named_by`]).
pub const STAND_IN: &str = "the loader (a libcuda that is not the driver's file)";

/// The files the 14 APIs resolved to, and the libcuda mapped here, that are neither the driver's
/// installed file (`identity::is_driver_file`, links resolved) nor a library already under test:
/// stand-ins for libcuda found on the library path or through CUDA_MEMPOOL_SYS_LIBCUDA, whose
/// sha256 the report then carries like a named library's (issue 47 left them without one).
fn stand_ins(m: &Machine) -> Vec<String> {
    let apis: Vec<&str> = crate::driver::APIS.iter().map(|a| a.1).collect();
    let canon = |p: &str| std::fs::canonicalize(p).map_or(p.to_string(), |c| c.display().to_string());
    let mut v: Vec<String> = m
        .resolved()
        .iter()
        .filter(|(symbol, _)| apis.contains(&symbol.as_str()))
        .map(|(_, o)| o.as_str())
        .chain(std::iter::once(m.libcuda()))
        .filter(|p| p.starts_with('/'))
        .map(canon)
        .filter(|p| {
            let name = p.rsplit('/').next().unwrap_or(p);
            !crate::harness::identity::is_driver_file(name, &m.identity().version)
                && !m.under_test().iter().any(|u| same_file(&u.path, p))
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

/// A library under test: its file, and the driver symbols it defines itself.
fn examine(path: String, by: &str) -> UnderTest {
    let mut u = UnderTest {
        file: Some(library_file(&path)),
        ..blank_under_test(&path, by)
    };
    match crate::os::dlopen_local(&path) {
        Err(e) => u.error = Some(e),
        Ok(h) => {
            let own = |a: *mut std::ffi::c_void| crate::os::object_of(a as usize).is_some_and(|o| same_file(&o, &path));
            let symbols = crate::driver::APIS
                .iter()
                .map(|a| a.1)
                .chain(LOOKUP_SYMBOLS.iter().copied());
            u.exports = symbols
                .filter(|s| h.symbol(s).is_some_and(own))
                .map(String::from)
                .collect();
        }
    }
    u
}

fn attr(a: CUdevice_attribute, dev: CUdevice) -> i32 {
    let mut v = 0;
    let r = unsafe { cuDeviceGetAttribute(&mut v, a, dev) };
    if r == SUCCESS {
        v
    } else {
        0
    }
}

/// A driver function the entry-point table does not carry, through the table's cuGetProcAddress at
/// the CUDA 12.0 ABI (as `cases::caps` finds cuGraphAddMemAllocNode); None where it hands out none.
fn proc_address(symbol: &CStr) -> Option<*mut c_void> {
    let (r, f) = beyond_table(symbol);
    (r == SUCCESS && !f.is_null()).then_some(f)
}

/// Device `dev`'s UUID (cuDeviceGetUuid at the 12.0 ABI: cuDeviceGetUuid_v2, CUDA 11.4) and PCI bus
/// id (cuDeviceGetPCIBusId), neither in the table; "unknown" for what the driver does not answer.
fn uuid_and_bus(dev: CUdevice) -> (String, String) {
    type Uuid = unsafe extern "C" fn(*mut [u8; 16], CUdevice) -> CUresult;
    type Bus = unsafe extern "C" fn(*mut c_char, c_int, CUdevice) -> CUresult;
    let unknown = || "unknown".to_string();
    // SAFETY: the signatures of cudaTypedefs.h's PFN_cuDeviceGetUuid_v11040 (CUuuid is 16 bytes)
    // and PFN_cuDeviceGetPCIBusId_v4010; the bus id buffer is longer than the 13 characters of
    // "dddd:bb:dd.f" and its NUL, and NUL-terminated on success.
    unsafe {
        let uuid = proc_address(c"cuDeviceGetUuid").and_then(|f| {
            let f: Uuid = std::mem::transmute(f);
            let mut b = [0u8; 16];
            (f(&mut b, dev) == SUCCESS).then(|| format_uuid(&b))
        });
        let bus = proc_address(c"cuDeviceGetPCIBusId").and_then(|f| {
            let f: Bus = std::mem::transmute(f);
            let mut b = [0 as c_char; 64];
            (f(b.as_mut_ptr(), b.len() as c_int, dev) == SUCCESS)
                .then(|| CStr::from_ptr(b.as_ptr()).to_string_lossy().into_owned())
        });
        (uuid.unwrap_or_else(unknown), bus.unwrap_or_else(unknown))
    }
}

/// A UUID as nvidia-smi writes a GPU's: "GPU-" and 8-4-4-4-12 lower-case hex digits.
pub fn format_uuid(b: &[u8; 16]) -> String {
    let hex = |r: std::ops::Range<usize>| b[r].iter().map(|x| format!("{x:02x}")).collect::<String>();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        hex(0..4),
        hex(4..6),
        hex(6..8),
        hex(8..10),
        hex(10..16)
    )
}

/// Which libcuda this process mapped (Linux; "unknown" elsewhere).
fn libcuda_path() -> String {
    std::fs::read_to_string("/proc/self/maps")
        .ok()
        .and_then(|m| {
            m.lines()
                .filter_map(|l| l.split_whitespace().nth(5))
                .find(|p| p.contains("libcuda.so"))
                .map(String::from)
        })
        .map(|p| std::fs::canonicalize(&p).map(|c| c.display().to_string()).unwrap_or(p))
        .unwrap_or_else(|| "unknown".into())
}

/// Probe the machine (calls cuInit). Contexts are each process's own business (`retain_context`);
/// the probe retains device 0's last, for its measure of the first GPU work. Nothing is asked of the
/// library before cuInit but the entry points themselves: a layer may crash on calls made before it.
/// `settings`: this process's, as its entry point read them (the library under test, NVML, the
/// checkpoint engine).
pub fn probe(settings: &Settings) -> Machine {
    let started = std::time::SystemTime::now();
    let loaded = crate::driver::cu::load(settings.entry.value());
    let mut m = Machine {
        checkpoint: settings.checkpoint.value(),
        ..Machine::default()
    };
    m.provenance = Some(provenance::here(started));
    m.entry = Some(loaded.describe());
    m.missing = loaded.missing.iter().map(|s| s.to_string()).collect();
    let preloaded: Vec<String> = std::env::var("LD_PRELOAD")
        .unwrap_or_default()
        .split(|c: char| c == ':' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    m.paths = Some(paths());
    m.under_test = Some(under_test(&preloaded, settings));
    m.preloaded = Some(preloaded);
    for (idx, api) in crate::driver::APIS {
        m.exported.push(((*idx).into(), loaded.has(api)));
    }
    m.cuda13_selectors = ["cuMemGetDefaultMemPool", "cuMemGetMemPool", "cuMemSetMemPool"]
        .iter()
        .all(|s| loaded.has(s));
    // Issue 57: present only where the driver has it, so that machines without it read as before.
    m.checkpoint_api = crate::harness::checkpoint::SYMBOLS
        .iter()
        .all(|s| loaded.has(s))
        .then_some(true);
    m.imex_channels = std::path::Path::new("/dev/nvidia-caps-imex-channels").exists();
    m.resolved = Some(
        loaded
            .addresses
            .iter()
            .map(|(sym, a)| {
                (
                    sym.to_string(),
                    crate::os::object_of(*a).unwrap_or_else(|| "unknown".into()),
                )
            })
            .collect(),
    );
    if let Some(e) = &loaded.error {
        m.load_error = Some(Some(e.clone()));
        m.cu_init = CUresult::CUDA_ERROR_NOT_FOUND.0.into();
        m.libcuda = Some("none".into());
        m.identity = Some(crate::harness::identity::identify("", &settings.nvml));
        crate::driver::departures::set_driver(&m.identity().version);
        return m;
    }
    // NVML's view of the devices' modes, beside cuInit (NVML's start is about 0.1 s).
    let nvml = settings.nvml.clone();
    let modes = std::thread::spawn(move || crate::harness::gpu_model::modes_by_bus(&nvml));
    unsafe {
        m.cu_init = cuInit(0).0.into();
        let mut version = 0;
        let _ = cuDriverGetVersion(&mut version);
        m.driver_version = version.into();
        let libcuda = libcuda_path();
        m.identity = Some(crate::harness::identity::identify(&libcuda, &settings.nvml));
        m.libcuda = Some(libcuda);
        crate::driver::departures::set_driver(&m.identity().version);
        let found: Vec<UnderTest> = stand_ins(&m).into_iter().map(|p| examine(p, STAND_IN)).collect();
        m.under_test.get_or_insert_default().extend(found);
        if m.cu_init != 0 {
            let _ = modes.join();
            return m;
        }
        let mut n = 0;
        let _ = cuDeviceGetCount(&mut n);
        for i in 0..n {
            let mut dev = 0;
            if cuDeviceGet(&mut dev, i) != SUCCESS {
                continue;
            }
            let mut name = [0 as std::ffi::c_char; 256];
            let _ = cuDeviceGetName(name.as_mut_ptr(), 256, dev);
            let mut total = 0usize;
            let _ = cuDeviceTotalMem_v2(&mut total, dev);
            use CUdevice_attribute as A;
            let (uuid, pci_bus_id) = uuid_and_bus(dev);
            m.devices.push(conformance_model::Device {
                name: CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned(),
                compute_capability: (
                    attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev).into(),
                    attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev).into(),
                ),
                memory_pools: attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev) != 0,
                handle_types: attr(A::CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, dev) as u32 as u64,
                host_pools: attr(A::CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED, dev) != 0,
                host_numa_pools: attr(A::CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED, dev) != 0,
                host_numa_id: attr(A::CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, dev).into(),
                fabric: attr(A::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, dev) != 0,
                total_mem: total as u64,
                pci_ids: Some(crate::harness::gpu_model::pci_ids(&pci_bus_id)),
                uuid: Some(uuid),
                pci_bus_id: Some(pci_bus_id),
                ..blank_device(i)
            });
        }
        let modes = modes
            .join()
            .unwrap_or_else(|_| Err("the NVML thread panicked".to_string()));
        for d in m.devices.iter_mut() {
            let bus = d.pci_bus_id.clone().unwrap_or_default();
            d.modes = Some(crate::harness::gpu_model::modes_of(&modes, &bus));
            d.physical_mem = crate::harness::gpu_model::memory_of(&modes, &bus);
        }
        m.host_gpus = Some(crate::harness::gpu_model::host_gpus(m.devices.len()) as u64);
        crate::driver::hangs::set_host_gpus(m.host_gpus());
        for i in 0..n {
            let row = (0..n)
                .map(|j| {
                    let mut can = 0;
                    i != j && cuDeviceCanAccessPeer(&mut can, i, j) == SUCCESS && can != 0
                })
                .collect();
            m.peer.push(row);
        }
        for a in 0..n {
            for b in (0..n).filter(|&b| b != a) {
                let (mut rank, mut atomic) = (-1, 0);
                use CUdevice_P2PAttribute as P;
                let _ = cuDeviceGetP2PAttribute(&mut rank, P::CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, a, b);
                let _ = cuDeviceGetP2PAttribute(&mut atomic, P::CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, a, b);
                m.p2p.get_or_insert_default().push(P2p {
                    a: a.into(),
                    b: b.into(),
                    performance_rank: rank.into(),
                    native_atomics: atomic != 0,
                    extra: Extra::new(),
                });
            }
        }
    }
    // Last, once every query is answered: what the library makes this new process wait at its first
    // GPU work, on device 0 where it has pools (issue 58).
    if m.devices.first().is_some_and(|d| d.memory_pools) {
        m.first_work = crate::harness::first_work::measure(|| try_retain_context(0).ok());
    }
    // What a process without the coordinator's choice uses: the default.
    m.selection = Some(
        crate::harness::devices::select(&crate::harness::devices::Request::Default, &m, false).unwrap_or_default(),
    );
    m
}

static HELD: std::sync::Mutex<std::collections::BTreeMap<CUdevice, usize>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

/// The primary contexts this process holds: (device, context).
pub fn held_contexts() -> Vec<(CUdevice, usize)> {
    HELD.lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .map(|(d, c)| (*d, *c))
        .collect()
}

/// Device `dev`'s primary context, retained for the rest of the process on first use; its handle
/// (0 if it cannot be had).
pub fn retain_context(dev: CUdevice) -> usize {
    try_retain_context(dev).unwrap_or(0)
}

/// Device `dev`'s primary context, retained for the rest of the process on first use, or what
/// cuDevicePrimaryCtxRetain answered (asked again on the next call: a refusal can pass).
pub fn try_retain_context(dev: CUdevice) -> Result<usize, CUresult> {
    let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(&c) = held.get(&dev) {
        return Ok(c);
    }
    let mut ctx = std::ptr::null_mut();
    match unsafe { cuDevicePrimaryCtxRetain(&mut ctx, dev) } {
        SUCCESS if !ctx.is_null() => {
            held.insert(dev, ctx as usize);
            Ok(ctx as usize)
        }
        SUCCESS => Err(CUresult::CUDA_ERROR_INVALID_CONTEXT),
        r => Err(r),
    }
}

/// Child role `probe`: probe and print the machine as one JSON line.
pub fn child_main(settings: &Settings) -> i32 {
    println!("{}", probe(settings).to_json());
    0
}

/// Probe in a child process, so that a driver (or interposer) that crashes or hangs in cuInit
/// or a device query costs the probe, not the run. The time it took is the run's start-up measure,
/// less the child's measure of its first GPU work (a figure of its own, `Machine::first_work`).
/// Bounded by the user's trial deadline (`settings`').
pub fn probe_in_child(settings: &Settings) -> Machine {
    let timeout = settings.deadline().timeout();
    let started = std::time::SystemTime::now();
    let start = std::time::Instant::now();
    let mut m = match crate::harness::child::run_child_for(
        &crate::harness::child::Role::Probe,
        &[],
        settings.deadline(),
        timeout,
    ) {
        Err(e) => Machine::failed(e),
        Ok(out) if out.status.and_then(|s| s.code()) == Some(0) => {
            let line = out.last_json().unwrap_or("");
            match serde_json::from_str(line)
                .map_err(|e| e.to_string())
                .and_then(|j| Machine::from_json(&j, settings))
            {
                Ok(m) => m,
                Err(e) => Machine::failed(format!("unreadable answer ({e}); {}", out.describe())),
            }
        }
        Ok(out) => Machine::failed(out.describe()),
    };
    let measure = m.first_work.as_ref().map_or(0.0, crate::harness::first_work::total_s);
    m.startup_secs = Some((start.elapsed().as_secs_f64() - measure).max(0.0));
    // The coordinator's own: the child's environment carries its role.
    m.provenance = Some(provenance::here(started));
    if m.probe_error.is_none() && m.load_error().is_none() {
        m.hidden_init = Some(hidden_init_in_child(settings).map(i64::from));
    }
    m
}

/// Child role `hidden-init`: cuInit (the coordinator hid every device) and its answer as JSON.
pub fn hidden_init_main() -> i32 {
    let r = unsafe { cuInit(0) };
    println!(
        "{}",
        serde_json::to_string(&HiddenInit { cu_init: r.0 as i32 }).expect("JSON")
    );
    0
}

/// The hidden-init child's answer: cuInit's code.
#[derive(serde::Serialize, serde::Deserialize)]
struct HiddenInit {
    #[serde(rename = "cuInit")]
    cu_init: i32,
}

/// cuInit's answer with every device hidden (CUDA_VISIBLE_DEVICES=""), asked of a child; None if
/// it gave none (died, hung), within the user's trial deadline (`settings`').
pub fn hidden_init_in_child(settings: &Settings) -> Option<i32> {
    let role = crate::harness::child::Role::HiddenInit;
    let envs = [("CUDA_VISIBLE_DEVICES", "")];
    let deadline = settings.deadline();
    let out = crate::harness::child::run_child_for(&role, &envs, deadline, deadline.timeout()).ok()?;
    serde_json::from_str::<HiddenInit>(out.last_json()?)
        .ok()
        .map(|h| h.cu_init)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A libcuda that is not the driver's file is a stand-in, whatever links lead to it; the driver's
    /// file (through its libcuda.so.1 link too), a library already under test, a missing symbol and
    /// an unknown object are not; one file is listed once.
    #[test]
    fn stand_ins_are_the_files_that_are_not_the_drivers() {
        let dir = std::env::temp_dir().join(format!("conformance-stand-ins-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let at = |n: &str| dir.join(n).display().to_string();
        for f in ["libcuda.so.580.1.2", "libremote.so", "libshim.so"] {
            std::fs::write(at(f), f).unwrap();
        }
        std::os::unix::fs::symlink(at("libcuda.so.580.1.2"), at("libcuda.so.1")).unwrap();
        std::os::unix::fs::symlink(at("libremote.so"), at("libcuda-link.so.1")).unwrap();
        let resolve = |api: &str, o: String| (api.to_string(), o);
        let mut m = Machine::from(conformance_model::Machine {
            libcuda: Some(at("libcuda.so.580.1.2")),
            resolved: Some(vec![
                resolve("cuMemAllocAsync", at("libcuda.so.1")),
                resolve("cuMemFreeAsync", at("libremote.so")),
                resolve("cuMemPoolCreate", at("libcuda-link.so.1")),
                resolve("cuMemPoolDestroy", at("libshim.so")),
                resolve("cuMemPoolTrimTo", NOTHING.to_string()),
                resolve("cuMemPoolSetAccess", "unknown".to_string()),
            ]),
            under_test: Some(vec![blank_under_test(&at("libshim.so"), "")]),
            ..crate::harness::machine::blank()
        });
        m.identity.get_or_insert_default().version = "580.1.2".into();
        assert_eq!(stand_ins(&m), vec![at("libremote.so")]);
        // Another driver's file is no driver here: this run's driver is 580.1.2.
        m.identity.get_or_insert_default().version = "535.9.9".into();
        assert_eq!(stand_ins(&m), vec![at("libcuda.so.580.1.2"), at("libremote.so")]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn uuid_as_nvidia_smi_writes_it() {
        let b = [
            0x1f, 0x2e, 0x3d, 0x4c, 0x5b, 0x6a, 0x79, 0x88, 0x97, 0xa6, 0xb5, 0xc4, 0xd3, 0xe2, 0xf1, 0x00,
        ];
        assert_eq!(super::format_uuid(&b), "GPU-1f2e3d4c-5b6a-7988-97a6-b5c4d3e2f100");
    }
}
