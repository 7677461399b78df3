//! Compiles the C half of the bench (benches/ffi_loop_linked.c), whose references to the driver
//! resolve against the libcuda that cuda-mempool-sys links, and tells the bench whether the
//! bindings really are linked: a build that also builds the conformance suite (`--workspace`) unifies
//! cuda-mempool-sys's features, `dynamic-loading` included, and then the Rust half goes through the
//! entry-point table (FFI_BENCH_DYNAMIC=1).
fn main() {
    println!("cargo:rerun-if-changed=benches/ffi_loop_linked.c");
    let dynamic = std::env::var("DEP_CUDA_MEMPOOL_SYS_0_1_DYNAMIC_LOADING").unwrap_or_default();
    println!("cargo:rustc-env=FFI_BENCH_DYNAMIC={dynamic}");
    if dynamic == "1" {
        // Nothing links libcuda then; the C half still needs its two symbols to link.
        println!("cargo:rustc-link-lib=dylib=cuda");
    }
    cc::Build::new()
        .file("benches/ffi_loop_linked.c")
        .opt_level(2)
        .warnings(true)
        .compile("ffi_bench_linked_loop");
}
