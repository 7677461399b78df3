//! Project automation.
//!
//!   cargo xtask regen [--check] [--cuda-include DIR]
//!       Regenerate cuda-mempool-sys/src/generated/cudaNN.rs and the ABI probe under
//!       cuda-mempool-sys/tests/abi/ for every pinned CUDA major. `--check` writes nothing and fails
//!       if a committed file differs from what would be generated.
//!   cargo xtask ci
//!       Everything CI checks: formatting, clippy (warnings denied), rustdoc (warnings denied),
//!       `regen --check`, the ABI check with every major, all tests (linked and `dynamic-loading`),
//!       the feature-union workspace (a cuda-12 and a cuda-13 dependent in one build), the packaged
//!       crate's tests from the unpacked .crate, the MSRV build (installed with rustup), the suite
//!       under nextest (`--profile ci`, JUnit), `.ci/gpu-job` with no GPU required, the matrix page of the committed H100 reports drawn by
//!       headless Chromium (its counts equal to matrix.json, a screenshot kept), and Windows:
//!       clippy for x86_64-pc-windows-msvc and -gnu, and the `dynamic-loading` example and the
//!       crate's tests cross-built for x86_64-pc-windows-gnu and run under Wine (no driver there).
//!       `.ci/run` installs the system packages and then runs this.
//!   cargo xtask docs
//!       The docs coverage check alone (also part of `ci`): every public function of
//!       cuda-mempool-sys documented, `# Safety` on every unsafe one, NVIDIA's reference linked
//!       from every bound one.
//!   cargo xtask bench-diff OLD.json NEW.json [--group G]
//!       Two allocator bench runs (bench.json) case by case: medians and NEW / OLD (what a library
//!       under LD_PRELOAD adds per API, say, with `--group api`).
//!   cargo xtask diff OLD.json NEW.json
//!       What changed between two conformance reports (exit 1 if anything regressed).
//!   cargo xtask matrix REPORT.json… [--out DIR]
//!       Many conformance reports as one matrix (the suite's `--matrix`): shards of one run merged
//!       into one column, other machines, drivers, libraries as columns; DIR/matrix.md, matrix.json
//!       and a self-contained matrix.html (default target/matrix). `ci` checks the committed H100
//!       reports' page in headless Chromium (`cargo xtask matrix --ci`: that step alone).
//!   cargo xtask mutants [--report DIR] [FILTER...]
//!       The suite once per mutant of the mutation library (cuda-mempool-conformance/shim/), each
//!       time only the trials that reached the mutant's API (CONFORMANCE_MUTANTS_SELECT=all: all):
//!       which trials kill which mutant, and the survivors (a survivor fails). Each run stops at
//!       its first kill, trying first the trials that killed the mutant in the committed
//!       docs/conformance/mutants.json (CONFORMANCE_MUTANTS_STOP=never: the whole matrix). Writes
//!       DIR/mutants.md and DIR/mutants.json (default target/mutants; the committed
//!       docs/conformance/mutants.md comes from a GPU machine, .ci/gpu/mutants.sh).
//!   cargo xtask expectations prune EXPECT.toml REPORT.json... [--write]
//!       The entries of an expectation file (CONFORMANCE_EXPECT) that none of the reports needed
//!       (their trial passed, was not run, or the entry's selectors matched nowhere); `--write`
//!       removes them.

mod allowlist;
mod bench_diff;
mod common;
mod coverage;
mod deploy;
mod docs;
mod expectations;
mod fn_docs;
mod gen;
mod headers;
mod matrix;
mod pins;
mod table;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const USAGE: &str =
    "usage: cargo xtask regen [--check] [--cuda-include DIR]\n       cargo xtask ci\n       cargo xtask docs\n       \
                     cargo xtask bench-diff OLD.json NEW.json [--group G]\n       \
                     cargo xtask diff OLD.json NEW.json\n       cargo xtask matrix REPORT.json… [--out DIR]\n       cargo xtask mutants [--report DIR] [FILTER...]\n       \
                     cargo xtask expectations prune EXPECT.toml REPORT.json... [--write]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("regen") => parse_regen(&args[1..]).and_then(|(check, inc)| regen(&root(), check, inc.as_deref())),
        Some("ci") if args.len() == 1 => ci(&root()),
        Some("docs") if args.len() == 1 => coverage::check(&root()).map(|s| println!("xtask: {s}")),
        Some("diff") if args.len() == 3 => diff(&root(), &args[1], &args[2]),
        Some("bench-diff") if args.len() == 3 || (args.len() == 5 && args[3] == "--group") => {
            bench_diff::report(&args[1], &args[2], args.get(4).map(String::as_str)).map(|r| print!("{r}"))
        }
        Some("mutants") => mutants(&root(), &args[1..]),
        Some("expectations") => expectations::main(&args[1..]),
        Some("matrix") => matrix::matrix(&root(), &args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(format!("unknown or missing command\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn parse_regen(args: &[String]) -> Result<(bool, Option<PathBuf>), String> {
    let (mut check, mut inc) = (false, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--check" => check = true,
            "--cuda-include" => {
                let dir = it
                    .next()
                    .ok_or("--cuda-include needs a directory (the one holding cuda.h)")?;
                let dir = PathBuf::from(dir);
                if !dir.join("cuda.h").is_file() {
                    return Err(format!("--cuda-include {}: no cuda.h there", dir.display()));
                }
                inc = Some(dir);
            }
            other => return Err(format!("regen: unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok((check, inc))
}

fn root() -> PathBuf {
    // xtask/ sits in the workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn regen(root: &Path, check: bool, cuda_include: Option<&Path>) -> Result<(), String> {
    allowlist::check_sorted()?;
    let mut expected = Vec::new();
    let mut shared = Vec::new();
    for (pin, h) in headers::all(root, cuda_include)? {
        let g = gen::generate(root, pin, &h)?;
        expected.extend(g.files);
        shared.push((pin, h.cuda_version, g.shared));
    }
    expected.push(common::generate(&gen::bindgen_version(root)?, &shared)?);
    // Files under the generated folders that nothing generates any more are stale too.
    let mut stray = Vec::new();
    for dir in ["cuda-mempool-sys/src/generated", "cuda-mempool-sys/tests/abi"] {
        if let Ok(rd) = std::fs::read_dir(root.join(dir)) {
            for e in rd.flatten() {
                let rel = format!("{dir}/{}", e.file_name().to_string_lossy());
                if !expected.iter().any(|(p, _)| *p == rel) {
                    stray.push(rel);
                }
            }
        }
    }
    let mut stale = Vec::new();
    for (rel, text) in &expected {
        let current = std::fs::read_to_string(root.join(rel)).ok();
        if current.as_deref() == Some(text.as_str()) {
            continue;
        }
        if check {
            stale.push(summary(rel, current.as_deref().unwrap_or(""), text));
        } else {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).map_err(|e| e.to_string())?;
            std::fs::write(&path, text).map_err(|e| format!("cannot write {rel}: {e}"))?;
            println!("xtask: wrote {rel}");
        }
    }
    if check {
        stale.extend(stray.iter().map(|s| format!("{s}: generated by nothing (stray file)")));
        if !stale.is_empty() {
            return Err(format!(
                "generated files are stale:\n{}\nrun `cargo xtask regen` and commit the result",
                stale.join("\n")
            ));
        }
        println!(
            "xtask: regen --check: {} generated files are up to date",
            expected.len()
        );
    } else {
        for s in &stray {
            std::fs::remove_file(root.join(s)).map_err(|e| e.to_string())?;
            println!("xtask: removed stray {s}");
        }
        println!("xtask: regen: {} files checked", expected.len());
    }
    Ok(())
}

/// Counts and the first lines of a unified diff, enough to see what moved.
fn summary(rel: &str, old: &str, new: &str) -> String {
    if old.is_empty() {
        return format!("  {rel}: missing");
    }
    let diff = similar::TextDiff::from_lines(old, new);
    let (mut add, mut del) = (0, 0);
    for ch in diff.iter_all_changes() {
        match ch.tag() {
            similar::ChangeTag::Insert => add += 1,
            similar::ChangeTag::Delete => del += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    let udiff = diff
        .unified_diff()
        .context_radius(1)
        .header(&format!("{rel} (committed)"), "(generated)")
        .to_string();
    let head: Vec<&str> = udiff.lines().take(24).collect();
    format!(
        "  {rel}: {del} line(s) only in the committed file, {add} only in the generated one\n{}",
        head.join("\n")
    )
}

fn run(root: &Path, what: &str, args: &[&str], envs: &[(&str, &str)]) -> Result<(), String> {
    run_in(root, what, &cargo(), args, envs)
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// Runs `program args` in `dir`; fails with `what` when it does.
fn run_in(dir: &Path, what: &str, program: &str, args: &[&str], envs: &[(&str, &str)]) -> Result<(), String> {
    let shown = if program == cargo() { "cargo" } else { program };
    println!("xtask ci: {shown} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(dir)
        .status()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{what} failed ({status})"))
    }
}

/// What must be installed before the checks can mean anything; says how to get it.
fn preflight() -> Result<(), String> {
    let ldconfig = Command::new("/sbin/ldconfig")
        .arg("-p")
        .output()
        .or_else(|_| Command::new("ldconfig").arg("-p").output());
    let libs = ldconfig
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let mut missing = Vec::new();
    let has_cuda = libs.contains("libcuda.so ")
        || std::env::var_os("CUDA_MEMPOOL_SYS_LIB_DIR").is_some()
        || std::env::var_os("CUDA_PATH").is_some();
    if !has_cuda {
        missing.push("libcuda.so (Debian: the `libcuda1` package from the non-free component)");
    }
    if !libs.contains("libclang") && std::env::var_os("LIBCLANG_PATH").is_none() {
        missing.push("libclang (Debian: `libclang-dev`), needed by bindgen for `regen --check`");
    }
    if !runs(MINGW_GCC, &["--version"]) {
        missing.push("x86_64-w64-mingw32-gcc (Debian: `gcc-mingw-w64-x86-64`), the linker for x86_64-pc-windows-gnu");
    }
    if wine().is_none() {
        missing.push("wine (Debian: `wine64`), to run the Windows build");
    }
    if !runs("chromium", &["--version"]) && !runs("chromium-browser", &["--version"]) {
        missing.push("chromium (Debian: `chromium`), to open the matrix page headless");
    }
    if missing.is_empty() {
        return Ok(());
    }
    Err(format!(
        "missing on this machine:\n  - {}\nrun `sudo bash .ci/install-deps` (Debian) or install them, then run `cargo xtask ci` again",
        missing.join("\n  - ")
    ))
}

/// The test workspace that proves the major features additive (and builds with the MSRV).
const FEATURE_UNION: &str = "cuda-mempool-sys/tests/feature-union";

fn ci(root: &Path) -> Result<(), String> {
    preflight()?;
    let require = [
        ("CUDA_MEMPOOL_REQUIRE_ABI", "1"),
        ("CUDA_MEMPOOL_SYS_REQUIRE_LIBCUDA", "1"),
    ];
    run(root, "formatting", &["fmt", "--all", "--check"], &[])?;
    run(
        root,
        "formatting (feature-union workspace)",
        &[
            "fmt",
            "--all",
            "--check",
            "--manifest-path",
            &format!("{FEATURE_UNION}/Cargo.toml"),
        ],
        &[],
    )?;
    run(
        root,
        "clippy",
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
        &[],
    )?;
    run(
        root,
        "clippy (every feature of cuda-mempool-sys)",
        &[
            "clippy",
            "-p",
            "cuda-mempool-sys",
            "--all-targets",
            "--all-features",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
        &[],
    )?;
    for features in ["cuda-11", "cuda-13", "cuda-12,dynamic-loading", "cuda-13,std"] {
        run(
            root,
            features,
            &[
                "check",
                "-p",
                "cuda-mempool-sys",
                "--locked",
                "--no-default-features",
                "--features",
                features,
            ],
            &[],
        )?;
    }
    for features in [
        &["--features", "cuda-11,cuda-12,cuda-13,std"][..],
        &["--all-features"][..],
    ] {
        let mut args = vec!["doc", "-p", "cuda-mempool-sys", "--no-deps", "--locked"];
        args.extend(features);
        run(
            root,
            "rustdoc (warnings denied)",
            &args,
            &[("RUSTDOCFLAGS", "-D warnings")],
        )?;
    }
    println!("xtask ci: {}", coverage::check(root)?);
    // The fleet files (deploy/) against GitHub's workflow schema and Kubernetes' schemas.
    deploy::check(root)?;
    windows(root)?;
    println!("xtask ci: regen --check");
    regen(root, true, None)?;
    // The ABI test must run here: the headers are present (regen --check fetched them). Every major
    // linked, then every major through the tables only (dynamic-loading).
    for features in [&["--features", "cuda-11,cuda-12,cuda-13"][..], &["--all-features"][..]] {
        let mut args = vec!["test", "-p", "cuda-mempool-sys", "--locked"];
        args.extend(features);
        run(root, "cuda-mempool-sys tests", &args, &require)?;
    }
    run(root, "tests", &["test", "--workspace", "--locked"], &require)?;
    // The same suite under nextest (one process per trial), with its JUnit (`.config/nextest.toml`).
    nextest(root)?;
    // The GPU-CI job's own script, end to end on this machine (no GPU: it requires nothing).
    gpu_job(root)?;
    // The committed H100 reports as one page, drawn by headless Chromium, its counts checked.
    matrix::ci(root)?;
    feature_union(root)?;
    package(root)?;
    msrv(root)?;
    println!("xtask ci: all checks passed");
    Ok(())
}

/// Whether `program args` runs and succeeds.
fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

const WINDOWS_MSVC: &str = "x86_64-pc-windows-msvc";
const WINDOWS_GNU: &str = "x86_64-pc-windows-gnu";
/// The C compiler and linker for x86_64-pc-windows-gnu (Debian's gcc-mingw-w64-x86-64).
const MINGW_GCC: &str = "x86_64-w64-mingw32-gcc";

/// Wine's 64-bit loader: `wine64` on PATH, where Debian 12's `wine64` package keeps it, or `wine`.
fn wine() -> Option<&'static str> {
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
fn windows(root: &Path) -> Result<(), String> {
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

/// `cargo nextest run -p conformance --profile ci`: every trial in its own process; JUnit in
/// target/nextest/ci/junit.xml.
fn nextest(root: &Path) -> Result<(), String> {
    let has = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has {
        return Err(
            "cargo-nextest is not installed: `cargo install cargo-nextest --locked`, then run \
                    `cargo xtask ci` again"
                .into(),
        );
    }
    run(
        root,
        "nextest",
        &["nextest", "run", "-p", "conformance", "--profile", "ci", "--locked"],
        &[],
    )
}

/// `.ci/gpu-job` as a GPU runner would run it, here with no capability required.
fn gpu_job(root: &Path) -> Result<(), String> {
    println!("xtask ci: .ci/gpu-job (no GPU required here)");
    let out = root.join("target").join("gpu-job-check");
    let status = Command::new("bash")
        .arg(root.join(".ci").join("gpu-job"))
        .env("GPU_JOB_OUT", &out)
        .env("GPU_JOB_REQUIRE", "")
        .env(
            "GPU_JOB_BASELINE",
            root.join("docs").join("conformance").join("no-gpu-r535.json"),
        )
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot run .ci/gpu-job: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            ".ci/gpu-job failed ({status}); its outputs are in {}",
            out.display()
        ))
    }
}

/// The suite's own mode `mode` (`--diff`, `--matrix`) with `args`, run from `root` through cargo
/// (the suite's test binary runs from the crate's folder: every path in `args` absolute); its exit
/// status.
pub fn suite_mode(root: &Path, mode: &str, args: &[std::ffi::OsString]) -> Result<std::process::ExitStatus, String> {
    Command::new(cargo())
        .args(["test", "-q", "-p", "conformance", "--test", "conformance", "--", mode])
        .args(args)
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))
}

/// `cargo xtask diff OLD NEW`: the suite's `--diff` (see docs/ci.md).
fn diff(root: &Path, old: &str, new: &str) -> Result<(), String> {
    let abs = |p: &str| {
        std::fs::canonicalize(p)
            .map(Into::into)
            .map_err(|e| format!("{p}: {e}"))
    };
    let status = suite_mode(root, "--diff", &[abs(old)?, abs(new)?])?;
    match status.code() {
        Some(0) => Ok(()),
        Some(1) => Err("the new report regressed (see the table above)".into()),
        _ => Err(format!("the diff could not be made ({status})")),
    }
}

fn mutants(root: &Path, args: &[String]) -> Result<(), String> {
    let (report, filters) = match args {
        [flag, dir, rest @ ..] if flag == "--report" => (PathBuf::from(dir), rest),
        [flag] if flag == "--report" => return Err(format!("--report needs a directory\n{USAGE}")),
        rest => (root.join("target").join("mutants"), rest),
    };
    let report = if report.is_absolute() {
        report
    } else {
        std::env::current_dir().map_err(|e| e.to_string())?.join(report)
    };
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args(["test", "-p", "conformance", "--test", "mutants", "--"])
        .args(filters)
        .env("CONFORMANCE_MUTANTS_REPORT", &report)
        .current_dir(root);
    // The last committed run's killers go first (the order changes no verdict, only its speed).
    let hint = root.join("docs/conformance/mutants.json");
    if std::env::var_os("CONFORMANCE_MUTANTS_HINT").is_none() && hint.is_file() {
        cmd.env("CONFORMANCE_MUTANTS_HINT", hint);
    }
    let status = cmd.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    println!("xtask mutants: report in {}", report.join("mutants.md").display());
    if status.success() {
        Ok(())
    } else {
        Err("a mutant survived or a run failed (see above)".into())
    }
}

/// Two dependents, one on the crate root (CUDA 12) and one on `cuda13`, in one build; and one
/// program with `dynamic-loading`. Both run: against CI's R535 driver (CUDA 12.2) they print the
/// CUDA 13 selectors as missing.
fn feature_union(root: &Path) -> Result<(), String> {
    let dir = root.join(FEATURE_UNION);
    let target = root.join("target/feature-union");
    let target = target.to_str().ok_or("non-UTF-8 target path")?;
    for bin in ["app", "loads", "mixed"] {
        run_in(
            &dir,
            "feature-union workspace",
            &cargo(),
            &["run", "--locked", "--target-dir", target, "-p", bin],
            &[],
        )?;
    }
    Ok(())
}

/// `cargo publish --dry-run` (what crates.io would accept: manifest, included files, a build of
/// the packaged crate), then `cargo package`, unpacked under target/package-check/, and the
/// crate's own tests and doctests run there, by the lockfile in the .crate: what a user of the
/// published crate builds.
fn package(root: &Path) -> Result<(), String> {
    run(
        root,
        "cargo publish --dry-run",
        &[
            "publish",
            "--dry-run",
            "-p",
            "cuda-mempool-sys",
            "--locked",
            "--allow-dirty",
        ],
        &[],
    )?;
    run(
        root,
        "cargo package",
        &[
            "package",
            "-p",
            "cuda-mempool-sys",
            "--locked",
            "--no-verify",
            "--allow-dirty",
        ],
        &[],
    )?;
    let manifest = std::fs::read_to_string(root.join("cuda-mempool-sys/Cargo.toml")).map_err(|e| e.to_string())?;
    let version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .map(|v| v.trim_end_matches('"'))
        .ok_or("cuda-mempool-sys/Cargo.toml: no version")?;
    let name = format!("cuda-mempool-sys-{version}");
    let check = root.join("target/package-check");
    let unpacked = check.join(&name);
    let _ = std::fs::remove_dir_all(&unpacked);
    std::fs::create_dir_all(&check).map_err(|e| e.to_string())?;
    let crate_file = root.join(format!("target/package/{name}.crate"));
    run_in(
        &check,
        "unpacking the .crate",
        "tar",
        &["-xzf", crate_file.to_str().ok_or("non-UTF-8 path")?],
        &[],
    )?;
    // A fresh target every time: the .crate's files carry cargo's fixed old mtime, so an earlier
    // check's artifacts would look newer than the sources and be reused (a second `cargo xtask ci`
    // after a change to the crate tested the previous build's library).
    let target = check.join("target");
    let _ = std::fs::remove_dir_all(&target);
    let target = target.to_str().ok_or("non-UTF-8 target path")?;
    let envs = [("CARGO_TARGET_DIR", target), ("CUDA_MEMPOOL_SYS_REQUIRE_LIBCUDA", "1")];
    for features in [&[][..], &["--all-features"][..]] {
        let mut args = vec!["test", "--locked"];
        args.extend(features);
        run_in(&unpacked, "the packaged crate's tests", &cargo(), &args, &envs)?;
    }
    Ok(())
}

/// The declared `rust-version` builds (and runs) the feature-union programs: cuda-11/12/13, linked
/// and `dynamic-loading`. The toolchain is installed with rustup if missing; Cargo of that age
/// cannot read today's index, so it builds offline from sources vendored by today's Cargo.
fn msrv(root: &Path) -> Result<(), String> {
    let manifest = std::fs::read_to_string(root.join("cuda-mempool-sys/Cargo.toml")).map_err(|e| e.to_string())?;
    let msrv = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = \""))
        .map(|v| v.trim_end_matches('"').to_string())
        .ok_or("cuda-mempool-sys/Cargo.toml: no rust-version")?;
    if msrv != format!("1.{}", pins::RUST_TARGET_MINOR) {
        return Err(format!(
            "rust-version {msrv} differs from the generator's rust target 1.{} (xtask/src/pins.rs)",
            pins::RUST_TARGET_MINOR
        ));
    }
    run_in(
        root,
        "installing the MSRV toolchain",
        "rustup",
        &[
            "toolchain",
            "install",
            &msrv,
            "--profile",
            "minimal",
            "--no-self-update",
        ],
        &[],
    )?;
    let dir = root.join(FEATURE_UNION);
    let vendor = root.join("target/feature-union/vendor");
    let vendor = vendor.to_str().ok_or("non-UTF-8 path")?;
    run_in(
        &dir,
        "cargo vendor",
        &cargo(),
        &["vendor", "--locked", "--quiet", vendor],
        &[],
    )?;
    let target = root.join("target/feature-union-msrv");
    let target = target.to_str().ok_or("non-UTF-8 path")?;
    let replace = "source.crates-io.replace-with=\"vendored-sources\"".to_string();
    let directory = format!("source.vendored-sources.directory=\"{vendor}\"");
    for bin in ["app", "loads", "mixed"] {
        run_in(
            &dir,
            &format!("MSRV {msrv} build"),
            "rustup",
            &[
                "run",
                &msrv,
                "cargo",
                "run",
                "--offline",
                "--locked",
                "--config",
                &replace,
                "--config",
                &directory,
                "--target-dir",
                target,
                "-p",
                bin,
            ],
            &[],
        )?;
    }
    Ok(())
}
