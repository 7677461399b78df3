//! The checkpoint leg without a GPU: its outside engine (shim/engine/, `cump-checkpoint-engine`)
//! says clearly what is wrong where it cannot work (no such symbols in a pre-R570 driver, a bad
//! process id, a bad step), and a run without the leg ignores the leg's trials with the reason.
#![cfg(target_os = "linux")]

use std::process::Command;

fn engine(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CONFORMANCE_CHECKPOINT_ENGINE_BUILT"))
        .args(args)
        .output()
        .expect("the engine runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_engine_names_what_is_wrong() {
    let (code, err) = engine(&[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("usage"), "{err}");
    let (code, err) = engine(&["zero", "toggle"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a process id"), "{err}");
    // On a driver without the checkpoint engine (Debian's R535 here), the missing symbol is named;
    // on one with it, a bad step is refused before any call.
    let (code, err) = engine(&[&std::process::id().to_string(), "sideways"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("has no cuCheckpointProcess") || err.contains("cannot open libcuda") || err.contains("sideways"),
        "{err}"
    );
}
