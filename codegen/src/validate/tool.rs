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
    // A JSON Schema block is read as the inputs only when it is the one place they are
    // given: beside `inputs:` or a second block, which one is meant is not guessed.
    let inputs_given = entries
        .iter()
        .filter(|(k, v)| match key_name(k).as_deref() {
            Some("inputs") => true,
            Some(key) => SCHEMA_STYLE_KEYS.contains(&key) && is_object_schema(v),
            None => false,
        })
        .count();
    for (k, v) in entries {
        keys.read(&mut cx, root, k, v, opts, inputs_given == 1);
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
        task: keys.task.unwrap_or(
            if keys
                .timeout_secs
                .is_some_and(|t| t > PLAIN_CALL_TIMEOUT_SECS)
            {
                TaskSupport::Optional
            } else {
                TaskSupport::Never
            },
        ),
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
            "worker" => {
                let modes = [("warm", WorkerMode::Warm), ("oneshot", WorkerMode::OneShot)];
                if let Some(w) = one_of(cx, v, "worker", &modes, "expected `warm` or `oneshot`") {
                    self.worker = w;
                }
            }
            "sandbox" => self.sandbox = check_sandbox(cx, v),
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
            "asks" => self.asks = check_asks(cx, v),
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
            other
                if SCHEMA_STYLE_KEYS.contains(&other)
                    && schema_is_inputs
                    && is_object_schema(v) =>
            {
                self.inputs = schema_inputs(cx, root, k, v, other);
            }
            other if SCHEMA_STYLE_KEYS.contains(&other) && matches!(v.value, YValue::Map(_)) => {
                cx.err(
                    k,
                    format!(
                        "`{other}` is not a TOOL.md key: a tool's parameters go under `inputs`"
                    ),
                )
                .hint = Some(format!(
                    "rename `{other}:` to `inputs:` and convert a JSON Schema block: each entry of \
                     `properties` becomes `name:` with `type` (string, number, boolean, or enum \
                     with `values:` for a string `enum`) and `description`; a property not in \
                     `required` gets `optional: true`"
                ));
            }
            other => cx.extra_key("key", k, v, other, TOOL_KEYS, &mut self.metadata),
        }
    }
}

/// `name:`'s value: a string, or a YAML integer read as its digits.
fn check_name_value(cx: &mut Ctx<'_>, v: &YNode) -> Option<String> {
    match &v.value {
        // `name: 123` is YAML's integer, and a name providers accept.
        YValue::UInt(_) | YValue::Int(_) if v.raw.is_some() => {
            let text = v.raw.clone().unwrap_or_default();
            cx.warn(
                v,
                format!("`name` is written as a number; read as `{text}`"),
            )
            .hint = Some(format!("quote it: `name: \"{text}\"`"));
            Some(text)
        }
        _ => cx.nonempty_string("name", v),
    }
}

/// `asks:`: the questions the tool cannot do without, each once; an unknown one is an
/// error (a tool listed as needing nothing would run for a client that cannot answer).
fn check_asks(cx: &mut Ctx<'_>, v: &YNode) -> Vec<Ask> {
    let mut asks = Vec::new();
    for (word, node) in string_list(cx, "asks", v) {
        match Ask::ALL
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(word.trim()))
        {
            Some((_, ask)) if !asks.contains(ask) => asks.push(*ask),
            Some(_) => {}
            None => {
                cx.err(&node, format!("`{word}` is not a question a client can be asked"))
                    .hint = Some(
                    "expected `elicitation` (forms: ctx.elicit, ctx.confirm), `sampling` (ctx.sample) or `roots` (ctx.roots)".into(),
                );
            }
        }
    }
    asks
}

/// `env:`: the variable names passed to the tool; one that is not a name is dropped.
fn check_env(cx: &mut Ctx<'_>, v: &YNode) -> Vec<String> {
    let mut env = Vec::new();
    for (var, node) in string_list(cx, "env", v) {
        if !is_env_name(&var) {
            cx.warn(
                &node,
                format!(
                    "`{var}` is not an environment variable name; it is not passed to the tool"
                ),
            )
            .hint = Some("use letters, digits and `_`, not starting with a digit".into());
        } else {
            env.push(var);
        }
    }
    env
}

/// A mode key (`worker:`, `output:`, `execution:`): one of `modes`' words, in any case;
/// else an error naming what was found, with `expected` as the hint.
fn one_of<T: Copy>(
    cx: &mut Ctx<'_>,
    v: &YNode,
    key: &str,
    modes: &[(&str, T)],
    expected: &str,
) -> Option<T> {
    let word = v.as_text().map(|t| t.to_lowercase());
    if let Some((_, mode)) = modes.iter().find(|(w, _)| Some(*w) == word.as_deref()) {
        return Some(*mode);
    }
    let found = word.unwrap_or_else(|| v.kind().to_owned());
    cx.err(v, format!("unknown {key} mode `{found}`")).hint = Some(expected.into());
    None
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

pub(super) fn check_version(cx: &mut Ctx<'_>, v: &YNode) -> Option<u64> {
    match &v.value {
        YValue::UInt(u) => Some(*u),
        YValue::Int(i) if *i >= 0 => Some(*i as u64),
        YValue::Str(s) if crate::parse::version_from_text(s).is_some() => {
            let n = crate::parse::version_from_text(s);
            let n = n.unwrap_or(0);
            let hint = if s.trim().parse::<u64>().is_ok() {
                format!("remove the quotes: `version: {n}`")
            } else {
                format!("write `version: {n}`")
            };
            cx.warn(v, format!("`version` is a quoted string; read as {n}"))
                .hint = Some(hint);
            Some(n)
        }
        YValue::Float(f) if crate::parse::version_from_float(*f).is_some() => {
            let n = crate::parse::version_from_float(*f).unwrap_or(0);
            cx.warn(
                v,
                format!("`version` is written with a fraction; read as {n}"),
            )
            .hint = Some(format!("versions are whole numbers: write `version: {n}`"));
            Some(n)
        }
        _ => {
            let found = v.as_text().unwrap_or_else(|| v.kind().to_owned());
            let hint = match &v.value {
                YValue::Int(_) => "versions only go up: start at 0 or 1".to_owned(),
                YValue::Float(f) => {
                    format!("use a whole number, e.g. `version: {}`", f.ceil().max(1.0))
                }
                YValue::Str(s) if s.trim().parse::<u64>().is_ok() => {
                    format!("remove the quotes: `version: {}`", s.trim())
                }
                _ => "use a whole number such as `version: 1` and bump it on every change".into(),
            };
            cx.err(
                v,
                format!("`version` must be a non-negative integer, found `{found}`"),
            )
            .hint = Some(hint);
            None
        }
    }
}

pub(super) fn check_language(cx: &mut Ctx<'_>, v: &YNode) -> Option<Language> {
    let Some(text) = v.as_text() else {
        let kind = v.kind();
        cx.err(v, format!("`language` must be a string, found {kind}"));
        return None;
    };
    if let Some(l) = Language::from_name(&text) {
        return Some(l);
    }
    // JavaScript is what a typescript tool's `index.js`/`index.mjs` entry already is: the
    // same runner, so the word is read as it is meant.
    if matches!(text.to_lowercase().as_str(), "javascript" | "js") {
        return Some(Language::TypeScript);
    }
    let guess = language_alias(&text).or_else(|| suggest(&text, LANGUAGE_NAMES));
    cx.err(
        v,
        format!("unknown language `{text}`, expected one of typescript, python, bash"),
    )
    .hint = guess.map(|g| format!("did you mean `{g}`?"));
    None
}

pub(super) fn check_timeout(cx: &mut Ctx<'_>, v: &YNode) -> Option<f64> {
    let secs = match &v.value {
        YValue::UInt(u) => *u as f64,
        YValue::Int(i) => *i as f64,
        YValue::Float(f) => *f,
        YValue::Str(s) => match number_from_text(s).and_then(|n| n.as_f64()) {
            Some(n) if n.is_finite() && n > 0.0 => {
                cx.warn(
                    v,
                    format!("`timeout` is a quoted string; read as {n} seconds"),
                )
                .hint = Some(format!("remove the quotes: `timeout: {}`", s.trim()));
                return Some(n);
            }
            _ => f64::NAN,
        },
        _ => f64::NAN,
    };
    if secs.is_finite() && secs > 0.0 {
        Some(secs)
    } else {
        // The source text, quotes and all: the value as written.
        let found = v
            .raw
            .clone()
            .or_else(|| v.as_text())
            .unwrap_or_else(|| v.kind().to_owned());
        cx.err(
            v,
            format!("`timeout` must be a positive number of seconds, found `{found}`"),
        )
        .hint = Some("write e.g. `timeout: 30`".into());
        None
    }
}

pub(super) fn check_annotations(cx: &mut Ctx<'_>, v: &YNode) -> Annotations {
    let mut a = Annotations::default();
    let Some(entries) = map_entries(v) else {
        let kind = v.kind();
        cx.err(v, format!("`annotations` must be a mapping, found {kind}"));
        return a;
    };
    for (k, val) in entries {
        let key = key_name(k).unwrap_or_default();
        let slot = match key.as_str() {
            "read_only" => &mut a.read_only,
            "destructive" => &mut a.destructive,
            "idempotent" => &mut a.idempotent,
            "open_world" => &mut a.open_world,
            _ => {
                // Hosts define more hints than toolbind reads: a near-miss of one it reads
                // is an error, anything else a warning.
                let mut ignored = BTreeMap::new();
                cx.extra_key("annotation", k, val, &key, ANNOTATION_KEYS, &mut ignored);
                continue;
            }
        };
        *slot = cx.boolean(&key, val);
    }
    a
}

/// `sandbox: {network: false}`: a tool narrowing the runtime's sandbox policy.
pub(super) fn check_sandbox(cx: &mut Ctx<'_>, v: &YNode) -> ToolSandbox {
    let mut s = ToolSandbox::default();
    let Some(entries) = map_entries(v) else {
        let kind = v.kind();
        cx.err(v, format!("`sandbox` must be a mapping, found {kind}"))
            .hint = Some("write `sandbox: {network: false}`".into());
        return s;
    };
    for (k, val) in entries {
        let key = key_name(k).unwrap_or_default();
        match key.as_str() {
            "network" => s.network = cx.boolean("network", val),
            _ => cx.unknown_key("sandbox key", k, &key, SANDBOX_KEYS),
        }
    }
    s
}

pub(super) fn string_list(cx: &mut Ctx<'_>, key: &str, v: &YNode) -> Vec<(String, YNode)> {
    match &v.value {
        YValue::Seq(items) => items
            .iter()
            .filter_map(|n| match n.as_text() {
                Some(s) => Some((s, n.clone())),
                None => {
                    let kind = n.kind();
                    cx.err(n, format!("items of `{key}` must be strings, found {kind}"));
                    None
                }
            })
            .collect(),
        YValue::Str(s) => vec![(s.clone(), v.clone())],
        _ => {
            let kind = v.kind();
            cx.err(
                v,
                format!("`{key}` must be a list of strings, found {kind}"),
            );
            Vec::new()
        }
    }
}

pub(super) fn is_env_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The provider dialects that reject a name (`accepts` says which accept it), listed, and
/// how a message refers to them; `None` when every one accepts it.
pub(super) fn rejected_by(accepts: impl Fn(Dialect) -> bool) -> Option<(String, &'static str)> {
    let list: Vec<&str> = Dialect::PROVIDERS
        .into_iter()
        .filter(|d| !accepts(*d))
        .map(Dialect::as_str)
        .collect();
    let those = if list.len() == 1 {
        "that dialect"
    } else {
        "those dialects"
    };
    (!list.is_empty()).then(|| (list.join(", "), those))
}

/// A snake_case name every provider accepts, for hints: ASCII letters, digits and `_`,
/// starting with a letter or `_`, at most 64 characters (`café` -> `caf`, a 70-letter name cut
/// to 64).
pub(super) fn snake_suggestion(s: &str) -> String {
    let snake = ident::field_name_or_spelled(s);
    let mut out: String = snake
        .trim_start_matches("r#")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        out.insert(0, '_');
    }
    out.truncate(64);
    let trimmed = out.trim_end_matches('_');
    if trimmed.is_empty() {
        "my_tool".to_owned()
    } else {
        trimmed.to_owned()
    }
}

pub(super) fn check_tool_name(
    cx: &mut Ctx<'_>,
    name: &str,
    node: &YNode,
    opts: &Options,
) -> (String, String) {
    // A tool's name is a folder name (its state folder, its synced folder, its caches):
    // one that is not one plain path component is refused whatever the other rules say.
    if let Some(why) = crate::model::path_component_problem(name) {
        cx.err(
            node,
            format!(
                "tool name `{}` cannot be used: {why}; a tool name becomes a folder name (its \
                 state folder, its synced folder)",
                name.escape_debug()
            ),
        )
        .hint = Some(format!(
            "name the tool with letters, digits and `_`, e.g. `{}`",
            snake_suggestion(name)
        ));
        return (String::new(), String::new());
    }
    if opts.portable_names && !Dialect::PROVIDERS.iter().any(|d| d.accepts_tool_name(name)) {
        cx.err(node, format!("invalid tool name `{name}`: model providers accept only letters, digits, `_` and `-`, 1 to 64 characters"))
            .hint = Some(format!("use snake_case, e.g. `{}`", snake_suggestion(name)));
        return (String::new(), String::new());
    }
    if let Some((rejecting, those)) = rejected_by(|d| d.accepts_tool_name(name)) {
        cx.warn(
            node,
            format!(
                "tool name `{name}` is rejected by {rejecting}: the tool is left out of {those}"
            ),
        )
        .hint = Some(format!(
            "rename it to `{}` to reach every provider",
            snake_suggestion(name)
        ));
    }
    // The platform's TOOLS.md says "Use snake_case"; providers accept more, and so does
    // toolbind.
    let snake = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    let module = ident::module_name(name);
    if !snake {
        cx.warn(node, format!("tool name `{name}` is not snake_case"))
            .hint = Some(format!(
            "the format asks for snake_case (`{}`); the tool loads and works as it is",
            snake_suggestion(name)
        ));
    } else if ident::field_name(name).as_deref() != Some(module.as_str()) {
        cx.warn(
            node,
            format!("tool name `{name}` would shadow a crate: its Rust module is `{module}`"),
        );
    }
    (module, ident::variant_name_or_spelled(name))
}

/// Whether a guideline mentions the tool by name as a word (`todo`, not `todos`).
pub(super) fn names_tool(guideline: &str, name: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    guideline.match_indices(name).any(|(i, _)| {
        let before = guideline[..i].chars().next_back();
        let after = guideline[i + name.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}
