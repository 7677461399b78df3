//! A GPU model as an identity: its PCI vendor, device and subsystem IDs (read from the kernel's
//! PCI tree by the bus id the driver gave), MIG and virtualization mode where NVML says them, and
//! how many GPUs the host has, whatever this process is shown (`/proc/driver/nvidia/gpus`).

/// Where the NVIDIA kernel module lists every GPU of the host, one folder per bus id.
const GPUS_DIR: &str = "/proc/driver/nvidia/gpus";
/// The kernel's PCI devices, one folder per bus id.
const PCI_DIR: &str = "/sys/bus/pci/devices";

/// How many GPUs the host has: the most of the kernel module's list and the NVIDIA display and 3D
/// controllers of the kernel's PCI tree (a container may list only its own GPUs under
/// /proc/driver/nvidia), or `visible` where neither can be read (another OS).
pub fn host_gpus(visible: usize) -> usize {
    let listed = std::fs::read_dir(GPUS_DIR)
        .map(|d| d.filter_map(Result::ok).count())
        .unwrap_or(0);
    let pci = std::fs::read_dir(PCI_DIR)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| {
                    let read = |f: &str| std::fs::read_to_string(e.path().join(f)).unwrap_or_default();
                    // Vendor NVIDIA; class 0x0300 (VGA) or 0x0302 (3D controller).
                    read("vendor").trim() == "0x10de"
                        && matches!(read("class").trim().get(..6), Some("0x0300" | "0x0302"))
                })
                .count()
        })
        .unwrap_or(0);
    listed.max(pci).max(visible)
}

/// "10de:2335 (subsystem 10de:18bf)" for the device at `bus_id` ("0000:00:06.0"), or "unknown".
pub fn pci_ids(bus_id: &str) -> String {
    let dir = std::path::Path::new(PCI_DIR).join(bus_id.to_ascii_lowercase());
    let read = |f: &str| {
        std::fs::read_to_string(dir.join(f))
            .ok()
            .map(|s| s.trim().trim_start_matches("0x").to_string())
    };
    match (
        read("vendor"),
        read("device"),
        read("subsystem_vendor"),
        read("subsystem_device"),
    ) {
        (Some(v), Some(d), Some(sv), Some(sd)) => format!("{v}:{d} (subsystem {sv}:{sd})"),
        _ => "unknown".into(),
    }
}

/// What NVML says of one GPU.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NvmlGpu {
    /// Its PCI bus id ("00000000:00:06.0", lower case).
    pub bus: String,
    /// Its MIG and virtualization mode ("MIG off, virtualization none").
    pub modes: String,
    /// Its physical memory (nvmlDeviceGetMemoryInfo's total), where NVML says it: a sharing layer
    /// may report less to CUDA (issue 47).
    pub memory: Option<u64>,
}

/// nvmlMemory_t (nvml.h).
#[repr(C)]
#[derive(Default)]
struct Memory {
    total: u64,
    free: u64,
    used: u64,
}

/// What NVML says of every GPU it sees, in one NVML session; or why NVML could not say. Asked on a
/// thread of its own beside cuInit (`harness::probe`): NVML's start costs about 0.1 s.
pub fn modes_by_bus(library: &str) -> Result<Vec<NvmlGpu>, String> {
    let h = crate::os::dlopen_local(library)?;
    type Init = unsafe extern "C" fn() -> i32;
    type Count = unsafe extern "C" fn(*mut u32) -> i32;
    type ByIndex = unsafe extern "C" fn(u32, *mut *mut std::ffi::c_void) -> i32;
    type Pci = unsafe extern "C" fn(*mut std::ffi::c_void, *mut PciInfo) -> i32;
    type Mig = unsafe extern "C" fn(*mut std::ffi::c_void, *mut u32, *mut u32) -> i32;
    type Virt = unsafe extern "C" fn(*mut std::ffi::c_void, *mut u32) -> i32;
    type Mem = unsafe extern "C" fn(*mut std::ffi::c_void, *mut Memory) -> i32;
    let (Some(init), Some(count), Some(by_index), Some(pci)) = (
        h.symbol("nvmlInit_v2"),
        h.symbol("nvmlDeviceGetCount_v2"),
        h.symbol("nvmlDeviceGetHandleByIndex_v2"),
        h.symbol("nvmlDeviceGetPciInfo_v3"),
    ) else {
        return Err(format!("{library} lacks the NVML calls for a device's PCI identity"));
    };
    // SAFETY: NVML's documented signatures (nvml.h): handles are opaque pointers, the modes plain
    // unsigned ints, nvmlPciInfo_t as `PciInfo` declares it.
    unsafe {
        let init: Init = std::mem::transmute(init);
        let count: Count = std::mem::transmute(count);
        let by_index: ByIndex = std::mem::transmute(by_index);
        let pci: Pci = std::mem::transmute(pci);
        let mig: Option<Mig> = h.symbol("nvmlDeviceGetMigMode").map(|f| std::mem::transmute(f));
        let virt: Option<Virt> = h
            .symbol("nvmlDeviceGetVirtualizationMode")
            .map(|f| std::mem::transmute(f));
        let mem: Option<Mem> = h.symbol("nvmlDeviceGetMemoryInfo").map(|f| std::mem::transmute(f));
        let r = init();
        if r != 0 {
            return Err(format!("nvmlInit_v2 answered {r}"));
        }
        let mut n = 0u32;
        let r = count(&mut n);
        let mut out = Vec::new();
        for i in 0..if r == 0 { n } else { 0 } {
            let mut dev = std::ptr::null_mut();
            let mut info = PciInfo::default();
            if by_index(i, &mut dev) != 0 || pci(dev, &mut info) != 0 {
                continue;
            }
            let bus = std::ffi::CStr::from_ptr(info.bus_id.as_ptr())
                .to_string_lossy()
                .to_ascii_lowercase();
            let mig = mig.map_or("MIG unknown".to_string(), |f| {
                let (mut cur, mut pending) = (0u32, 0u32);
                match f(dev, &mut cur, &mut pending) {
                    0 => format!("MIG {}", if cur == 1 { "on" } else { "off" }),
                    // NVML_ERROR_NOT_SUPPORTED: a GPU without MIG.
                    3 => "MIG not supported".to_string(),
                    r => format!("MIG unknown ({r})"),
                }
            });
            let virt = virt.map_or("virtualization unknown".to_string(), |f| {
                let mut m = 0u32;
                match f(dev, &mut m) {
                    0 => format!("virtualization {}", virtualization_name(m)),
                    r => format!("virtualization unknown ({r})"),
                }
            });
            let memory = mem.and_then(|f| {
                let mut m = Memory::default();
                (f(dev, &mut m) == 0 && m.total > 0).then_some(m.total)
            });
            out.push(NvmlGpu {
                bus,
                modes: format!("{mig}, {virt}"),
                memory,
            });
        }
        if let Some(shutdown) = h.symbol("nvmlShutdown") {
            let shutdown: Init = std::mem::transmute(shutdown);
            shutdown();
        }
        if r != 0 {
            return Err(format!("nvmlDeviceGetCount_v2 answered {r}"));
        }
        Ok(out)
    }
}

/// nvmlPciInfo_t (nvml.h).
#[repr(C)]
#[derive(Default)]
struct PciInfo {
    bus_id_legacy: [std::ffi::c_char; 16],
    domain: u32,
    bus: u32,
    device: u32,
    pci_device_id: u32,
    pci_sub_system_id: u32,
    bus_id: [std::ffi::c_char; 32],
}

/// The physical memory of the device at `bus` among NVML's answer, where it says it.
pub fn memory_of(answer: &Result<Vec<NvmlGpu>, String>, bus: &str) -> Option<u64> {
    answer.as_ref().ok()?.iter().find(|g| same_bus(&g.bus, bus))?.memory
}

/// Whether two PCI bus ids name one device. NVML writes an eight-digit domain
/// ("00000000:00:06.0"), the driver four: domains compared as numbers.
fn same_bus(a: &str, b: &str) -> bool {
    let key = |b: &str| {
        let b = b.to_ascii_lowercase();
        b.split_once(':')
            .and_then(|(d, rest)| u32::from_str_radix(d, 16).ok().map(|d| (d, rest.to_string())))
    };
    key(a).is_some() && key(a) == key(b)
}

/// The modes of the device at `bus` ("0000:00:06.0") among NVML's answer, or why unknown.
pub fn modes_of(answer: &Result<Vec<NvmlGpu>, String>, bus: &str) -> String {
    match answer {
        Err(e) => format!("unknown ({e})"),
        Ok(v) => v
            .iter()
            .find(|g| same_bus(&g.bus, bus))
            .map_or_else(|| "unknown (NVML does not list it)".to_string(), |g| g.modes.clone()),
    }
}

/// nvmlGpuVirtualizationMode_t's names.
fn virtualization_name(m: u32) -> &'static str {
    match m {
        0 => "none",
        1 => "passthrough",
        2 => "vGPU guest",
        3 => "vGPU host",
        4 => "vSGA host",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn unknown_without_a_device() {
        assert_eq!(pci_ids("ffff:ff:1f.7"), "unknown");
        assert!(host_gpus(3) >= 1);
        assert_eq!(virtualization_name(2), "vGPU guest");
        let answer = Ok(vec![NvmlGpu {
            bus: "00000000:00:07.0".to_string(),
            modes: "MIG off".to_string(),
            memory: Some(80 << 30),
        }]);
        assert_eq!(modes_of(&answer, "0000:00:07.0"), "MIG off");
        assert_eq!(memory_of(&answer, "0000:00:07.0"), Some(80 << 30));
        assert_eq!(memory_of(&answer, "0000:00:06.0"), None);
        assert!(modes_of(&answer, "0000:00:06.0").starts_with("unknown"));
        assert!(
            modes_of(&answer, "0001:00:07.0").starts_with("unknown"),
            "another domain"
        );
    }
}
