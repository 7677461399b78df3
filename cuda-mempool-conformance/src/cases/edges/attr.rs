//! 828 cuMemPoolGetAttribute, 832 cuMemPoolSetAttribute, 833 cuMemPoolTrimTo: the attribute, the
//! values written, and minBytesToKeep.

use super::model::*;
use crate::cases::prelude::*;
use crate::driver::cu::CUmemPool_attribute_enum as A;

/// Attribute values no header knows: 0, 16 to 64, RELEASE_THRESHOLD (4) with each higher bit (a
/// library that keeps only some bits of the attribute finds a known one), 0x1000, INT_MAX, UINT_MAX.
/// CUDA 13.x's 9 to 15 are left out: a driver older than the attribute refuses it
/// (`attr.rs`'s cuda13 trials), a newer one answers.
fn attribute_rows(_: &Env) -> Vec<Row> {
    let mut v = named(&[(0, "0")], REFUSED);
    v.extend((16..=64).map(|a| Row {
        value: a,
        label: format!("{a}"),
        want: REFUSED,
        watch: Watch::Off,
    }));
    v.extend(each_bit(4, "RELEASE_THRESHOLD", 6, 31, REFUSED));
    v.extend(named(
        &[(0x1000, "0x1000"), (0x7fff_ffff, "INT_MAX"), (0xffff_ffff, "UINT_MAX")],
        REFUSED,
    ));
    v
}
fn get_attribute(e: &Env, v: u64) -> R<Answer> {
    let pool = Pool::on_device(e.dev)?;
    let mut val = [0u64; 2];
    Answer::code(unsafe { cuMemPoolGetAttribute(pool.0, A(v as u32), val.as_mut_ptr().cast()) })
}
fn set_attribute(e: &Env, v: u64) -> R<Answer> {
    let pool = Pool::on_device(e.dev)?;
    let mut val = [0u64; 2];
    Answer::code(unsafe { cuMemPoolSetAttribute(pool.0, A(v as u32), val.as_mut_ptr().cast()) })
}

/// Any 64-bit threshold is valid; each must read back exactly.
fn threshold_rows(_: &Env) -> Vec<Row> {
    named(
        &[
            (0, "0"),
            (1, "1"),
            (1 << 32, "1 << 32"),
            (1 << 60, "1 << 60"),
            (i64::MAX as u64, "INT64_MAX"),
            (u64::MAX - 1, "UINT64_MAX - 1"),
            (u64::MAX, "UINT64_MAX"),
        ],
        ACCEPTED,
    )
}
fn set_threshold(e: &Env, v: u64) -> R<Answer> {
    let pool = Pool::on_device(e.dev)?;
    let threshold = A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD;
    let mut val = v;
    let code = unsafe { cuMemPoolSetAttribute(pool.0, threshold, (&mut val as *mut u64).cast()) };
    if code != SUCCESS {
        return Answer::code(code);
    }
    let got = get_u64(pool.0, threshold)?;
    let effect = if got == v {
        Ok(())
    } else {
        Err(format!("the threshold reads back {got:#x}").into())
    };
    Ok(Answer { code, effect })
}

/// A high-water mark takes 0 (a reset) and nothing else: each nonzero value is refused, those with
/// a zero low half among them.
fn mark_rows(_: &Env) -> Vec<Row> {
    named(
        &[
            (1, "1"),
            (1 << 32, "1 << 32"),
            (1 << 60, "1 << 60"),
            (u64::MAX, "UINT64_MAX"),
        ],
        REFUSED,
    )
}
fn set_mark(e: &Env, a: A, v: u64) -> R<Answer> {
    let pool = Pool::on_device(e.dev)?;
    let mut val = v;
    Answer::code(unsafe { cuMemPoolSetAttribute(pool.0, a, (&mut val as *mut u64).cast()) })
}
fn set_reserved_high(e: &Env, v: u64) -> R<Answer> {
    set_mark(e, A::CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, v)
}
fn set_used_high(e: &Env, v: u64) -> R<Answer> {
    set_mark(e, A::CU_MEMPOOL_ATTR_USED_MEM_HIGH, v)
}

/// minBytesToKeep beyond what the pool holds: the documentation releases nothing then (it trims
/// "until the pool contains fewer than minBytesToKeep reserved bytes", which it already does).
/// R580 releases everything for SIZE_MAX (128 MiB reserved → 0, recorded in
/// docs/conformance/mutants.md), a driver behaviour its row asserts.
fn trim_rows(_: &Env) -> Vec<Row> {
    named(
        &[
            (1 << 60, "1 << 60"),
            (1 << 63, "1 << 63"),
            (u64::MAX, "SIZE_MAX (R580: releases everything)"),
        ],
        ACCEPTED,
    )
}
fn trim(e: &Env, v: u64) -> R<Answer> {
    let reserved = A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT;
    let pool = Pool::on_device(e.dev)?;
    set_u64(pool.0, A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, u64::MAX)?;
    let s = Stream::new()?;
    let a = alloc_from(pool.0, 32 * MIB, s.0)?;
    free_async(a, s.0)?;
    s.sync()?;
    let before = get_u64(pool.0, reserved)?;
    ensure!(
        before >= 32 * MIB as u64,
        "only {before} bytes reserved before trimming"
    );
    let code = unsafe { cuMemPoolTrimTo(pool.0, v as usize) };
    let after = get_u64(pool.0, reserved)?;
    let effect = match v {
        u64::MAX if after != 0 => {
            Err(format!("reserved {before} before, {after} after; R580 released everything").into())
        }
        u64::MAX => Ok(()),
        _ if after != before => Err(format!(
            "reserved {before} before, {after} after: a trim to more than the pool holds released memory"
        )
        .into()),
        _ => Ok(()),
    };
    Ok(Answer { code, effect })
}

pub const EDGES: &[Edge] = &[
    // Kills 828-attribute-low-byte-only (and 828-unknown-attribute-zero).
    Edge {
        api: 828,
        arg: "attribute",
        needs: &[],
        sharing: Sharing::Shared,
        rows: attribute_rows,
        call: get_attribute,
    },
    // Kills 832-attribute-low-byte-only (and 832-unknown-attribute-accepted).
    Edge {
        api: 832,
        arg: "attribute",
        needs: &[],
        sharing: Sharing::Shared,
        rows: attribute_rows,
        call: set_attribute,
    },
    // Kills 832-release-threshold-as-u32.
    Edge {
        api: 832,
        arg: "release_threshold",
        needs: &[],
        sharing: Sharing::Shared,
        rows: threshold_rows,
        call: set_threshold,
    },
    // Kills 832-high-mark-value-as-u32 (and 832-nonzero-high-accepted).
    Edge {
        api: 832,
        arg: "reserved_mem_high_value",
        needs: &[],
        sharing: Sharing::Shared,
        rows: mark_rows,
        call: set_reserved_high,
    },
    // Kills 832-high-mark-value-as-u32 (and 832-nonzero-high-accepted).
    Edge {
        api: 832,
        arg: "used_mem_high_value",
        needs: &[],
        sharing: Sharing::Shared,
        rows: mark_rows,
        call: set_used_high,
    },
    // Kills 833-huge-min-bytes-trims-all (SIZE_MAX's row also 833-trims-nothing).
    Edge {
        api: 833,
        arg: "min_bytes_to_keep",
        needs: &[],
        sharing: Sharing::Alone,
        rows: trim_rows,
        call: trim,
    },
];
