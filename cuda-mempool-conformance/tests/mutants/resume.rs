//! CONFORMANCE_MUTANTS_RESUME: a mutation run in parts. Each part's mutants.json (rewritten after
//! every verdict, so a part cut off by a call's time limit still holds what it judged) is read back
//! by the next part, which takes those verdicts as they are, judges only the rest, and writes one
//! report for the whole: the matrix (`CONFORMANCE_MUTANTS_STOP=never`) takes longer than one
//! 10-minute device call.

use super::record::Verdict;
use super::saved::{self, MutantsJson};
use super::settings::{select_mode, stop_mode, SELECT_VAR, STOP_VAR};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// CONFORMANCE_MUTANTS_RESUME=FILE[:FILE...] (the platform's path-list separator): mutants.json of
/// earlier parts of the same run: the same CONFORMANCE_MUTANTS_SELECT and _STOP, device and driver.
pub const RESUME_VAR: &str = "CONFORMANCE_MUTANTS_RESUME";

/// What the earlier parts judged.
#[derive(Debug, Default)]
pub struct Earlier {
    /// Their walls, summed.
    pub wall: f64,
    /// How many parts (a file that was itself resumed counts its own).
    pub parts: u64,
    /// The device and the driver they ran on (checked against this part's baseline).
    pub machine: Option<(String, String)>,
    pub verdicts: BTreeMap<String, Verdict>,
}

/// The verdicts of one earlier part's report `j` (named `shown` in errors), for a run under
/// `select` and `stop`: only judged mutants (killed, survived, equivalent); the others are judged
/// again.
pub fn read_part(j: &MutantsJson, shown: &str, select: &str, stop: &str, into: &mut Earlier) -> Result<(), String> {
    let what = "expected the mutants.json an earlier part of this run wrote";
    let mutants = (j.mutants.as_ref()).ok_or_else(|| format!("{RESUME_VAR}: {shown}: no \"mutants\" list; {what}"))?;
    for (got, var, want) in [(&j.select, SELECT_VAR, select), (&j.stop, STOP_VAR, stop)] {
        let got = got.as_deref().unwrap_or("?");
        if got != want {
            return Err(format!(
                "{RESUME_VAR}: {shown} was run with {var}={got}, this run with {want}: run this part with {var}={got}, \
                 or start the run anew without {RESUME_VAR}"
            ));
        }
    }
    let machine = (
        j.machine.device.as_deref().unwrap_or("?").to_string(),
        j.machine.driver.as_deref().unwrap_or("?").to_string(),
    );
    if let Some(m) = into.machine.as_ref().filter(|m| **m != machine) {
        return Err(format!(
            "{RESUME_VAR}: {shown} ran on {machine:?}, an earlier file on {m:?}: one run, one machine"
        ));
    }
    into.machine = Some(machine);
    into.wall += j.wall_s.unwrap_or(0.0);
    into.parts += j.parts.unwrap_or(1);
    for m in mutants {
        let (Some(name), Some(status)) = (m.name.as_deref(), m.status.as_deref()) else {
            return Err(format!(
                "{RESUME_VAR}: {shown}: a mutant without \"name\" or \"status\"; {what}"
            ));
        };
        let judged = status == "killed" || status.starts_with("SURVIVED") || status.starts_with("equivalent");
        if !judged {
            continue;
        }
        let select = match m.select.as_deref() {
            Some("all") => "all",
            Some("beside") => "beside",
            _ => "calls",
        };
        into.verdicts.insert(
            name.to_string(),
            Verdict {
                killers: m.killed_by.iter().map(|t| (t.clone(), String::new())).collect(),
                changed: m.changed.clone(),
                wall: m.wall_s,
                status: m.exit.clone(),
                select,
                ran: m.trials_run.unwrap_or(0) as usize,
                stopped: m.trials_stopped.unwrap_or(0) as usize,
                unreached: status.strip_prefix("SURVIVED: ").map(String::from),
            },
        );
    }
    Ok(())
}

/// Every file CONFORMANCE_MUTANTS_RESUME names (an empty [`Earlier`] without it).
pub fn read(select: &str, stop: &str) -> Result<Earlier, String> {
    let mut e = Earlier::default();
    let Some(list) = std::env::var_os(RESUME_VAR).filter(|v| !v.is_empty()) else {
        return Ok(e);
    };
    for path in std::env::split_paths(&list) {
        let j = saved::read(RESUME_VAR, &path)?;
        read_part(&j, &path.display().to_string(), select, stop, &mut e)?;
    }
    Ok(e)
}

/// The earlier parts' verdicts (CONFORMANCE_MUTANTS_RESUME), read once.
pub fn earlier() -> Result<&'static Earlier, String> {
    static E: OnceLock<Result<Earlier, String>> = OnceLock::new();
    E.get_or_init(|| read(select_mode()?.name(), stop_mode()?.name()))
        .as_ref()
        .map_err(Clone::clone)
}

/// The check (no run of the suite): a killed, a survived and an unjudged mutant read back, and a
/// part of another mode refused.
pub fn check() -> Result<(), String> {
    // fixture: a hand-made mutants.json of an earlier part (one mutant of each status), written as
    // JSON to check the reader itself.
    let j = serde_json::json!({
        "select": "calls", "stop": "never", "wall_s": 10.5, "parts": 2,
        "machine": {"device": "GPU", "driver": "580"},
        "mutants": [
            {"name": "a", "status": "killed", "killed_by": ["t1", "t2"], "changed": [], "wall_s": 1.0,
             "exit": "exit status: 101", "select": "calls", "trials_run": 9, "trials_stopped": 0},
            {"name": "b", "status": "SURVIVED: no trial that passed in the baseline calls API 833", "killed_by": [],
             "select": "calls"},
            {"name": "c", "status": "not judged (filtered out, or the run stopped first)"},
            {"name": "d", "status": "ERROR: the run failed"},
        ]
    });
    let j: MutantsJson = serde_json::from_value(j).map_err(|e| format!("the fixture does not read: {e}"))?;
    let mut e = Earlier::default();
    read_part(&j, "part1", "calls", "never", &mut e)?;
    let names: Vec<&str> = e.verdicts.keys().map(String::as_str).collect();
    let a = &e.verdicts["a"];
    let ok = names == ["a", "b"]
        && a.killers.iter().map(|(t, _)| t.as_str()).eq(["t1", "t2"])
        && a.ran == 9
        && e.verdicts["b"].killers.is_empty()
        && e.verdicts["b"].unreached.as_deref() == Some("no trial that passed in the baseline calls API 833")
        && e.parts == 2
        && (e.wall - 10.5).abs() < 1e-9;
    if !ok {
        return Err(format!("read back wrongly: {e:?}"));
    }
    let refused = read_part(&j, "part1", "calls", "first", &mut Earlier::default());
    match refused {
        Err(m) if m.contains("STOP=never") => Ok(()),
        other => Err(format!(
            "a part run with STOP=never was taken by a STOP=first run: {other:?}"
        )),
    }
}
