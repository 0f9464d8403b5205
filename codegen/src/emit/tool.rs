//! A local tool's module: its types and its `Tool` impl.

use crate::model::{Language, ToolSpec};
use crate::rustdoc::{code, text};
use crate::{prompt, schema};

use super::layout::{W, include_bytes, lit};
use super::types::{VALUE_DERIVES, params_and_types};
use super::{Generator, version_check};

pub(super) fn tool_module(w: &mut W, tool: &ToolSpec, generator: Generator, check_version: bool) {
    let rt = w.rt.clone();
    let name = code(&tool.name);
    w.doc(&format!(
        "{name} (v{}, {}): {}",
        tool.version,
        tool.language,
        text(tool.description.trim())
    ));
    // Descriptions are the tool author's Markdown, not rustdoc's: `[text](url)` or a bare
    // URL must not fail a user's `cargo doc` under `#![deny(warnings)]`.
    w.line(
        "#[allow(rustdoc::broken_intra_doc_links, rustdoc::bare_urls, rustdoc::invalid_html_tags)]",
    );
    w.open(&format!("pub mod {} {{", tool.rust_module));
    if check_version {
        version_check(w);
    }
    if generator == Generator::Macro {
        let mut files = vec![tool.file.display().to_string()];
        if let Some(e) = tool.entry_path() {
            files.push(e.display().to_string());
        }
        for f in files {
            include_bytes(w, &f);
        }
    }
    params_and_types(w, tool);
    w.doc(&format!(
        "The {name} tool: pass it to `Runtime::call_typed`."
    ));
    let mut derives = VALUE_DERIVES.to_vec();
    derives.insert(3, "::core::default::Default");
    w.derive(&derives);
    w.line("pub struct Tool;");
    w.open(&format!("impl {rt}::__private::Tool for Tool {{"));
    w.line("type Params = Params;");
    if tool.outputs.is_empty() {
        w.line(&format!(
            "type Output = {rt}::__private::serde_json::Value;"
        ));
    } else {
        w.line("type Output = Output;");
    }
    w.line(&format!("const NAME: &'static str = {};", lit(&tool.name)));
    w.line(&format!(
        "const LABEL: &'static str = {};",
        lit(&tool.label)
    ));
    w.line(&format!(
        "const DESCRIPTION: &'static str = {};",
        lit(&tool.description)
    ));
    w.line(&format!("const VERSION: u64 = {};", tool.version));
    let language = match tool.language {
        Language::TypeScript => "TypeScript",
        Language::Python => "Python",
        Language::Bash => "Bash",
    };
    w.line(&format!(
        "const LANGUAGE: {rt}::__private::Language = {rt}::__private::Language::{language};"
    ));
    let schema_text = schema::portable_json(tool);
    w.line(&format!(
        "const SCHEMA: &'static str = {};",
        lit(&schema_text)
    ));
    w.line(&format!(
        "const PROMPT: &'static str = {};",
        lit(&prompt::tool_line(tool))
    ));
    w.line(&format!(
        "const DOCS: &'static str = {};",
        lit(&tool.body.markdown)
    ));
    w.line(&format!("const FINGERPRINT: u64 = {};", tool.fingerprint()));
    w.close("}");
    w.close("}");
}
