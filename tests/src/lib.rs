//! Generated bindings compiled as a user's crate would compile them: warnings are errors.
#![deny(warnings)]

/// The shipped `tools/` folder, through build.rs (`toolbind_codegen::Config`).
pub mod shipped {
    toolbind::include_tools!();

    /// The system prompt build.rs wrote beside the bindings.
    pub const PROMPT: &str = include_str!(concat!(env!("OUT_DIR"), "/toolbind/prompt.md"));
}

/// The codegen golden file, compiled: a golden that does not compile fails here.
pub mod golden {
    include!("../../codegen/tests/golden/tools.rs");
}

pub mod fuzzing;
