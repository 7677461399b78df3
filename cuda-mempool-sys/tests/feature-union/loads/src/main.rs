//! `dynamic-loading`: nothing linked, the tables are the API. Starts whether or not a driver is
//! installed; says what it could not load.
use cuda_mempool_sys::{cuda11, cuda12, cuda13};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Nothing linked: the process's default namespace has no driver symbol.
    assert_eq!(
        cuda12::EntryPoints::from_default_namespace().missing().count(),
        cuda12::EntryPoints::LEN
    );
    let t12 = match cuda12::EntryPoints::load() {
        Ok(t) => t,
        Err(e) => {
            println!("feature-union loads: no driver: {e}");
            return Ok(());
        }
    };
    let mut version = 0;
    // SAFETY: valid out-pointer.
    let r = unsafe { t12.cuDriverGetVersion(&mut version) };
    assert_eq!(r, cuda12::CUresult::CUDA_SUCCESS);
    // SAFETY: flags 0.
    println!("feature-union loads: driver {version}; cuInit: {:?}", unsafe {
        t12.cuInit(0)
    });
    let t11 = cuda11::EntryPoints::load()?;
    assert_eq!(t11.missing().count(), 0, "a CUDA 12+ driver has every CUDA 11 entry");
    let t13 = cuda13::EntryPoints::load()?;
    let missing: Vec<&str> = t13.missing_symbols().collect();
    println!("feature-union loads: cuda13 entries missing: {missing:?}");
    Ok(())
}
