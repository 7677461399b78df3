//! Conformance suite (see tests/conformance.rs).
