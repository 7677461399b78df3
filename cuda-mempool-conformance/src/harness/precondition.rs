//! The run's preconditions, judged once from the probe: the driver library loads, the probe
//! answers, cuInit answers SUCCESS or NO_DEVICE, and with every device hidden it answers
//! NO_DEVICE; apart from those, looking up entry points leaves the driver uninitialised. One that
//! fails is said once, with its cause and its fix (by its trial, `suite::preconditions` or
//! `suite::lookup_does_not_initialise`, and the report's header); the trials that rely on it are
//! not run, and not counted against any API.

use crate::driver::check::code_name;
use crate::driver::cu::CUresult;
use crate::harness::machine::Machine;

/// Something every trial of a kind relies on, judged in this order (each relies on those before).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precondition {
    /// The driver library (libcuda, or what stands in for it) can be loaded.
    Library,
    /// The probe's child answered (it did not die or hang in cuInit or a device query).
    Probe,
    /// cuInit answers CUDA_SUCCESS, or CUDA_ERROR_NO_DEVICE on a machine without a GPU.
    Init,
    /// With every device hidden (CUDA_VISIBLE_DEVICES=""), cuInit answers CUDA_ERROR_NO_DEVICE.
    HiddenNoDevice,
    /// Looking up the 14 APIs with cuGetProcAddress, and no cuInit, leaves the driver
    /// uninitialised (cuDeviceGetCount still answers CUDA_ERROR_NOT_INITIALIZED). Not in the order
    /// above: judged on its own (`lookup`), by its own trial.
    LookupNoInit,
}

/// The trial that says whether the run's ordered preconditions hold.
pub const PRECONDITIONS_TRIAL: &str = "suite::preconditions";
/// The trial that says whether looking up entry points leaves the driver uninitialised.
pub const LOOKUP_TRIAL: &str = "suite::lookup_does_not_initialise";

/// What a trial relies on unless its case says otherwise: a loaded library, a probe, a cuInit
/// that works.
pub const DEFAULT: &[Precondition] = &[Precondition::Library, Precondition::Probe, Precondition::Init];

impl Precondition {
    /// What holds when it holds, in words.
    pub fn what(self) -> &'static str {
        match self {
            Precondition::Library => "the driver library loads",
            Precondition::Probe => "the probe answers",
            Precondition::Init => "cuInit answers CUDA_SUCCESS or CUDA_ERROR_NO_DEVICE",
            Precondition::HiddenNoDevice => "with every device hidden, cuInit answers CUDA_ERROR_NO_DEVICE",
            Precondition::LookupNoInit => "looking up entry points (cuGetProcAddress) leaves the driver uninitialised",
        }
    }
    /// The trial that says when it does not hold, and why.
    pub fn trial(self) -> &'static str {
        match self {
            Precondition::LookupNoInit => LOOKUP_TRIAL,
            _ => PRECONDITIONS_TRIAL,
        }
    }
}

/// A precondition that does not hold: why, and what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Broken {
    pub which: Precondition,
    pub cause: String,
    pub fix: String,
}

impl Broken {
    /// One paragraph: what does not hold, why, what to do.
    pub fn text(&self) -> String {
        text(self.which.what(), &self.cause, &self.fix)
    }
}

/// A precondition not met (`what`), why, and what to do, as one paragraph.
pub fn text(what: &str, cause: &str, fix: &str) -> String {
    format!("precondition not met: {what}. {cause}. To fix: {fix}.")
}

const LIBCUDA_VAR: &str = "CUDA_MEMPOOL_SYS_LIBCUDA";

/// The first precondition `m` does not meet, if any.
pub fn broken(m: &Machine) -> Option<Broken> {
    let b = |which, cause: String, fix: String| Some(Broken { which, cause, fix });
    if let Some(e) = m.load_error() {
        return b(
            Precondition::Library,
            format!("The driver library could not be loaded: {e}"),
            format!(
                "install the NVIDIA driver (Debian: the non-free package libcuda1), or point {LIBCUDA_VAR} at the \
                 driver's libcuda.so.1"
            ),
        );
    }
    if let Some(e) = &m.probe_error {
        return b(
            Precondition::Probe,
            format!("The probe's child (cuInit and device queries) gave no answer: {e}"),
            "see what the library under test does in `CONFORMANCE_CHILD=probe <the conformance binary>`; a slow \
             but working layer needs a larger CONFORMANCE_TRIAL_TIMEOUT"
                .to_string(),
        );
    }
    let init = CUresult(m.cu_init as u32);
    if init != CUresult::CUDA_SUCCESS && init != CUresult::CUDA_ERROR_NO_DEVICE {
        let (cause, fix) = init_advice(m, init);
        return b(Precondition::Init, cause, fix);
    }
    match m.hidden_init().map(|h| CUresult(h as u32)) {
        Some(h) if h != CUresult::CUDA_ERROR_NO_DEVICE => b(
            Precondition::HiddenNoDevice,
            format!(
                "With CUDA_VISIBLE_DEVICES=\"\", cuInit answered {}: something between the suite and the driver \
                 initialises without a device or ignores the variable (NVIDIA's compute-sanitizer does)",
                code_name(h)
            ),
            "the trials `*::after_cuInit_no_device_not_initialized` cannot be judged under this layer: run them \
             without it, or list `suite::preconditions` in a CONFORMANCE_EXPECT file to accept the layer's behaviour"
                .to_string(),
        ),
        _ => None,
    }
}

/// Whether looking up the 14 APIs initialised the driver (`Machine::lookup_init`): broken when
/// cuDeviceGetCount then answered anything but CUDA_ERROR_NOT_INITIALIZED, or the child that
/// looked them up gave no answer; None when it holds or was not asked.
pub fn lookup(m: &Machine) -> Option<Broken> {
    let b = |cause: String| {
        Some(Broken {
            which: Precondition::LookupNoInit,
            cause,
            fix: "do not initialise the driver (cuInit, or a call that needs it) inside cuGetProcAddress or dlsym; \
                  initialise lazily, in the first API call made after the application's own cuInit"
                .to_string(),
        })
    };
    match m.lookup_init() {
        Some(Ok(c)) if CUresult(*c as u32) != CUresult::CUDA_ERROR_NOT_INITIALIZED => b(format!(
            "After cuGetProcAddress of the 14 APIs, in a process that never called cuInit, cuDeviceGetCount \
             answered {} where the driver answers CUDA_ERROR_NOT_INITIALIZED: the library under test initialises \
             the driver when entry points are looked up, so every API called before cuInit finds it initialised \
             (the `*::before_cuInit_not_initialized` trials are not judged under it)",
            code_name(CUresult(*c as u32))
        )),
        Some(Err(e)) => b(format!(
            "The child that looked up the 14 APIs with cuGetProcAddress, without cuInit, gave no answer: {e}"
        )),
        _ => None,
    }
}

/// Why cuInit's answer `init` leaves the suite nothing to test, and what to do.
fn init_advice(m: &Machine, init: CUresult) -> (String, String) {
    let said = format!("cuInit answered {}", code_name(init));
    let id = m.identity();
    let lib = id.libcuda.as_deref().unwrap_or("unknown (no version in its file name)");
    let module = id
        .module
        .as_deref()
        .unwrap_or("unknown (/proc/driver/nvidia/version is not readable)");
    if init == CUresult::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH {
        let want = id.module.as_deref().unwrap_or("the kernel module's version");
        return (
            format!(
                "{said}: the driver library {} (version {lib}) does not match the loaded kernel module (version \
                 {module})",
                m.libcuda()
            ),
            format!(
                "install the driver's user-space libraries of version {want} (the package of the loaded module), or \
                 point {LIBCUDA_VAR} at a libcuda.so.{want}; or load the kernel module of version {lib} (reboot after \
                 installing it)"
            ),
        );
    }
    if init == CUresult::CUDA_ERROR_STUB_LIBRARY {
        return (
            format!("{said}: {} is the CUDA toolkit's stub, not the driver", m.libcuda()),
            format!("point {LIBCUDA_VAR} at the driver's libcuda.so.1, or take the toolkit's stubs directory off the library path"),
        );
    }
    if init == CUresult::CUDA_ERROR_NOT_FOUND && m.missing.iter().any(|s| s == "cuInit") {
        return (
            format!("{said}: the library under test has no cuInit"),
            "load the driver (or a layer that forwards cuInit to it)".to_string(),
        );
    }
    (
        format!(
            "{said} (driver library {}, version {lib}; kernel module {module})",
            m.libcuda()
        ),
        "check the driver with nvidia-smi; where a layer stands in for the driver, run once without it to tell \
         the two apart"
            .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::machine::blank;
    use conformance_model::{self as model, Identity};

    #[test]
    fn mismatch_names_both_versions_and_the_fix() {
        let m = Machine::from(model::Machine {
            cu_init: 803,
            libcuda: Some("/x/libcuda.so.535.309.01".into()),
            identity: Some(Identity {
                module: Some("580.159.04".into()),
                libcuda: Some("535.309.01".into()),
                ..Identity::default()
            }),
            ..blank()
        });
        let b = broken(&m).unwrap();
        assert_eq!(b.which, Precondition::Init);
        let t = b.text();
        for want in [
            "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)",
            "535.309.01",
            "580.159.04",
            LIBCUDA_VAR,
        ] {
            assert!(t.contains(want), "{want} missing from: {t}");
        }
    }

    #[test]
    fn order_and_healthy_machines() {
        let healthy = model::Machine {
            cu_init: 0,
            hidden_init: Some(Some(100)),
            ..blank()
        };
        assert_eq!(broken(&Machine::from(healthy.clone())), None);
        let no_gpu = model::Machine {
            cu_init: 100,
            hidden_init: Some(Some(100)),
            ..blank()
        };
        assert_eq!(broken(&Machine::from(no_gpu)), None);
        let sanitizer = model::Machine {
            hidden_init: Some(Some(0)),
            ..healthy
        };
        assert_eq!(
            broken(&Machine::from(sanitizer.clone())).unwrap().which,
            Precondition::HiddenNoDevice
        );
        let no_lib = model::Machine {
            load_error: Some(Some("cannot open /nonexistent".into())),
            cu_init: 500,
            ..sanitizer
        };
        assert_eq!(broken(&Machine::from(no_lib)).unwrap().which, Precondition::Library);
    }

    #[test]
    fn lookup_that_initialises_is_broken_on_its_own() {
        let m = |l: Option<Result<i64, String>>| {
            Machine::from(model::Machine {
                cu_init: 0,
                hidden_init: Some(Some(100)),
                lookup_init: Some(l),
                ..blank()
            })
        };
        assert_eq!(lookup(&m(None)), None);
        assert_eq!(lookup(&m(Some(Ok(3)))), None);
        let b = lookup(&m(Some(Ok(0)))).unwrap();
        assert_eq!((b.which, b.which.trial()), (Precondition::LookupNoInit, LOOKUP_TRIAL));
        assert!(b.text().contains("CUDA_SUCCESS"), "{}", b.text());
        assert_eq!(broken(&m(Some(Ok(0)))), None, "not one of the ordered preconditions");
        assert!(lookup(&m(Some(Err("killed by SIGSEGV".into())))).is_some());
    }
}
