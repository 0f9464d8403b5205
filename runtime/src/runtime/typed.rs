//! The typed path: a generated `Params` value sent to its tool after the drift check,
//! and a result's `details` read back as the tool's generated `Output` type.

use serde_json::Value;

use super::{CallOptions, Runtime};
use crate::Tool;
use crate::ToolInfo;
use crate::args;
use crate::output::{OutputError, Typed};
use crate::result::{Content, StopReason, ToolResult};

impl Runtime {
    /// The typed path: sends a generated `Params` value to tool `T`.
    ///
    /// The params are not validated again: a generated `Params` value is valid by
    /// construction (it came through the generated `ToolCall::parse`, which runs the same
    /// validator as [`call`](Self::call), or was built by the program with the compiler checking
    /// every field). Only the defaults generated code cannot hold (a sensitive input's) are
    /// filled in from the loaded TOOL.md.
    ///
    /// Before anything runs, the loaded TOOL.md's contract is compared with the one `T` was
    /// generated from ([`Tool::FINGERPRINT`]); when they differ the call is refused with an
    /// error result naming the tool and both versions, instead of sending params the tool
    /// no longer expects.
    ///
    /// ```ignore
    /// toolbind::include_tools!(); // generated from tools/todo/TOOL.md by build.rs
    /// let params = todo::Params { action: todo::Action::Add, text: Some("ship it".into()), items: None };
    /// let result = runtime.call_typed::<todo::Tool>(params, CallOptions::new()).await;
    /// ```
    pub fn call_typed<T: Tool>(
        &self,
        params: T::Params,
        opts: CallOptions,
    ) -> impl Future<Output = ToolResult> + Send + '_ {
        // Only the serialisation depends on `T`: the call itself is compiled once per
        // program, not once per tool (a crate with 100 tools' bindings builds in half the
        // time).
        let params = serde_json::to_value(&params);
        self.call_compiled(Compiled::of::<T>(), params, opts)
    }

    /// The typed path's one span around its call (not generic: see `call_typed`).
    async fn call_compiled(
        &self,
        tool: Compiled,
        params: Result<Value, serde_json::Error>,
        opts: CallOptions,
    ) -> ToolResult {
        self.in_call_span(tool.name, opts, |opts, span| async move {
            let checked = span.in_scope(|| {
                self.drift_check_of(&tool)?;
                let Some(spec) = self.registry.get(tool.name) else {
                    return Err(self.unknown_tool(tool.name));
                };
                let mut params = params_object(tool.name, params)?;
                // Types hold every rule but the constraints (`minimum`, `max_items`, ...):
                // the runtime still enforces them, as for a model's call.
                args::typed_check(spec.spec(), &mut params)
                    .map_err(|e| ToolResult::stopped(StopReason::BadArguments, e.to_string()))?;
                Ok((spec, params))
            });
            match checked {
                Ok((spec, params)) => self.execute(spec, params, opts, &span).await,
                Err(result) => result,
            }
        })
        .await
    }

    /// [`call_typed`](Self::call_typed), with the result's `details` also parsed into
    /// `T`'s generated `Output` type ([`output`](Self::output)): the result for the model,
    /// the typed output for the program.
    ///
    /// ```ignore
    /// toolbind::include_tools!(); // web_fetch declares `outputs:` in its TOOL.md
    /// let typed = runtime.call_output::<web_fetch::Tool>(params, CallOptions::new()).await;
    /// match typed.output {
    ///     Ok(out) => println!("{} from {}", out.status, out.final_url),
    ///     Err(e) => eprintln!("no output: {e}; the model sees: {}", typed.result.text_content()),
    /// }
    /// ```
    pub async fn call_output<T: Tool>(
        &self,
        params: T::Params,
        opts: CallOptions,
    ) -> Typed<T::Output> {
        let result = self.call_typed::<T>(params, opts).await;
        let output = self.output::<T>(&result);
        Typed { result, output }
    }

    /// The `details` of `result`, a result of tool `T` (from [`call`](Self::call),
    /// [`call_typed`](Self::call_typed) or a generated `ToolCall::call`), as `T`'s
    /// generated `Output` type: the struct for a tool whose TOOL.md declares `outputs:`,
    /// the details as a `serde_json::Value` (`null` when absent) for one that does not.
    ///
    /// An error when the call did not complete ([`OutputError::Failed`]), when the details
    /// break the loaded tool's declared outputs ([`OutputError::Violated`], each field and
    /// what is wrong), or when they do not fit the compiled type
    /// ([`OutputError::Mismatch`]).
    pub fn output<T: Tool>(&self, result: &ToolResult) -> Result<T::Output, OutputError> {
        crate::output::typed::<T>(self.registry.get(T::NAME).map(ToolInfo::spec), result)
    }

    /// Whether the loaded tool `T::NAME` has the contract `T` was compiled against; the
    /// error result [`call_typed`](Self::call_typed) returns when not.
    pub fn drift_check<T: Tool>(&self) -> Result<(), ToolResult> {
        self.drift_check_of(&Compiled::of::<T>())
    }

    fn drift_check_of(&self, tool: &Compiled) -> Result<(), ToolResult> {
        let Some(spec) = self.registry.get(tool.name) else {
            let mut r = self.unknown_tool(tool.name);
            if let Some(Content::Text { text }) = r.content.first_mut() {
                text.insert_str(
                    0,
                    "this program was compiled with the tool, but it is not loaded: ",
                );
            }
            return Err(r);
        };
        let fp = spec.fingerprint();
        if fp == tool.fingerprint {
            return Ok(());
        }
        // One version, two contracts: a TOOL.md was edited without bumping `version:`, and
        // a sync keeps an installed copy of the same version, so rebuilding alone cannot
        // bring the two together.
        let fix = if spec.version() == tool.version {
            format!(
                "Both are version {v}, so one of them was edited without bumping `version:`, \
                 and a sync never replaces an installed copy of the same version: bump \
                 `version:` to {next} in the edited (seed) TOOL.md, sync, and rebuild.",
                v = tool.version,
                next = tool.version.saturating_add(1),
            )
        } else {
            "Rebuild against the current TOOL.md, or install the tool version the program \
             was built for."
                .to_owned()
        };
        Err(ToolResult::stopped(
            StopReason::ContractDrift,
            format!(
                "tool `{name}`: the TOOL.md on disk ({file}, version {disk}) differs from the \
             contract this program was compiled against (version {compiled}): its inputs, \
             types, optionality, enum values or defaults changed, so the compiled params \
             would be wrong. {fix} (contract fingerprint on disk {fp:016x}, compiled \
             {cfp:016x})",
                name = tool.name,
                file = spec.file().display(),
                disk = spec.version(),
                compiled = tool.version,
                cfp = tool.fingerprint,
            ),
        ))
    }
}

/// What generated code knows of a compiled-in tool: the part of [`Tool`] the typed path
/// needs, taken out of the generic so that path is compiled once.
struct Compiled {
    name: &'static str,
    version: u64,
    fingerprint: u64,
}

impl Compiled {
    fn of<T: Tool>() -> Self {
        Compiled {
            name: T::NAME,
            version: T::VERSION,
            fingerprint: T::FINGERPRINT,
        }
    }
}

/// A typed call's serialised params as the object a call takes, or the result saying why
/// they are not one.
pub(crate) fn params_object(
    name: &str,
    params: Result<Value, serde_json::Error>,
) -> Result<serde_json::Map<String, Value>, ToolResult> {
    match params {
        Ok(Value::Object(params)) => Ok(params),
        Ok(other) => Err(ToolResult::stopped(
            StopReason::BadArguments,
            format!("the params of tool `{name}` serialised to {other}, not an object"),
        )),
        Err(e) => Err(ToolResult::error(format!(
            "cannot serialise the params of tool `{name}`: {e}"
        ))),
    }
}
