//! The top-level keys of a TOOL.md and the tool they make: [`tool_from_document`] reads
//! each key, then checks what only the keys together decide (required keys, the entry
//! file, what a language allows).

use super::*;

/// Builds a [`ToolSpec`] from a parsed document, checking every rule of the format.
/// `dir` is the tool folder; the entry file is looked up there when `opts.require_entry`.
///
/// A dispatcher: each key is read on its own ([`Keys::read`]), then what only the keys
/// together decide is checked, one rule family per step.
pub fn tool_from_document(
    file: &Path,
    dir: &Path,
    doc: &Document,
    opts: &Options,
) -> Result<ToolSpec, Vec<Diagnostic>> {
    let mut cx = Ctx {
        file,
        text: doc.text.clone(),
        diags: Vec::new(),
    };
    let fence = Pos::new(1, 1);
    let Some(root) = &doc.frontmatter else {
        cx.err_at(fence, 3, "frontmatter is empty").hint =
            Some("add at least `name:` and `description:` between the `---` lines".into());
        return Err(cx.diags);
    };
    let Some(entries) = map_entries(root) else {
        let kind = root.kind();
        cx.err(
            root,
            format!("frontmatter must be a mapping of keys, found {kind}"),
        )
        .hint = Some("write `key: value` lines such as `name: my_tool`".into());
        return Err(cx.diags);
    };
    let mut keys = Keys::default();
    let schema_is_inputs = one_place_for_inputs(entries);
    for (k, v) in entries {
        keys.read(&mut cx, root, k, v, opts, schema_is_inputs);
    }
    required_keys(&mut cx, &keys, entries);
    let (rust_module, rust_type) = match (&keys.name, &keys.name_node) {
        (Some(n), Some(node)) => check_tool_name(&mut cx, n, node, opts),
        _ => (String::new(), String::new()),
    };
    if let Some(n) = &keys.name {
        param_names_reach_providers(&mut cx, n, &keys.inputs);
    }
    let prompt_guidelines = guidelines_name_the_tool(&mut cx, &keys);
    let entry = entry_file(&mut cx, dir, opts, &keys);
    language_fits(&mut cx, &keys);
    if !keys.outputs.is_empty() {
        no_input_named_output(&mut cx, &mut keys.inputs);
    }
    approval_names_a_boolean(&mut cx, &keys);
    if cx.errors() > 0 {
        return Err(cx.diags);
    }
    let name = keys.name.unwrap_or_default();
    Ok(ToolSpec {
        label: keys.label.unwrap_or_else(|| name.clone()),
        name,
        description: keys.description.unwrap_or_default(),
        version: keys.version,
        language: keys.language,
        inputs: keys.inputs,
        outputs: keys.outputs,
        prompt_snippet: keys.prompt_snippet,
        prompt_guidelines,
        timeout_secs: keys.timeout_secs,
        env: keys.env,
        annotations: keys.annotations,
        worker: keys.worker,
        sandbox: keys.sandbox,
        execution: keys.execution,
        discovery: keys.discovery,
        task: keys.task.unwrap_or(default_task(keys.timeout_secs)),
        approval: keys.approval,
        asks: keys.asks,
        bash_output: keys.bash_output.map_or(BashOutput::Text, |(o, _)| o),
        body: doc.body.clone(),
        dir: dir.to_path_buf(),
        file: file.to_path_buf(),
        entry,
        rust_module,
        rust_type,
        metadata: keys.metadata,
        mcp: None,
        warnings: cx.diags,
    })
}

/// Whether a JSON Schema block may be read as the inputs: only when it is the one place
/// they are given. Beside `inputs:` or a second block, which one is meant is not guessed.
fn one_place_for_inputs(entries: &[(YNode, YNode)]) -> bool {
    let places = entries
        .iter()
        .filter(|(k, v)| match key_name(k).as_deref() {
            Some("inputs") => true,
            Some(key) => SCHEMA_STYLE_KEYS.contains(&key) && is_object_schema(v),
            None => false,
        })
        .count();
    places == 1
}

/// A tool that says nothing of tasks may run as one when its timeout is longer than a
/// plain call's.
fn default_task(timeout_secs: Option<f64>) -> TaskSupport {
    if timeout_secs.is_some_and(|t| t > PLAIN_CALL_TIMEOUT_SECS) {
        TaskSupport::Optional
    } else {
        TaskSupport::Never
    }
}

/// The top-level keys as read, each checked on its own.
#[derive(Default)]
struct Keys<'y> {
    name: Option<String>,
    name_node: Option<YNode>,
    label: Option<String>,
    description: Option<String>,
    version: u64,
    language: Language,
    language_pos: Option<Pos>,
    language_invalid: bool,
    inputs: Vec<Input>,
    outputs: Vec<OutputField>,
    outputs_key: Option<YNode>,
    prompt_snippet: Option<String>,
    guidelines: Vec<(String, YNode)>,
    timeout_secs: Option<f64>,
    env: Vec<String>,
    annotations: Annotations,
    worker: WorkerMode,
    execution: Execution,
    discovery: DiscoveryMode,
    task: Option<TaskSupport>,
    approval: Approval,
    approval_node: Option<&'y YNode>,
    asks: Vec<Ask>,
    bash_output: Option<(BashOutput, &'y YNode)>,
    metadata: BTreeMap<String, Value>,
    sandbox: ToolSandbox,
}

impl<'y> Keys<'y> {
    /// Reads the key `k` with value `v`. `schema_is_inputs`: a JSON Schema block here is
    /// the one place the inputs are given.
    fn read(
        &mut self,
        cx: &mut Ctx<'_>,
        root: &YNode,
        k: &YNode,
        v: &'y YNode,
        opts: &Options,
        schema_is_inputs: bool,
    ) {
        let Some(key) = key_name(k) else {
            cx.err(k, "frontmatter keys must be strings");
            return;
        };
        match key.as_str() {
            "name" => {
                self.name = check_name_value(cx, v);
                self.name_node = Some(v.clone());
            }
            "label" => self.label = cx.nonempty_string("label", v),
            "description" => self.description = cx.nonempty_string("description", v),
            "version" => self.version = check_version(cx, v).unwrap_or(0),
            "language" => {
                self.language_pos = Some(v.pos);
                match check_language(cx, v) {
                    Some(l) => self.language = l,
                    None => self.language_invalid = true,
                }
            }
            "inputs" => self.inputs = check_inputs(cx, v, opts),
            "outputs" => {
                self.outputs = check_outputs(cx, v);
                self.outputs_key = Some(k.clone());
            }
            "prompt_snippet" => self.prompt_snippet = cx.nonempty_string("prompt_snippet", v),
            "prompt_guidelines" => self.guidelines = string_list(cx, "prompt_guidelines", v),
            "timeout" => self.timeout_secs = check_timeout(cx, v),
            "env" => self.env = check_env(cx, v),
            "annotations" => self.annotations = check_annotations(cx, v),
            "worker" | "output" | "execution" | "approval" | "task" | "discovery" => {
                self.read_mode(cx, &key, v)
            }
            "sandbox" => self.sandbox = check_sandbox(cx, v),
            "asks" => self.asks = check_asks(cx, v),
            other if SCHEMA_STYLE_KEYS.contains(&other) => {
                self.read_schema_style(cx, root, k, v, other, schema_is_inputs);
            }
            other => cx.extra_key("key", k, v, other, TOOL_KEYS, &mut self.metadata),
        }
    }

    /// A key whose value is one of a few words (`worker`, `output`, `execution`,
    /// `approval`, `task`).
    fn read_mode(&mut self, cx: &mut Ctx<'_>, key: &str, v: &'y YNode) {
        match key {
            "worker" => {
                let modes = [("warm", WorkerMode::Warm), ("oneshot", WorkerMode::OneShot)];
                if let Some(w) = one_of(cx, v, "worker", &modes, "expected `warm` or `oneshot`") {
                    self.worker = w;
                }
            }
            "output" => {
                let modes = [("text", BashOutput::Text), ("json", BashOutput::Json)];
                let hint = "expected `text` (stdout is the result's text, the default) or `json` (stdout is the whole result object)";
                if let Some(o) = one_of(cx, v, "output", &modes, hint) {
                    self.bash_output = Some((o, v));
                }
            }
            "execution" => {
                let modes = [
                    ("parallel", Execution::Parallel),
                    ("sequential", Execution::Sequential),
                ];
                let hint = "expected `parallel` (the default) or `sequential` (one call at a time)";
                if let Some(e) = one_of(cx, v, "execution", &modes, hint) {
                    self.execution = e;
                }
            }
            "discovery" => {
                let modes = [
                    ("search", DiscoveryMode::Search),
                    ("always", DiscoveryMode::Always),
                ];
                let hint = "expected `search` (found with search_tools in progressive mode, the default) or `always` (listed from the first turn)";
                if let Some(d) = one_of(cx, v, "discovery", &modes, hint) {
                    self.discovery = d;
                }
            }
            "approval" => {
                if let Some(input) = v
                    .as_text()
                    .and_then(|t| t.trim().strip_prefix("when ").map(|i| i.trim().to_owned()))
                {
                    self.approval = Approval::When(input);
                    self.approval_node = Some(v);
                } else {
                    let modes = [("always", true), ("never", false)];
                    let hint = "expected `always` (every call waits for the host's approval), `when <boolean input>` (a call waits when that input is true) or `never` (the default)";
                    if let Some(a) = one_of(cx, v, "approval", &modes, hint) {
                        self.approval = if a { Approval::Always } else { Approval::Never };
                    }
                }
            }
            "task" => {
                let modes = [
                    ("never", TaskSupport::Never),
                    ("optional", TaskSupport::Optional),
                    ("required", TaskSupport::Required),
                ];
                let hint = "expected `optional` (a task for a client that takes tasks), `required` (only as a task) or `never`";
                if let Some(t) = one_of(cx, v, "task", &modes, hint) {
                    self.task = Some(t);
                }
            }
            _ => unreachable!("read_mode is called for its keys only"),
        }
    }

    /// A JSON Schema style key (`parameters`, `inputSchema`, ...): the inputs when it is
    /// the one place they are given, else (a mapping) an error saying to use `inputs`, else
    /// an extra key.
    fn read_schema_style(
        &mut self,
        cx: &mut Ctx<'_>,
        root: &YNode,
        k: &YNode,
        v: &'y YNode,
        key: &str,
        schema_is_inputs: bool,
    ) {
        if schema_is_inputs && is_object_schema(v) {
            self.inputs = schema_inputs(cx, root, k, v, key);
        } else if matches!(v.value, YValue::Map(_)) {
            cx.err(
                k,
                format!("`{key}` is not a TOOL.md key: a tool's parameters go under `inputs`"),
            )
            .hint = Some(format!(
                "rename `{key}:` to `inputs:` and convert a JSON Schema block: each entry of \
                 `properties` becomes `name:` with `type` (string, number, boolean, or enum \
                 with `values:` for a string `enum`) and `description`; a property not in \
                 `required` gets `optional: true`"
            ));
        } else {
            cx.extra_key("key", k, v, key, TOOL_KEYS, &mut self.metadata);
        }
    }
}

/// `approval: when <input>` names a boolean input of the tool: any other would never ask
/// (a typo would run the tool unasked), so it is an error.
fn approval_names_a_boolean(cx: &mut Ctx<'_>, keys: &Keys<'_>) {
    let (Approval::When(input), Some(node)) = (&keys.approval, keys.approval_node) else {
        return;
    };
    let found = keys.inputs.iter().find(|i| &i.name == input);
    let why = match found {
        Some(i) if i.ty == InputType::Boolean => return,
        Some(_) => {
            format!("`approval: when {input}` names `{input}`, which is not a boolean input")
        }
        None => format!("`approval: when {input}` names no input of this tool"),
    };
    let booleans: Vec<&str> = keys
        .inputs
        .iter()
        .filter(|i| i.ty == InputType::Boolean)
        .map(|i| i.name.as_str())
        .collect();
    cx.err(node, why).hint = Some(if booleans.is_empty() {
        "add a boolean input (say `overwrite`) for the case that needs approval, or say `approval: always`".into()
    } else {
        format!("name one of the boolean inputs: {}", booleans.join(", "))
    });
}

/// `name:` and `description:` are required.
fn required_keys(cx: &mut Ctx<'_>, keys: &Keys<'_>, entries: &[(YNode, YNode)]) {
    let fence = Pos::new(1, 1);
    if keys.name.is_none() && keys.name_node.is_none() {
        cx.err_at(fence, 3, "missing required key `name`").hint =
            Some("add `name: my_tool` (snake_case) to the frontmatter".into());
    }
    if keys.description.is_none()
        && !entries
            .iter()
            .any(|(k, _)| key_name(k).as_deref() == Some("description"))
    {
        cx.err_at(fence, 3, "missing required key `description`")
            .hint = Some(
            "add `description:` saying what the tool does and when an agent should use it".into(),
        );
    }
}

/// A warning for each parameter name, nested ones included, that a provider rejects.
fn param_names_reach_providers(cx: &mut Ctx<'_>, tool: &str, inputs: &[Input]) {
    let mut named: Vec<&Input> = Vec::new();
    for top in inputs {
        top.visit(&mut |i| {
            if !i.name.is_empty() {
                named.push(i);
            }
        });
    }
    for input in named {
        if let Some((rejecting, those)) = rejected_by(|d| d.accepts_param_name(&input.name)) {
            cx.warn_at(
                input.pos,
                input.name.chars().count(),
                format!(
                    "parameter name `{}` is rejected by {rejecting}: the tool `{tool}` is left out of {those}",
                    input.name,
                ),
            )
            .hint = Some(format!(
                "rename it to `{}` to reach every provider",
                snake_suggestion(&input.name)
            ));
        }
    }
}

/// The guidelines, with a warning on each that does not name the tool.
fn guidelines_name_the_tool(cx: &mut Ctx<'_>, keys: &Keys<'_>) -> Vec<String> {
    let mut out = Vec::new();
    for (g, node) in &keys.guidelines {
        if let Some(n) = &keys.name
            && !names_tool(g, n)
        {
            cx.warn(node, format!("guideline does not name the tool `{n}`"))
                .hint = Some(format!(
                "a model cannot tell which tool \"this tool\" means: write \"use {n} to ...\""
            ));
        }
        out.push(g.clone());
    }
    out
}

/// The entry file beside TOOL.md, with an error when `opts.require_entry` and there is none
/// that can be used.
fn entry_file(cx: &mut Ctx<'_>, dir: &Path, opts: &Options, keys: &Keys<'_>) -> Option<String> {
    let language = keys.language;
    let pos = keys.language_pos.unwrap_or(Pos::new(1, 1));
    // Only a regular file inside the folder is an entry file (a symlink out of the folder,
    // a FIFO, a folder are not, and are never opened); one that is there as such a file is
    // reported as what it is, not as missing. Without `require_entry` the caller looks
    // (the loader asks `find_entry` itself, to say why it skips the tool).
    let (found, refused) = match crate::file::find_entry(dir, language.entry_candidates()) {
        Ok(found) => (found, None),
        Err(e) => (None, Some(e)),
    };
    // An unknown language already has its error; guessing its entry file would add a
    // second, misleading one.
    if !opts.require_entry || keys.language_invalid {
        return found;
    }
    if let Some(e) = &refused {
        let d = cx.err_at(
            pos,
            3,
            format!("the {language} tool's entry file cannot be used: {e}"),
        );
        d.hint = e.hint();
    } else if found.is_none() {
        let files = language.entry_candidates().join(", ");
        let how = match language {
            Language::TypeScript => "exporting `execute(toolCallId, params, signal, onUpdate)`",
            Language::Python => "defining `execute(tool_call_id, params, signal, on_update)`",
            Language::Bash => "reading the params as JSON on stdin and printing the result",
        };
        cx.err_at(
            pos,
            3,
            format!("missing entry file: a {language} tool needs one of {files} beside TOOL.md"),
        )
        .hint = Some(format!(
            "create {}/{} {how}",
            dir.display(),
            language.entry_candidates()[0]
        ));
    }
    found
}

/// Keys only one language reads: `output:` (bash) and `outputs:` (not bash).
fn language_fits(cx: &mut Ctx<'_>, keys: &Keys<'_>) {
    let language = keys.language;
    if let Some((_, v)) = keys.bash_output
        && language != Language::Bash
    {
        cx.warn(v, format!("`output` is ignored: it says what a bash tool's stdout is, and this is a {language} tool"))
            .hint = Some("a typescript or python tool returns its result object from `execute`; remove `output:`".into());
    }
    if let Some(key) = &keys.outputs_key
        && language == Language::Bash
        && !keys.outputs.is_empty()
    {
        cx.err(key, "a bash tool cannot declare `outputs`: its result is the text it prints, with no `details`")
            .hint = Some("remove `outputs:`, or write the tool in python or typescript, whose `execute` can return `details`".into());
    }
}

/// The generated module holds a struct `Output` when the tool declares outputs: an enum
/// or object input that would take the name gets a fallback.
fn no_input_named_output(cx: &mut Ctx<'_>, inputs: &mut [Input]) {
    let mut taken: Vec<String> = Vec::new();
    for i in inputs.iter() {
        i.visit(&mut |n| taken.push(n.rust_type.clone()));
    }
    for top in inputs {
        top.visit_mut(&mut |input| {
            if input.rust_type != "Output" {
                return;
            }
            let fallback =
                ident::unique("Output", |c| c == "Output" || taken.iter().any(|t| t == c));
            taken.push(fallback.clone());
            let kind = if input.ty == InputType::Enum { "enum" } else { "object" };
            let label = if input.name.is_empty() { "items" } else { input.name.as_str() };
            cx.warn_at(
                input.pos,
                label.chars().count(),
                format!(
                    "{kind} input `{label}` would be the Rust type `Output`, which holds the tool's outputs: it gets `{fallback}`",
                ),
            )
            .hint = Some("the values the model sends are unchanged; rename the input for a nicer Rust name".into());
            input.rust_type = fallback;
        });
    }
}
