//! Compiles the C half of the FFI-overhead benchmark (benches/ffi_loop.c) with `cc`.
fn main() {
    println!("cargo:rerun-if-changed=benches/ffi_loop.c");
    cc::Build::new()
        .file("benches/ffi_loop.c")
        .warnings(true)
        .compile("cump_ffi_loop");
}
