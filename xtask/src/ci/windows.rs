//! The Windows part of `cargo xtask ci`, checked from Linux: check and clippy for the MSVC and GNU
//! targets, the `dynamic-loading` example and the crate's tests cross-built for
//! x86_64-pc-windows-gnu and run under Wine (no driver there: a clean refusal, no panic), and the
//! conformance suite cross-built and run under Wine (it says it runs on Linux only).

use crate::exec::{cargo, run, run_in, runs};
use std::path::Path;
use std::process::Command;

const WINDOWS_MSVC: &str = "x86_64-pc-windows-msvc";
const WINDOWS_GNU: &str = "x86_64-pc-windows-gnu";
/// The C compiler and linker for x86_64-pc-windows-gnu (Debian's gcc-mingw-w64-x86-64).
pub const MINGW_GCC: &str = "x86_64-w64-mingw32-gcc";

/// Wine's 64-bit loader: `wine64` on PATH, where Debian 12's `wine64` package keeps it, or `wine`.
pub fn wine() -> Option<&'static str> {
    ["wine64", "/usr/lib/wine/wine64", "wine"]
        .into_iter()
        .find(|w| runs(w, &["--version"]))
}

/// Windows, checked from this Linux machine. No Windows toolkit is needed: clippy with every
/// feature (checking links nothing), and the `dynamic-loading` build links nothing either.
///
/// 1. for x86_64-pc-windows-msvc and x86_64-pc-windows-gnu: check with default features, and
///    clippy with every feature, warnings denied;
/// 2. the `pool_roundtrip` example (`dynamic-loading`) cross-built for x86_64-pc-windows-gnu and
///    run under Wine, which has no nvcuda.dll: it must say that it cannot open nvcuda.dll and exit
///    with 1 (`ExitCode::FAILURE`), without a panic;
/// 3. the crate's tests (every feature) run under Wine, except the ABI probe, which compiles C for
///    the host;
/// 4. the conformance suite, which runs on Linux only: every test and bench target of `conformance`
///    cross-built for x86_64-pc-windows-gnu (each compiles to a `main` that says so), and the
///    `conformance` test binary (`cargo test -p conformance`'s suite) run under Wine: exit code 1
///    and the one sentence on stderr, no panic.
///
/// Wine runs headless (no DISPLAY), quiet (WINEDEBUG=-all), in its own prefix under target/.
pub fn windows(root: &Path) -> Result<(), String> {
    run_in(
        root,
        "installing the Windows targets",
        "rustup",
        &["target", "add", WINDOWS_MSVC, WINDOWS_GNU],
        &[],
    )?;
    for target in [WINDOWS_MSVC, WINDOWS_GNU] {
        // Default features link cuda.lib: with no Windows toolkit here, build.rs links it by
        // name and warns, and checking needs no library.
        run(
            root,
            &format!("check ({target}, default features, no toolkit)"),
            &["check", "-p", "cuda-mempool-sys", "--locked", "--target", target],
            &[],
        )?;
        run(
            root,
            &format!("clippy ({target})"),
            &[
                "clippy",
                "-p",
                "cuda-mempool-sys",
                "--all-features",
                "--locked",
                "--target",
                target,
                "--",
                "-D",
                "warnings",
            ],
            &[],
        )?;
    }
    run(
        root,
        "cross-building the example for Windows",
        &[
            "build",
            "-p",
            "cuda-mempool-sys",
            "--example",
            "pool_roundtrip",
            "--features",
            "dynamic-loading",
            "--locked",
            "--target",
            WINDOWS_GNU,
        ],
        &[],
    )?;

    let wine = wine().ok_or("wine is not installed: run `sudo bash .ci/install-deps`")?;
    let prefix = root.join("target").join("wine-prefix");
    let wine_cmd = |args: &[&std::ffi::OsStr]| {
        let mut c = Command::new(wine);
        c.args(args).current_dir(root);
        wine_env(&mut c, &prefix);
        c
    };
    println!("xtask ci: {wine} wineboot --init (WINEPREFIX={})", prefix.display());
    let boot = wine_cmd(&["wineboot".as_ref(), "--init".as_ref()])
        .output()
        .map_err(|e| format!("cannot run {wine}: {e}"))?;
    if !boot.status.success() {
        return Err(format!(
            "creating the Wine prefix failed ({}):
{}",
            boot.status,
            String::from_utf8_lossy(&boot.stderr)
        ));
    }
    // Rust's standard library imports ProcessPrng from bcryptprimitives.dll, which Debian 12's
    // Wine 8.0 lacks: a stand-in (.ci/wine/bcryptprimitives.c) where the prefix has none.
    let system32 = prefix.join("drive_c").join("windows").join("system32");
    let bcrypt = system32.join("bcryptprimitives.dll");
    if !bcrypt.exists() {
        let stub = root.join(".ci").join("wine").join("bcryptprimitives.c");
        let (stub, bcrypt_s) = (
            stub.to_str().ok_or("non-UTF-8 path")?,
            bcrypt.to_str().ok_or("non-UTF-8 path")?,
        );
        run_in(
            root,
            "building the bcryptprimitives.dll stand-in",
            MINGW_GCC,
            &[
                "-shared",
                "-O2",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-o",
                bcrypt_s,
                stub,
                "-ladvapi32",
            ],
            &[],
        )?;
    }

    let exe = root
        .join("target")
        .join(WINDOWS_GNU)
        .join("debug")
        .join("examples")
        .join("pool_roundtrip.exe");
    println!("xtask ci: {wine} {}", exe.display());
    expect_refusal(
        wine_cmd(&[exe.as_os_str()]),
        wine,
        "the Windows example under Wine (no driver)",
        "pool_roundtrip: cannot open the CUDA driver library nvcuda.dll: ",
        false,
    )?;
    println!("xtask ci: under Wine without a driver: exit status 1, a LoadError naming nvcuda.dll, no panic");

    println!("xtask ci: the crate's tests under Wine ({WINDOWS_GNU}, every feature; not the ABI probe)");
    let mut tests = Command::new(cargo());
    tests
        .args([
            "test",
            "-p",
            "cuda-mempool-sys",
            "--all-features",
            "--locked",
            "--target",
            WINDOWS_GNU,
            "--lib",
            "--test",
            "table",
            "--test",
            "env_override",
            "--test",
            "build_rules",
            "--test",
            "types",
            "--test",
            "release",
            "--test",
            "cudarc_interop",
        ])
        .current_dir(root)
        .env("CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER", wine);
    let tests = wine_env(&mut tests, &prefix)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !tests.success() {
        return Err(format!("the crate's tests under Wine failed ({tests})"));
    }

    // 4. The conformance suite off Linux: it compiles, and says in one sentence that it runs on
    //    Linux only (cuda-mempool-conformance/src/lib.rs, LINUX_ONLY).
    let args = [
        "test",
        "-p",
        "conformance",
        "--features",
        "selftest",
        "--tests",
        "--benches",
        "--no-run",
        "--locked",
        "--target",
        WINDOWS_GNU,
        "--message-format=json-render-diagnostics",
    ];
    println!("xtask ci: cargo {}", args.join(" "));
    let built = Command::new(cargo())
        .args(args)
        .current_dir(root)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !built.status.success() {
        return Err(format!(
            "cross-building the conformance tests for {WINDOWS_GNU} failed ({})",
            built.status
        ));
    }
    // The `conformance` integration test's executable, from cargo's JSON messages (the lib's unit
    // tests are `conformance-*.exe` too, so the file name alone does not tell).
    let exe = String::from_utf8_lossy(&built.stdout)
        .lines()
        .filter(|l| {
            l.contains(r#""reason":"compiler-artifact""#)
                && l.contains(r#""kind":["test"]"#)
                && l.contains(r#""name":"conformance""#)
        })
        .find_map(|l| {
            let rest = &l[l.find(r#""executable":""#)? + r#""executable":""#.len()..];
            Some(rest[..rest.find('"')?].to_string())
        })
        .ok_or("cargo named no executable for the `conformance` test target")?;
    if exe.contains('\\') {
        return Err(format!(
            "cannot read the path {exe:?} from cargo's JSON (escaped characters)"
        ));
    }
    println!("xtask ci: {wine} {exe}");
    expect_refusal(
        wine_cmd(&[exe.as_ref()]),
        wine,
        "the conformance suite for Windows under Wine",
        "conformance: the conformance suite runs on Linux only",
        true,
    )?;
    println!("xtask ci: the conformance suite for Windows under Wine: exit status 1, one sentence saying it runs on Linux only");
    Ok(())
}

/// Runs `cmd` (a program under Wine), echoes its output, and requires a clean refusal: exit status
/// 1, `expected` in its output (on stderr alone with `stderr_only`), no panic.
fn expect_refusal(mut cmd: Command, wine: &str, what: &str, expected: &str, stderr_only: bool) -> Result<(), String> {
    let out = cmd.output().map_err(|e| format!("cannot run {wine}: {e}"))?;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    for line in stdout.lines().chain(stderr.lines()) {
        println!("xtask ci:   | {line}");
    }
    let searched = if stderr_only {
        stderr.to_string()
    } else {
        format!("{stdout}{stderr}")
    };
    let mut wrong = Vec::new();
    if out.status.code() != Some(1) {
        wrong.push(format!("exit status {} (expected 1)", out.status));
    }
    if !searched.contains(expected) {
        wrong.push(format!(
            "no {expected:?} {}",
            if stderr_only { "on stderr" } else { "in its output" }
        ));
    }
    if searched.contains("panicked") {
        wrong.push("a panic".into());
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!("{what}: {}", wrong.join(", ")))
    }
}

/// Wine headless (no DISPLAY), quiet, in `prefix`, with no driver-related variable of ours.
fn wine_env<'a>(c: &'a mut Command, prefix: &Path) -> &'a mut Command {
    c.env("WINEPREFIX", prefix)
        .env("WINEDEBUG", "-all")
        // No Mono or Gecko installer at the prefix's creation.
        .env("WINEDLLOVERRIDES", "mscoree,mshtml=")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        // There is no driver under Wine.
        .env_remove("CUDA_MEMPOOL_SYS_REQUIRE_LIBCUDA")
        .env_remove("CUDA_MEMPOOL_SYS_LIBCUDA")
}
