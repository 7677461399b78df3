//! A GPU model as an identity: its PCI vendor, device and subsystem IDs (read from the kernel's
//! PCI tree by the bus id the driver gave), MIG and virtualization mode where NVML says them, and
//! how many GPUs the host has, whatever this process is shown (`/proc/driver/nvidia/gpus`).

/// Where the NVIDIA kernel module lists every GPU of the host, one folder per bus id.
const GPUS_DIR: &str = "/proc/driver/nvidia/gpus";
/// The kernel's PCI devices, one folder per bus id.
const PCI_DIR: &str = "/sys/bus/pci/devices";

/// How many GPUs the host has: the kernel module's list, or `visible` where it cannot be read
/// (another OS, a container without /proc/driver).
pub fn host_gpus(visible: usize) -> usize {
    std::fs::read_dir(GPUS_DIR)
        .map(|d| d.filter_map(Result::ok).count())
        .ok()
        .filter(|&n| n > 0)
        .unwrap_or(visible)
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

/// NVML's MIG mode and virtualization mode of each bus id ("MIG off, virtualization none"), or
/// why it could not say; one NVML session for all.
pub fn modes(library: &str, bus_ids: &[String]) -> Vec<String> {
    match nvml_modes(library, bus_ids) {
        Ok(v) => v,
        Err(e) => bus_ids.iter().map(|_| format!("unknown ({e})")).collect(),
    }
}

fn nvml_modes(library: &str, bus_ids: &[String]) -> Result<Vec<String>, String> {
    let h = crate::os::dlopen_local(library)?;
    type Init = unsafe extern "C" fn() -> i32;
    type ByBus = unsafe extern "C" fn(*const std::ffi::c_char, *mut *mut std::ffi::c_void) -> i32;
    type Mig = unsafe extern "C" fn(*mut std::ffi::c_void, *mut u32, *mut u32) -> i32;
    type Virt = unsafe extern "C" fn(*mut std::ffi::c_void, *mut u32) -> i32;
    let (Some(init), Some(by_bus)) = (h.symbol("nvmlInit_v2"), h.symbol("nvmlDeviceGetHandleByPciBusId_v2")) else {
        return Err(format!("{library} lacks nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2"));
    };
    // SAFETY: NVML's documented signatures (nvml.h): handles are opaque pointers, the modes plain
    // unsigned ints; the bus id is a NUL-terminated string that outlives the call.
    unsafe {
        let init: Init = std::mem::transmute(init);
        let by_bus: ByBus = std::mem::transmute(by_bus);
        let mig: Option<Mig> = h.symbol("nvmlDeviceGetMigMode").map(|f| std::mem::transmute(f));
        let virt: Option<Virt> = h
            .symbol("nvmlDeviceGetVirtualizationMode")
            .map(|f| std::mem::transmute(f));
        let r = init();
        if r != 0 {
            return Err(format!("nvmlInit_v2 answered {r}"));
        }
        let out = bus_ids
            .iter()
            .map(|bus| {
                let Ok(c) = std::ffi::CString::new(bus.as_str()) else {
                    return "unknown (bad bus id)".to_string();
                };
                let mut dev = std::ptr::null_mut();
                let r = by_bus(c.as_ptr(), &mut dev);
                if r != 0 {
                    return format!("unknown (nvmlDeviceGetHandleByPciBusId_v2 answered {r})");
                }
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
                format!("{mig}, {virt}")
            })
            .collect();
        if let Some(shutdown) = h.symbol("nvmlShutdown") {
            let shutdown: Init = std::mem::transmute(shutdown);
            shutdown();
        }
        Ok(out)
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
    }
}
