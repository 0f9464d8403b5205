//! # toolbind
//!
//! The runtime for TOOL.md tool folders: what generated bindings and agents use.
//!
//! - [`Tool`]: implemented by generated marker types (one per tool), carrying the tool's
//!   name, version, JSON Schema and prompt text as constants.
//! - [`Secret`]: the wrapper generated for `sensitive: true` inputs.
//! - [`ToolResult`] / [`Content`] / [`Progress`]: results in the seed's JSON shape;
//!   [`Runtime::call_output`] / [`Runtime::output`]: a result's `details` as the tool's
//!   generated `Output` type, checked against its TOOL.md `outputs:`
//!   ([`OutputCheck`], [`OutputViolation`]).
//! - [`executor::Executor`]: the contract that subprocess executors implement.
//! - [`sync::sync`]: sync-by-version of seed tools into a data folder at startup.
//! - [`loader::Loader`]: builds a [`Registry`] from tool folders and `PI_TOOLS_DIRS`.
//! - [`Runtime`]: validates a model's calls ([`args`]), runs them on an executor and
//!   truncates the output ([`truncate`]).
//! - [`batch`]: a model turn's parallel calls run concurrently ([`Runtime::call_batch`]).
//! - [`provider`]: tool definitions, tool calls and results in OpenAI (Chat Completions
//!   and Responses), Anthropic and Gemini wire formats.
//! - `rig` (feature `rig`): every loaded tool as a rig 0.44 `DynamicTool`.
//!
//! Features: `typescript` (default) transpiles `index.ts` in Rust so TypeScript tools run
//! on Node 20; `macros` (default) re-exports the `tools!` and `tool!` proc-macros — turn
//! it off on the build.rs path and toolbind-macros is not compiled; `rig` adds the rig
//! adapter. toolbind runs tools as Unix process groups: it builds on Unix only.

#[cfg(not(unix))]
compile_error!(
    "toolbind runs tools as Unix process groups (setsid, killpg, socketpairs): it supports \
     Linux and other Unix systems only"
);

pub mod args;
pub mod batch;
pub mod cancel;
pub mod dispatch;
pub mod exec;
pub mod executor;
pub mod loader;
mod output;
pub mod provider;
pub mod result;
#[cfg(feature = "rig")]
pub mod rig;
pub mod secret;
pub mod sync;
pub mod truncate;

pub use batch::{Batch, BatchOptions, ToolCallRequest};
pub use cancel::CancelToken;
pub use dispatch::{CallOptions, Runtime, RuntimeBuilder, RuntimeConfig};
pub use loader::{LoadWarning, Loader, Registry};
pub use output::{OutputCheck, OutputError, OutputViolation, Typed};
pub use provider::Provider;
pub use result::{Content, Limit, Progress, StopReason, ToolResult};
pub use secret::Secret;
pub use sync::{SyncError, SyncReport, sync};
pub use toolbind_codegen::model::{Language, ToolSpec};
#[cfg(feature = "macros")]
pub use toolbind_macros::{tool, tools};
pub use truncate::{TruncateOptions, Truncation, truncate_head};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A tool known at compile time. Generated code implements it on one marker type per tool
/// (`web_fetch::Tool`); agents use it for the typed call path.
pub trait Tool {
    /// The generated params struct.
    type Params: Serialize + DeserializeOwned + Send + 'static;
    /// The typed `details` of the tool's results: the generated `Output` struct for a tool
    /// whose TOOL.md declares `outputs:`, `serde_json::Value` (the details as they are) for
    /// one that does not. [`Runtime::call_output`] and [`Runtime::output`] give it.
    type Output: DeserializeOwned + Send + 'static;
    /// The name a model calls the tool by.
    const NAME: &'static str;
    const LABEL: &'static str;
    const DESCRIPTION: &'static str;
    const VERSION: u64;
    const LANGUAGE: Language;
    /// The portable JSON Schema of the params, as JSON text.
    const SCHEMA: &'static str;
    /// The tool's line of the system prompt's "Available tools" section.
    const PROMPT: &'static str;
    /// The Markdown body of TOOL.md.
    const DOCS: &'static str;
    /// [`ToolSpec::fingerprint`] of the TOOL.md this code was generated from.
    const FINGERPRINT: u64;
}

/// Static facts about one compiled tool, collected by the generated `TOOLS` slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolInfo {
    pub name: &'static str,
    pub label: &'static str,
    pub description: &'static str,
    pub version: u64,
    pub language: Language,
    pub schema: &'static str,
    pub prompt: &'static str,
    pub fingerprint: u64,
}

impl ToolInfo {
    /// The facts of a [`Tool`] implementation.
    pub const fn of<T: Tool>() -> Self {
        ToolInfo {
            name: T::NAME,
            label: T::LABEL,
            description: T::DESCRIPTION,
            version: T::VERSION,
            language: T::LANGUAGE,
            schema: T::SCHEMA,
            prompt: T::PROMPT,
            fingerprint: T::FINGERPRINT,
        }
    }
}

/// Why `ToolCall::from_call(name, args)` rejected a model's call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// No compiled tool has this name.
    UnknownTool {
        name: String,
        known: &'static [&'static str],
    },
    /// The arguments did not match the tool's params.
    BadArgs { tool: &'static str, message: String },
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::UnknownTool { name, known } => write!(
                f,
                "unknown tool `{name}`; available tools: {}",
                known.join(", ")
            ),
            CallError::BadArgs { tool, message } => {
                write!(f, "invalid arguments for tool `{tool}`: {message}")
            }
        }
    }
}

impl std::error::Error for CallError {}

/// Includes the bindings that `toolbind_codegen::Config::compile()` wrote in build.rs.
///
/// ```ignore
/// toolbind::include_tools!();            // the default file name, `tools.rs`
/// toolbind::include_tools!("agent.rs");  // a name set with `Config::out_file`
/// ```
#[macro_export]
macro_rules! include_tools {
    () => {
        $crate::include_tools!("tools.rs");
    };
    ($file:literal) => {
        ::core::include!(::core::concat!(
            ::core::env!("OUT_DIR"),
            "/toolbind/",
            $file
        ));
    };
}

/// Items generated code refers to. Not a public API: it changes without notice.
#[doc(hidden)]
pub mod __private {
    pub use ::serde;
    pub use ::serde_json;

    pub use crate::{CallError, Language, Secret, Tool, ToolInfo};

    /// A string that is none of an enum's values (`FromStr` of a generated enum).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ParseEnumError {
        input: &'static str,
        found: ::std::string::String,
        expected: ::std::vec::Vec<&'static str>,
    }

    /// `FromStr` for generated enums: the value whose wire spelling is `s`.
    pub fn parse_enum<T: Copy>(
        input: &'static str,
        s: &str,
        all: &'static [T],
        wire: fn(T) -> &'static str,
    ) -> Result<T, ParseEnumError> {
        all.iter()
            .copied()
            .find(|v| wire(*v) == s)
            .ok_or_else(|| ParseEnumError {
                input,
                found: s.to_owned(),
                expected: all.iter().map(|v| wire(*v)).collect(),
            })
    }

    /// A JSON object, for an output declared `type: object` without `properties`.
    pub type JsonObject = ::serde_json::Map<::std::string::String, ::serde_json::Value>;

    /// A result's JSON object being taken apart into a generated output struct: fields
    /// not declared are ignored, and an optional one may be absent or `null`. `null` as a
    /// whole reads as an empty object (a result without `details`).
    pub struct Record<E> {
        map: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
        error: ::core::marker::PhantomData<E>,
    }

    impl<E: ::serde::de::Error> Record<E> {
        /// Reads the object.
        pub fn new<'de, D: ::serde::Deserializer<'de, Error = E>>(d: D) -> Result<Self, E> {
            use ::serde::Deserialize as _;
            let map = match ::serde_json::Value::deserialize(d)? {
                ::serde_json::Value::Object(m) => m,
                ::serde_json::Value::Null => ::serde_json::Map::new(),
                other => {
                    return Err(E::invalid_type(unexpected(&other), &"an object"));
                }
            };
            Ok(Record {
                map,
                error: ::core::marker::PhantomData,
            })
        }

        /// A field the tool must return.
        pub fn required<T: ::serde::de::DeserializeOwned>(
            &mut self,
            name: &'static str,
        ) -> Result<T, E> {
            match self.map.remove(name) {
                Some(v) => ::serde_json::from_value(v)
                    .map_err(|e| E::custom(format_args!("`{name}`: {e}"))),
                None => Err(E::missing_field(name)),
            }
        }

        /// An optional field; `null` counts as absent.
        pub fn optional<T: ::serde::de::DeserializeOwned>(
            &mut self,
            name: &'static str,
        ) -> Result<Option<T>, E> {
            match self.map.remove(name) {
                None | Some(::serde_json::Value::Null) => Ok(None),
                Some(v) => ::serde_json::from_value(v)
                    .map(Some)
                    .map_err(|e| E::custom(format_args!("`{name}`: {e}"))),
            }
        }
    }

    fn unexpected(v: &::serde_json::Value) -> ::serde::de::Unexpected<'_> {
        use ::serde::de::Unexpected;
        match v {
            ::serde_json::Value::Null => Unexpected::Unit,
            ::serde_json::Value::Bool(b) => Unexpected::Bool(*b),
            ::serde_json::Value::Number(_) => Unexpected::Other("a number"),
            ::serde_json::Value::String(s) => Unexpected::Str(s),
            ::serde_json::Value::Array(_) => Unexpected::Seq,
            ::serde_json::Value::Object(_) => Unexpected::Map,
        }
    }

    /// A model's JSON object being taken apart into a generated `Params` struct: what a
    /// serde derive with `deny_unknown_fields` would do, written once here instead of once
    /// per tool in every user's crate.
    pub struct Fields<E> {
        map: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
        error: ::core::marker::PhantomData<E>,
    }

    impl<E: ::serde::de::Error> Fields<E> {
        /// Reads the object and rejects any field not in `known`.
        pub fn new<'de, D: ::serde::Deserializer<'de, Error = E>>(
            d: D,
            known: &'static [&'static str],
        ) -> Result<Self, E> {
            use ::serde::Deserialize as _;
            let map = match ::serde_json::Value::deserialize(d)? {
                ::serde_json::Value::Object(m) => m,
                other => {
                    return Err(E::custom(format_args!(
                        "expected an object of named arguments, found {}",
                        match other {
                            ::serde_json::Value::Null => "null",
                            ::serde_json::Value::Bool(_) => "a boolean",
                            ::serde_json::Value::Number(_) => "a number",
                            ::serde_json::Value::String(_) => "a string",
                            ::serde_json::Value::Array(_) => "an array",
                            ::serde_json::Value::Object(_) => "an object",
                        }
                    )));
                }
            };
            if let Some(k) = map.keys().find(|k| !known.contains(&k.as_str())) {
                return Err(E::unknown_field(k, known));
            }
            Ok(Fields {
                map,
                error: ::core::marker::PhantomData,
            })
        }

        /// A field the model must send.
        pub fn required<T: ::serde::de::DeserializeOwned>(
            &mut self,
            name: &'static str,
        ) -> Result<T, E> {
            match self.map.remove(name) {
                Some(v) => value(name, v, false),
                None => Err(E::missing_field(name)),
            }
        }

        /// An optional field; `null` counts as absent.
        pub fn optional<T: ::serde::de::DeserializeOwned>(
            &mut self,
            name: &'static str,
        ) -> Result<Option<T>, E> {
            match self.map.remove(name) {
                None | Some(::serde_json::Value::Null) => Ok(None),
                Some(v) => value(name, v, false).map(Some),
            }
        }

        /// A field with a default; `null` counts as absent (OpenAI strict mode sends it).
        pub fn or_default<T: ::serde::de::DeserializeOwned>(
            &mut self,
            name: &'static str,
            default: fn() -> T,
        ) -> Result<T, E> {
            match self.map.remove(name) {
                None | Some(::serde_json::Value::Null) => Ok(default()),
                Some(v) => value(name, v, false),
            }
        }

        /// [`required`](Self::required) for a sensitive input: errors never echo the value.
        pub fn required_secret<T: ::serde::de::DeserializeOwned>(
            &mut self,
            name: &'static str,
        ) -> Result<T, E> {
            match self.map.remove(name) {
                Some(v) => value(name, v, true),
                None => Err(E::missing_field(name)),
            }
        }

        /// [`optional`](Self::optional) for a sensitive input: errors never echo the value.
        pub fn optional_secret<T: ::serde::de::DeserializeOwned>(
            &mut self,
            name: &'static str,
        ) -> Result<Option<T>, E> {
            match self.map.remove(name) {
                None | Some(::serde_json::Value::Null) => Ok(None),
                Some(v) => value(name, v, true).map(Some),
            }
        }
    }

    /// One field's value, tolerating the quirk the runtime's validation tolerates (a number
    /// or boolean sent as a string; enums take numbers in `deserialize_enum`), so the typed
    /// path accepts what `Runtime::call` accepts.
    fn value<T: ::serde::de::DeserializeOwned, E: ::serde::de::Error>(
        name: &str,
        v: ::serde_json::Value,
        sensitive: bool,
    ) -> Result<T, E> {
        use ::serde_json::Value;
        // The same string rules as `Runtime::call`'s validation.
        let retry = match &v {
            Value::String(s) => crate::args::parse_bool(s)
                .map(Value::Bool)
                .or_else(|| crate::args::parse_number(s).map(Value::Number)),
            _ => None,
        };
        let first = match ::serde_json::from_value::<T>(v) {
            Ok(t) => return Ok(t),
            Err(e) => e,
        };
        // Only for a field that takes no string at all (a number, a boolean). An enum that
        // refused the string refused it by its values, and the runtime does not coerce
        // `" 2"` or `"True"` into an enum value either.
        if first.to_string().starts_with("invalid type: string")
            && let Some(Ok(t)) = retry.map(::serde_json::from_value::<T>)
        {
            return Ok(t);
        }
        if sensitive {
            // serde's message quotes what it received: a secret must not reach error text.
            Err(E::custom(format_args!(
                "`{name}`: invalid value (sensitive, not shown)"
            )))
        } else {
            Err(E::custom(format_args!("`{name}`: {first}")))
        }
    }

    /// `Deserialize` for generated enums: a string that is one of the wire spellings.
    pub fn deserialize_enum<'de, D: ::serde::Deserializer<'de>, T: Copy>(
        d: D,
        all: &'static [T],
        wire: fn(T) -> &'static str,
    ) -> Result<T, D::Error> {
        struct V<T: 'static> {
            all: &'static [T],
            wire: fn(T) -> &'static str,
        }
        impl<T: Copy> ::serde::de::Visitor<'_> for V<T> {
            type Value = T;
            fn expecting(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str("one of ")?;
                let names: Vec<String> = self
                    .all
                    .iter()
                    .map(|v| format!("`{}`", (self.wire)(*v)))
                    .collect();
                f.write_str(&names.join(", "))
            }
            // A model sending `1` for the enum value "1": accepted, as `Runtime::call` does.
            fn visit_u64<E: ::serde::de::Error>(self, v: u64) -> Result<T, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_i64<E: ::serde::de::Error>(self, v: i64) -> Result<T, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_f64<E: ::serde::de::Error>(self, v: f64) -> Result<T, E> {
                // JSON's spelling, as the runtime compares it: `1.0` stays "1.0", not "1".
                match ::serde_json::Number::from_f64(v) {
                    Some(n) => self.visit_str(&n.to_string()),
                    None => self.visit_str(&v.to_string()),
                }
            }
            fn visit_bool<E: ::serde::de::Error>(self, v: bool) -> Result<T, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_str<E: ::serde::de::Error>(self, s: &str) -> Result<T, E> {
                self.all
                    .iter()
                    .copied()
                    .find(|v| (self.wire)(*v) == s)
                    .ok_or_else(|| {
                        let names: Vec<String> = self
                            .all
                            .iter()
                            .map(|v| format!("`{}`", (self.wire)(*v)))
                            .collect();
                        E::custom(format_args!(
                            "unknown variant `{s}`, expected one of {}",
                            names.join(", ")
                        ))
                    })
            }
        }
        // `any`, not `str`: a self-describing format hands numbers to `visit_u64` & co.
        d.deserialize_any(V { all, wire })
    }

    impl ::core::fmt::Display for ParseEnumError {
        fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
            write!(
                f,
                "`{}` is not a valid value of `{}`; expected one of: {}",
                self.found,
                self.input,
                self.expected.join(", ")
            )
        }
    }

    impl ::std::error::Error for ParseEnumError {}

    /// Serialises a whole `f64` as a JSON integer (`10`, not `10.0`): a Python tool doing
    /// `range(limit)` needs an int, and JavaScript does not care.
    pub fn ser_number<S: ::serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        const MAX_EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
        if v.fract() == 0.0 && v.abs() <= MAX_EXACT {
            s.serialize_i64(*v as i64)
        } else {
            s.serialize_f64(*v)
        }
    }

    /// [`ser_number`] for optional numbers.
    pub fn ser_opt_number<S: ::serde::Serializer>(
        v: &Option<f64>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => ser_number(v, s),
            None => s.serialize_none(),
        }
    }

    /// Deserialises a tool's params from a model's JSON args. The arguments as a whole are
    /// read by the rule `Runtime::call` uses (`args::root_object`): `null`, `""`
    /// and a JSON string holding an object are accepted too.
    pub fn params_from_value<T: ::serde::de::DeserializeOwned>(
        tool: &'static str,
        args: ::serde_json::Value,
    ) -> ::core::result::Result<T, CallError> {
        ::serde_json::from_value(root_value(tool, args)?).map_err(|e| bad_args(tool, e))
    }

    // Kept out of the generic function above so that each tool's instantiation stays small.
    fn root_value(
        tool: &'static str,
        args: ::serde_json::Value,
    ) -> ::core::result::Result<::serde_json::Value, CallError> {
        match crate::args::root_object(args) {
            Ok(map) => Ok(::serde_json::Value::Object(map)),
            Err(received) => Err(CallError::BadArgs {
                tool,
                message: format!("expected an object of named arguments, received {received}"),
            }),
        }
    }

    fn bad_args(tool: &'static str, e: ::serde_json::Error) -> CallError {
        CallError::BadArgs {
            tool,
            message: e.to_string(),
        }
    }

    /// [`params_from_value`] for a generated tool.
    pub fn params<T: Tool>(
        args: ::serde_json::Value,
    ) -> ::core::result::Result<T::Params, CallError> {
        params_from_value(T::NAME, args)
    }

    /// The error for a call of a tool that was not compiled in.
    pub fn unknown_tool<T>(
        name: &str,
        known: &'static [&'static str],
    ) -> ::core::result::Result<T, CallError> {
        Err(CallError::UnknownTool {
            name: name.to_owned(),
            known,
        })
    }

    /// The future generated `ToolCall::call` returns.
    pub type BoxFuture<'a, T> =
        ::core::pin::Pin<::std::boxed::Box<dyn ::core::future::Future<Output = T> + Send + 'a>>;

    /// One arm of generated `ToolCall::call`: [`Runtime::call_typed`](crate::Runtime::call_typed).
    pub fn call_typed<'a, T: Tool + 'a>(
        runtime: &'a crate::Runtime,
        params: T::Params,
        opts: crate::CallOptions,
    ) -> BoxFuture<'a, crate::ToolResult> {
        ::std::boxed::Box::pin(runtime.call_typed::<T>(params, opts))
    }

    /// Generated `ToolCall::parse`: the runtime's validator first (so both paths answer a
    /// model with the same text), then the generated types on the validated params.
    pub fn parse_call<T>(
        runtime: &crate::Runtime,
        name: &str,
        args: ::serde_json::Value,
        from_call: fn(&str, ::serde_json::Value) -> ::core::result::Result<T, CallError>,
    ) -> ::core::result::Result<T, crate::ToolResult> {
        let valid = runtime.check(name, args)?;
        let params = ::serde_json::Value::Object(valid.into_params());
        // Only when the loaded TOOL.md differs from the compiled one (`call_typed`'s drift
        // check names that case) or the program was compiled without this tool.
        from_call(name, params).map_err(|e| {
            crate::ToolResult::stopped(crate::StopReason::ContractDrift, e.to_string())
        })
    }

    /// A generated params value as the JSON a tool receives.
    pub fn to_args<T: ::serde::Serialize>(params: &T) -> ::serde_json::Value {
        // Params hold strings, numbers, booleans and enums only: serialising cannot fail.
        ::serde_json::to_value(params).unwrap_or_default()
    }
}

#[cfg(test)]
mod private_tests {
    use super::__private::{Fields, deserialize_enum};
    use serde_json::{Value, json};

    type E = serde_json::Error;

    fn fields(v: Value) -> Fields<E> {
        Fields::new(v, &["n", "b", "s", "k"]).unwrap()
    }

    #[test]
    fn fields_tolerate_numbers_and_booleans_sent_as_strings() {
        let mut f = fields(json!({"n": "5", "b": "true", "s": "5"}));
        assert_eq!(f.required::<f64>("n").unwrap(), 5.0);
        assert!(f.required::<bool>("b").unwrap());
        assert_eq!(f.required::<String>("s").unwrap(), "5");
        let mut f = fields(json!({"s": 5}));
        let e = f.required::<String>("s").unwrap_err().to_string();
        assert!(e.contains("`s`: invalid type: integer `5`"), "{e}");
    }

    #[test]
    fn fields_report_unknown_and_missing() {
        let e = Fields::<E>::new(json!({"x": 1}), &["n"])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("unknown field `x`, expected `n`"), "{e}");
        let e = fields(json!({}))
            .required::<f64>("n")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "missing field `n`");
        let e = Fields::<E>::new(json!([1]), &["n"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("expected an object of named arguments, found an array"),
            "{e}"
        );
    }

    #[test]
    fn secret_fields_never_echo_the_value() {
        let secret = "sk-live-7f3a9c2e-distinctive";
        let mut f = fields(json!({"n": secret, "k": secret}));
        let e = f.required_secret::<f64>("n").unwrap_err().to_string();
        assert!(!e.contains(secret), "{e}");
        assert!(e.contains("`n`") && e.contains("sensitive"), "{e}");
        let e = f.required::<f64>("k").unwrap_err().to_string();
        assert!(e.contains(secret), "the non-secret path does show it: {e}");
    }

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Q {
        One,
        Yes,
    }
    const ALL: &[Q] = &[Q::One, Q::Yes];
    fn wire(q: Q) -> &'static str {
        match q {
            Q::One => "1",
            Q::Yes => "true",
        }
    }

    #[test]
    fn enums_accept_their_values_sent_as_numbers_or_booleans() {
        assert_eq!(deserialize_enum(json!("1"), ALL, wire).unwrap(), Q::One);
        assert_eq!(deserialize_enum(json!(1), ALL, wire).unwrap(), Q::One);
        assert_eq!(deserialize_enum(json!(true), ALL, wire).unwrap(), Q::Yes);
        let e = deserialize_enum(json!("2"), ALL, wire)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "unknown variant `2`, expected one of `1`, `true`");
    }
}
