//! The machine, probed once: driver, libcuda in use, devices, pool support, handle types, peers.

use crate::driver::*;
use crate::cu::*;
use std::ffi::CStr;
use std::fmt::Write as _;

/// Something a case may need that a machine may lack. Names are those of CONFORMANCE_REQUIRE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cap {
    /// A CUDA device with memory-pool support.
    Gpu,
    /// POSIX file descriptor export of pools (IPC).
    Ipc,
    /// Two devices that can access each other.
    Peer,
    /// Pools located in host memory (CU_MEM_LOCATION_TYPE_HOST).
    HostPool,
    /// Pools located on a host NUMA node.
    HostNuma,
    /// The CUDA 13 selectors cuMemGetDefaultMemPool / cuMemGetMemPool / cuMemSetMemPool.
    Cuda13,
}
pub const ALL_CAPS: &[(Cap, &str)] = &[
    (Cap::Gpu, "gpu"),
    (Cap::Ipc, "ipc"),
    (Cap::Peer, "peer"),
    (Cap::HostPool, "host-pool"),
    (Cap::HostNuma, "host-numa"),
    (Cap::Cuda13, "cuda13"),
];
impl Cap {
    pub fn name(self) -> &'static str {
        ALL_CAPS.iter().find(|c| c.0 == self).unwrap().1
    }
}

#[derive(Clone, Debug, Default)]
pub struct Device {
    pub ordinal: i32,
    pub name: String,
    pub cc: (i32, i32),
    pub pools: bool,
    pub handle_types: u32,
    pub host_pools: bool,
    pub host_numa_pools: bool,
    pub host_numa_id: i32,
    pub fabric: bool,
    pub total_mem: usize,
}

#[derive(Clone, Debug, Default)]
pub struct Machine {
    pub driver_version: i32,
    pub libcuda: String,
    /// cuInit's answer.
    pub init: i32,
    pub devices: Vec<Device>,
    /// peer[i][j]: device i can access device j.
    pub peer: Vec<Vec<bool>>,
    /// Which of the 14 APIs the driver exports (cuGetProcAddress), by index.
    pub exported: Vec<(u32, bool)>,
    pub selectors: bool,
    /// Primary context of device 0 (retained for the run).
    pub ctx: usize,
}

impl Machine {
    pub fn has(&self, cap: Cap) -> Result<(), String> {
        let d0 = self.devices.first();
        let why = match cap {
            Cap::Gpu if self.init != 0 => format!(
                "no CUDA device (cuInit returned {})",
                code_name(CUresult(self.init as u32))
            ),
            Cap::Gpu if !d0.is_some_and(|d| d.pools) => "device 0 does not support memory pools".into(),
            Cap::Gpu => return Ok(()),
            _ if self.init != 0 => "no CUDA device".into(),
            Cap::Ipc if d0.is_some_and(|d| d.handle_types & 1 != 0) => return Ok(()),
            Cap::Ipc => "device 0 cannot export pools as POSIX file descriptors".into(),
            Cap::Peer if self.peer.len() >= 2 && self.peer[0][1] && self.peer[1][0] => return Ok(()),
            Cap::Peer => format!("no peer-capable device pair ({} device(s))", self.devices.len()),
            Cap::HostPool if d0.is_some_and(|d| d.host_pools) => return Ok(()),
            Cap::HostPool => "device 0 reports no support for host-located pools".into(),
            Cap::HostNuma if d0.is_some_and(|d| d.host_numa_pools) => return Ok(()),
            Cap::HostNuma => "device 0 reports no support for host-NUMA pools".into(),
            Cap::Cuda13 if self.selectors => return Ok(()),
            Cap::Cuda13 => format!("driver {} has no CUDA 13 pool selectors", self.driver_version),
        };
        Err(why)
    }

    pub fn summary(&self) -> String {
        let mut s = String::new();
        let v = self.driver_version;
        writeln!(
            s,
            "driver: CUDA {}.{} ({v}); libcuda: {}",
            v / 1000,
            v % 1000 / 10,
            self.libcuda
        )
        .unwrap();
        writeln!(s, "cuInit: {}", code_name(CUresult(self.init as u32))).unwrap();
        for d in &self.devices {
            writeln!(
                s,
                "device {}: {} (sm_{}{}), {} MiB, memory pools: {}, handle types: {:#x} (posix fd: {}, fabric: {}), \
                 host pools: {}, host NUMA pools: {} (host NUMA id {})",
                d.ordinal,
                d.name,
                d.cc.0,
                d.cc.1,
                d.total_mem >> 20,
                d.pools,
                d.handle_types,
                d.handle_types & 1 != 0,
                d.fabric,
                d.host_pools,
                d.host_numa_pools,
                d.host_numa_id
            )
            .unwrap();
        }
        if self.devices.len() > 1 {
            let rows: Vec<String> = self
                .peer
                .iter()
                .map(|r| {
                    r.iter()
                        .map(|&b| if b { "1" } else { "0" })
                        .collect::<Vec<_>>()
                        .join("")
                })
                .collect();
            writeln!(s, "peer matrix (row can access column): {}", rows.join(" / ")).unwrap();
        }
        writeln!(
            s,
            "CUDA 13 pool selectors: {}",
            if self.selectors { "present" } else { "absent" }
        )
        .unwrap();
        s
    }
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

/// Probe the machine (calls cuInit) and retain device 0's primary context.
pub fn probe() -> Machine {
    let mut m = Machine::default();
    unsafe {
        let _ = cuDriverGetVersion(&mut m.driver_version);
        m.init = cuInit(0).0 as i32;
        m.libcuda = libcuda_path();
        for (idx, api) in crate::APIS {
            let sym = std::ffi::CString::new(*api).unwrap();
            m.exported.push((*idx, proc_address(&sym, 11020).is_some()));
        }
        if m.init != 0 {
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
            m.devices.push(Device {
                ordinal: i,
                name: CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned(),
                cc: (
                    attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
                    attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
                ),
                pools: attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev) != 0,
                handle_types: attr(A::CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, dev) as u32,
                host_pools: attr(A::CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED, dev) != 0,
                host_numa_pools: attr(A::CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED, dev) != 0,
                host_numa_id: attr(A::CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, dev),
                fabric: attr(A::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, dev) != 0,
                total_mem: total,
            });
        }
        for i in 0..n {
            let row = (0..n)
                .map(|j| {
                    let mut can = 0;
                    i != j && cuDeviceCanAccessPeer(&mut can, i, j) == SUCCESS && can != 0
                })
                .collect();
            m.peer.push(row);
        }
        m.selectors = Selectors::resolve().is_some();
        if n > 0 {
            let mut ctx = std::ptr::null_mut();
            if cuDevicePrimaryCtxRetain(&mut ctx, 0) == SUCCESS {
                m.ctx = ctx as usize;
            }
        }
    }
    m
}
