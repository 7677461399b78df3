//! The mutation library (shim/) as this machine can judge it: its list of mutants
//! (`CONFORMANCE_MUTANT=list`, less the machine's faults of API 0), the machine as the suite's own
//! probe sees it, whether it can show a mutant that needs `gpu`, `ipc`, `peer` or `multi` (and why
//! not), and the capabilities every run then requires (CONFORMANCE_REQUIRE), so that a mutant that
//! hides one fails trials instead of turning them into ignored ones.

use super::launch::suite_under_library;
use std::sync::OnceLock;

/// One mutant as the library lists it: its name, API, what the machine needs to show it, its kind
/// (`mutant`, or `fault`) and what it breaks.
#[derive(Clone, Debug)]
pub struct Mutant {
    pub name: String,
    pub api: u32,
    pub needs: String,
    pub kind: String,
    pub what: String,
}

/// The library's own list (`CONFORMANCE_MUTANT=list`: it prints and exits at load), less the
/// machine's faults (API 0, shim/precondition.c): they sabotage no API but what every run finds (a
/// coordinator that crashes, a device that is not there), so no trial can be said to kill them.
pub fn list() -> Result<Vec<Mutant>, String> {
    let out = suite_under_library()?
        .env("CONFORMANCE_MUTANT", "list")
        .output()
        .map_err(|e| format!("cannot list the mutants: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "CONFORMANCE_MUTANT=list failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.splitn(5, '\t').collect();
            match f[..] {
                [name, api, needs, kind, what] => Ok(Mutant {
                    name: name.into(),
                    api: api.parse().map_err(|_| format!("bad API in {l:?}"))?,
                    needs: needs.into(),
                    kind: kind.into(),
                    what: what.into(),
                }),
                _ => Err(format!("the library's list has a malformed line: {l:?}")),
            }
        })
        .filter(|m| !matches!(m, Ok(m) if m.api == 0))
        .collect()
}

/// What the baseline's machine has, required of every run: a mutant that hides a capability
/// (the probe's device, say) then fails trials instead of turning them into ignored ones.
pub fn required() -> String {
    [
        ("gpu", "gpu"),
        ("ipc", "ipc"),
        ("peer", "peer"),
        ("multi", "multi-peer"),
    ]
    .iter()
    .filter(|(needs, _)| missing(needs).is_none())
    .map(|(_, cap)| *cap)
    .collect::<Vec<_>>()
    .join(",")
}

/// This machine as the suite sees it (the suite's own probe, its default device selection): it
/// decides which mutants can be judged, the same way whether the tests are listed (nextest) or run.
fn machine() -> &'static conformance::harness::Machine {
    static M: OnceLock<conformance::harness::Machine> = OnceLock::new();
    M.get_or_init(|| {
        use conformance::harness::devices::{select, Request};
        // The suite's settings first, read at this setup as the suite's `main` reads them (the probe
        // fills the entry-point table the way they say).
        let settings = conformance::harness::settings::Settings::at_entry();
        let mut m = conformance::harness::probe::probe(&settings);
        m.selection = Some(select(&Request::Default, &m, false).unwrap_or_default());
        m
    })
}

/// Whether this machine can show mutants that need `needs`; else why not.
pub fn missing(needs: &str) -> Option<String> {
    use conformance::harness::Cap;
    let cap = match needs {
        "none" => return None,
        "gpu" => Cap::Gpu,
        "ipc" => Cap::Ipc,
        "peer" => Cap::Peer,
        "multi" => Cap::MultiPeer,
        // The checkpoint leg's damage mutants: judged only in a run of the leg with the mutant
        // engine (docs/conformance/checkpoint/).
        "checkpoint" => Cap::Checkpoint,
        other => return Some(format!("unknown `needs` {other:?} in the library's list")),
    };
    // Every capability beyond `gpu` needs a GPU first.
    let m = machine();
    m.has(Cap::Gpu).and_then(|()| m.has(cap)).err()
}
