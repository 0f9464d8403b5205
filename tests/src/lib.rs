//! Generated bindings compiled as a user's crate would compile them: warnings are errors.
#![deny(warnings)]

/// The shipped `tools/` folder, through build.rs (`toolbind_codegen::Config`).
pub mod shipped {
    toolbind::include_tools!();

    /// The system prompt build.rs wrote beside the bindings.
    pub const PROMPT: &str = include_str!(concat!(env!("OUT_DIR"), "/toolbind/prompt.md"));
}

/// The compatibility corpus (`compat/`: files the platform loads, which toolbind loads
/// with warnings), through build.rs. Its fallback identifiers are used below, so a change
/// to one fails to compile here.
pub mod compat {
    toolbind::include_tools!("compat.rs");

    /// Compile-time pins of the fallback identifiers (`tests/golden/compat.rs` pins the rest).
    #[allow(dead_code)]
    fn pins() {
        let _ = calculator::Op::Plus;
        let _ = calculator::Op::Minus;
        let _ = calculator::Op::Star;
        let _ = calculator::Op::Slash;
        let _ = calculator::Unit::Mb2;
        let _ = calculator::Mime::ImagePng2;
        let _ = aliases::Params {
            max_results: None,
            max_results_2: None,
            self_: Some(aliases::Self_::A),
            self_2: Some(aliases::Self2::C),
        };
        let _ = lossless_defaults::Level::High;
        let _: Option<toolbind::Secret<String>> =
            None::<lossless_defaults::Params>.and_then(|p| p.token);
        let _ = ToolCall::WebSearch(web_search::Params { q: String::new() });
        let _ = ToolCall::WebSearch2(web_search_2::Params { q: String::new() });
        let _ = ToolCall::V3dRender(_3d_render::Params { q: String::new() });
        let _ = ToolCall::Std(std_tool::Params {});
        let _ = ToolCall::Core(core_tool::Params {});
        let _ = ToolCall::Toolbind(toolbind_tool::Params {});
        let _ = ToolCall::Self_(self_::Params {});
        let _ = ToolCall::Crate(crate_::Params {});
        let _ = ToolCall::Gmail(gmail::Params { q: String::new() });
    }
}

/// The shipped tools' bindings generated with `Config::runtime_path`: they name the runtime
/// only through `crate::relocated::runtime`, so `toolbind` could be a renamed dependency.
pub mod relocated {
    /// The runtime, by another path.
    pub mod runtime {
        pub use toolbind::*;
    }
    /// The bindings.
    pub mod bindings {
        include!(concat!(env!("OUT_DIR"), "/toolbind/relocated.rs"));
    }
}

/// The same corpus through the proc-macro: it accepts what build.rs accepts.
pub mod compat_macro {
    toolbind::tools!("../compat");
}

/// Bindings of hostile texts (`hostile/`: a TOOL.md and an MCP snapshot whose descriptions,
/// names, enum values and defaults hold fenced, indented and HTML-wrapped code blocks, raw
/// HTML, links and bidi controls), through build.rs. Each code block is a
/// `compile_error!`: were one to become a doctest of this crate, `cargo test --workspace`
/// would fail; a bidi control reaching a comment would fail the build.
pub mod hostile {
    toolbind::include_tools!("hostile.rs");

    /// Compile-time pins: names rustc reads as one identifier are two fields, and
    /// defaults no generated type could hold were left to the server.
    #[allow(dead_code)]
    fn pins(p: injected::inject_ed::Params) {
        let _: Option<String> = p.cafe;
        let _: Option<String> = p.cafe_2;
        let _: Option<String> = p.q_u0430;
        let _: Option<i64> = p.big;
        let _: Option<i64> = p.ranged;
    }
}

/// MCP snapshots alone (no tools folder), through build.rs: with `shipped` (local tools
/// only) and `hostile` (both), the three shapes of bindings compile under this crate's
/// `#![deny(warnings)]`, the empty local `ToolCall` included.
pub mod mcp_only {
    toolbind::include_tools!("mcp_only.rs");

    /// Compile-time pins: the local `ToolCall` is empty, the servers' are not.
    #[allow(dead_code)]
    fn pins(server: memory::ToolCall) -> &'static str {
        let _: &[&str] = ToolCall::NAMES;
        let _ = filesystem::ToolCall::NAMES;
        server.name()
    }

    #[allow(dead_code)]
    fn no_local_tools(local: ToolCall) -> &'static str {
        match local {}
    }
}

/// What `toolbind::tools!` expands to after its errors: the `ToolCall` over no tools.
pub mod stand_in {
    toolbind::include_tools!("stand_in.rs");
}

/// The same hostile texts through the proc-macro.
pub mod hostile_macro {
    toolbind::tools!("../hostile/tools", "../hostile/injected.json");
}

/// The codegen golden file, compiled: a golden that does not compile fails here.
pub mod golden {
    include!("../../codegen/tests/golden/tools.rs");
}

pub mod fuzzing;

/// The README's Rust examples, compiled by `cargo test --doc -p toolbind-tests` (and run
/// where they need no network or files): a README example that stops compiling fails the
/// test suite.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The Rust examples of the references in `docs/`, compiled the same way.
#[cfg(doctest)]
#[doc = include_str!("../../docs/runtime.md")]
pub struct RuntimeDocDoctests;

/// See [`RuntimeDocDoctests`].
#[cfg(doctest)]
#[doc = include_str!("../../docs/providers.md")]
pub struct ProvidersDocDoctests;

/// See [`RuntimeDocDoctests`].
#[cfg(doctest)]
#[doc = include_str!("../../docs/sandbox.md")]
pub struct SandboxDocDoctests;

/// See [`RuntimeDocDoctests`].
#[cfg(doctest)]
#[doc = include_str!("../../docs/mcp.md")]
pub struct McpDocDoctests;

/// See [`RuntimeDocDoctests`].
#[cfg(doctest)]
#[doc = include_str!("../../docs/tool-format.md")]
pub struct ToolFormatDocDoctests;

/// See [`RuntimeDocDoctests`]; its blocks are shell, Python and JavaScript, which
/// `cli/tests/http_docs.rs` runs.
#[cfg(doctest)]
#[doc = include_str!("../../docs/http.md")]
pub struct HttpDocDoctests;
