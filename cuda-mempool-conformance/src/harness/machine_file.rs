//! The machine as a process of the run knows it (its probe, as JSON), handed to a child of its own
//! process (`case:TRIAL`, `case-ahead`) in a file, which the child reads instead of probing again.

/// The variable naming a file that holds the machine a `case:TRIAL` child runs on (the parent's
/// probe, as JSON): the child reads it instead of probing again.
pub const MACHINE_FILE_VAR: &str = "CONFORMANCE_CHILD_MACHINE";

/// The machine as this process knows it, in a file of its own for a child (MACHINE_FILE_VAR), which
/// reads it instead of probing again (a probe costs about 0.25 s, on the critical path of the graph
/// caps trials); removed when dropped. None written (no room in the temporary directory): the
/// child probes.
pub struct MachineFile(Option<std::path::PathBuf>);
impl MachineFile {
    pub fn write(m: &crate::harness::Machine) -> MachineFile {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::env::temp_dir().join(format!(
            "cump-machine-{}-{}",
            std::process::id(),
            crate::harness::child::starts()
        ));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&file)
            .and_then(|mut f| f.write_all(m.to_json().to_string().as_bytes()))
            .is_ok();
        MachineFile(written.then_some(file))
    }
    /// The child's variable naming it, where it was written.
    pub fn var(&self) -> Option<(&'static str, &str)> {
        self.0.as_ref().and_then(|p| p.to_str()).map(|p| (MACHINE_FILE_VAR, p))
    }
}
impl Drop for MachineFile {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}
