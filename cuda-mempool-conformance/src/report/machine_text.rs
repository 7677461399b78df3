//! The machine in words, from the report's model of it (`model::Machine`): report.md's block
//! between ``` fences, and the allocator bench's header. The driver and how it was found, what
//! answered each API on each path, the libraries under test, the devices and their links, the
//! devices the run used, what a new process's first GPU work took.

use crate::driver::check::code_name;
use crate::driver::cu::CUresult;
use crate::harness::machine::{answered_by, by_object};
use crate::harness::settings::DEVICES_VAR;
use conformance_model::{Footprint, Machine, Selection};
use std::fmt::Write as _;

/// A CUresult the report keeps as a number, by name.
fn code(c: i64) -> String {
    code_name(CUresult(c as u32))
}

/// The block, one fact a line, each line ending in a newline.
pub fn summary(m: &Machine) -> String {
    let mut s = String::new();
    let v = m.driver_version;
    let identity = m.identity.clone().unwrap_or_default();
    writeln!(
        s,
        "driver: {}; CUDA {}.{} ({v}); libcuda: {}",
        crate::harness::identity::describe(&identity.version, &identity.source),
        v / 1000,
        v % 1000 / 10,
        m.libcuda.as_deref().unwrap_or_default()
    )
    .unwrap();
    let sources: Vec<String> = identity.sources.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    writeln!(s, "driver version sources: {}", sources.join("; ")).unwrap();
    if let Some(e) = &m.probe_error {
        writeln!(s, "PROBE FAILED: {e}").unwrap();
    }
    writeln!(s, "cuInit: {}", code(m.cu_init)).unwrap();
    if let Some(Some(h)) = m.hidden_init {
        writeln!(
            s,
            "cuInit with every device hidden (CUDA_VISIBLE_DEVICES=\"\"): {}",
            code(h)
        )
        .unwrap();
    }
    let entry = m.entry.as_deref().unwrap_or_default();
    writeln!(
        s,
        "answered by: {}",
        answered_by(m.resolved.as_deref().unwrap_or_default(), entry)
    )
    .unwrap();
    if let Some(Some(w)) = &m.not_reached {
        writeln!(s, "LIBRARY UNDER TEST NOT REACHED: {w}").unwrap();
    }
    for p in m.paths.iter().flatten() {
        match &p.error {
            Some(e) => writeln!(s, "  path {}: cannot be filled: {e}", p.mode).unwrap(),
            None => writeln!(s, "  path {}: {}", p.mode, by_object(&p.objects)).unwrap(),
        }
    }
    libraries(&mut s, m);
    for b in m.bypasses.iter().flatten() {
        writeln!(s, "LIBRARY UNDER TEST BYPASSED: {b}").unwrap();
    }
    match &m.lookup_init {
        Some(Some(Ok(c))) => writeln!(
            s,
            "cuDeviceGetCount after cuGetProcAddress of the 14 APIs, without cuInit: {}",
            code(*c)
        )
        .unwrap(),
        Some(Some(Err(e))) => writeln!(s, "cuGetProcAddress of the 14 APIs without cuInit: no answer ({e})").unwrap(),
        _ => {}
    }
    devices(&mut s, m);
    if m.cu_init == 0 {
        let sel = m.selection.clone().unwrap_or_default();
        writeln!(
            s,
            "devices used ({}): single-device trials on {:?}, pair trials on {:?}, multi-device group {:?}",
            chosen_by(m, &sel),
            sel.devices,
            sel.pairs,
            sel.multi
        )
        .unwrap();
    }
    if let Some(f) = &m.first_work {
        writeln!(
            s,
            "first GPU work of a new process (the probe's, device 0): context {:.3} s; an allocation, memset, free and \
             synchronize {:.3} s, the same again {:.3} s (a wait of {:.3} s)",
            f.context_s,
            f.first_s,
            f.again_s,
            f.wait_s()
        )
        .unwrap();
    }
    writeln!(
        s,
        "CUDA 13 pool selectors: {}; IMEX channels: {}",
        if m.cuda13_selectors { "present" } else { "absent" },
        if m.imex_channels { "present" } else { "absent" }
    )
    .unwrap();
    writeln!(s, "entry points: {entry}").unwrap();
    if !m.missing.is_empty() {
        writeln!(s, "entry points the library lacks: {}", m.missing.join(", ")).unwrap();
    }
    s
}

/// The header's line of the suite's own footprint (issue 47): "The suite's footprint on the device
/// (NVML's per-process memory, 24 samples 250 ms apart): 9 processes, at most 7 at once holding
/// 3,584 MiB together; a bare context about 512 MiB." and, under a cap, how the run answered it.
pub fn footprint(f: &Footprint) -> String {
    let mib = |b: u64| b >> 20;
    let mut s = format!(
        "The suite's footprint on the device ({}): {} processes, at most {} at once holding {} MiB together; a bare \
         context about {} MiB.",
        f.source,
        f.processes,
        f.peak_processes,
        mib(f.peak_bytes),
        mib(f.context_bytes)
    );
    if let Some(c) = &f.cap {
        write!(
            s,
            " The device is capped (it reports {} MiB of {} MiB physical): the run used {} general worker processes \
             instead of {}.",
            mib(c.reported),
            mib(c.physical),
            c.workers,
            c.default_workers
        )
        .unwrap();
    }
    s
}

/// The libraries under test: what each defines of the driver's, and its file.
fn libraries(s: &mut String, m: &Machine) {
    for l in m.under_test.iter().flatten() {
        match &l.error {
            Some(e) => writeln!(s, "library under test {} ({}): {e}", l.path, l.named_by).unwrap(),
            None => writeln!(
                s,
                "library under test {} ({}) defines: {}",
                l.path,
                l.named_by,
                if l.exports.is_empty() {
                    "none of the driver's symbols".to_string()
                } else {
                    l.exports.join(", ")
                }
            )
            .unwrap(),
        }
        match &l.file {
            Some(Ok(f)) => writeln!(
                s,
                "  file {}: {} bytes, sha256 {}, {} cu* exports",
                f.file, f.size, f.sha256, f.cu_exports
            )
            .unwrap(),
            Some(Err(e)) => writeln!(s, "  file: {e}").unwrap(),
            None => {}
        }
    }
}

/// The host's GPUs, each device, and with more than one the peer matrix and links.
fn devices(s: &mut String, m: &Machine) {
    if let Some(n) = m.host_gpus.filter(|n| *n > 0) {
        writeln!(
            s,
            "host: {n} GPU(s) in all (the kernel's lists), {} visible to this run",
            m.devices.len()
        )
        .unwrap();
    }
    for d in &m.devices {
        writeln!(
            s,
            "device {}: {} (sm_{}{}), PCI IDs {}, {}, UUID {}, PCI {}, {} MiB, memory pools: {}, handle types: \
             {:#x} (posix fd: {}, fabric: {}), host pools: {}, host NUMA pools: {} (host NUMA id {})",
            d.ordinal,
            d.name,
            d.compute_capability.0,
            d.compute_capability.1,
            d.pci_ids.as_deref().unwrap_or("unknown"),
            d.modes.as_deref().unwrap_or("unknown"),
            d.uuid.as_deref().unwrap_or("unknown"),
            d.pci_bus_id.as_deref().unwrap_or("unknown"),
            d.total_mem >> 20,
            d.memory_pools,
            d.handle_types,
            d.handle_types & 1 != 0,
            d.fabric,
            d.host_pools,
            d.host_numa_pools,
            d.host_numa_id
        )
        .unwrap();
    }
    if m.devices.len() > 1 {
        let rows: Vec<String> = m
            .peer
            .iter()
            .map(|r| r.iter().map(|&b| if b { "1" } else { "0" }).collect::<String>())
            .collect();
        writeln!(s, "peer matrix (row can access column): {}", rows.join(" / ")).unwrap();
        for p in m.p2p.iter().flatten() {
            writeln!(
                s,
                "  {} -> {}: performance rank {}, native atomics {}",
                p.a,
                p.b,
                p.performance_rank,
                if p.native_atomics { "yes" } else { "no" }
            )
            .unwrap();
        }
    }
}

/// How the devices were chosen: `CONFORMANCE_DEVICES=…` as the run's settings recorded it, or
/// "default".
fn chosen_by(m: &Machine, sel: &Selection) -> String {
    if !sel.explicit {
        return "default".to_string();
    }
    let value = m
        .provenance
        .iter()
        .flat_map(|p| &p.environment)
        .find(|(k, _)| k == DEVICES_VAR)
        .map_or("", |(_, v)| v.as_str());
    format!("{DEVICES_VAR}={value}")
}

#[cfg(test)]
mod tests {
    use conformance_model::{CapSeen, Footprint};

    /// The header's footprint line, and under a cap the workers the run used.
    #[test]
    fn the_footprint_line_says_processes_peak_context_and_cap() {
        let mut f = Footprint {
            source: "NVML's per-process memory, 24 samples 250 ms apart".into(),
            processes: 9,
            peak_processes: 7,
            peak_bytes: 3584 << 20,
            context_bytes: 512 << 20,
            ..Footprint::default()
        };
        assert_eq!(
            super::footprint(&f),
            "The suite's footprint on the device (NVML's per-process memory, 24 samples 250 ms apart): 9 processes, \
             at most 7 at once holding 3584 MiB together; a bare context about 512 MiB."
        );
        f.cap = Some(CapSeen {
            reported: 40 << 30,
            physical: 80 << 30,
            workers: 2,
            default_workers: 4,
            ..CapSeen::default()
        });
        assert!(super::footprint(&f).ends_with(
            "The device is capped (it reports 40960 MiB of 81920 MiB physical): the run used 2 general worker \
             processes instead of 4."
        ));
    }
}
