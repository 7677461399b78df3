//! The usage text (`cargo xtask help`; after an unknown command or argument), one for every
//! command: `main.rs` and the tasks that name it in their errors read it here.

/// The usage text (`cargo xtask help`; after an unknown command or argument).
pub const USAGE: &str =
    "usage: cargo xtask regen [--check] [--cuda-include DIR]\n       cargo xtask ci\n       cargo xtask docs\n       \
                     cargo xtask bench-diff OLD.json NEW.json [--group G]\n       \
                     cargo xtask diff OLD.json NEW.json\n       cargo xtask matrix REPORT.json… [--out DIR] [--expect FILE]\n       cargo xtask mutants [--report DIR] [FILTER...]\n       \
                     cargo xtask expectations prune EXPECT.toml REPORT.json... [--write]";
