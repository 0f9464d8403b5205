// Items generated code refers to (`toolbind::__private`). Not a public API: it changes
// without notice; `__bindings_version!` stops bindings from another release.

pub use ::serde;
pub use ::serde_json;

pub use crate::tool::{CallError, CompiledTool, Language};
#[cfg(feature = "mcp")]
pub use crate::tool::{CompiledMcpTool, McpTool};
pub use crate::{Secret, Tool};

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
    let name_of = |i: usize| wire(all[i]);
    find_variant(input, s, all.len(), &name_of).map(|i| all[i])
}

/// [`parse_enum`] for any enum: not generic, so compiled once per crate.
fn find_variant(
    input: &'static str,
    s: &str,
    len: usize,
    name_of: &dyn Fn(usize) -> &'static str,
) -> Result<usize, ParseEnumError> {
    (0..len)
        .find(|i| name_of(*i) == s)
        .ok_or_else(|| ParseEnumError {
            input,
            found: s.to_owned(),
            expected: (0..len).map(name_of).collect(),
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
            Some(v) => output_value(name, v),
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
            Some(v) => output_value(name, v).map(Some),
        }
    }
}

/// One output field's value, as it is: a tool's details are not coerced the way a
/// model's arguments are.
fn output_value<T: ::serde::de::DeserializeOwned, E: ::serde::de::Error>(
    name: &str,
    v: ::serde_json::Value,
) -> Result<T, E> {
    ::serde_json::from_value(v).map_err(|e| E::custom(format_args!("`{name}`: {e}")))
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
            // A model's habit, tolerated as `Runtime::call` tolerates it: an object sent as
            // a JSON string.
            ::serde_json::Value::String(s)
                if let Ok(::serde_json::Value::Object(m)) = ::serde_json::from_str(&s) =>
            {
                m
            }
            other => {
                return Err(E::custom(format_args!(
                    "expected an object of named arguments, found {}",
                    crate::args::json_kind(&other)
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
        self.take_required(name, false)
    }

    /// An optional field; `null` counts as absent.
    pub fn optional<T: ::serde::de::DeserializeOwned>(
        &mut self,
        name: &'static str,
    ) -> Result<Option<T>, E> {
        self.take_optional(name, false)
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
        self.take_required(name, true)
    }

    /// [`optional`](Self::optional) for a sensitive input: errors never echo the value.
    pub fn optional_secret<T: ::serde::de::DeserializeOwned>(
        &mut self,
        name: &'static str,
    ) -> Result<Option<T>, E> {
        self.take_optional(name, true)
    }

    fn take_required<T: ::serde::de::DeserializeOwned>(
        &mut self,
        name: &'static str,
        secret: bool,
    ) -> Result<T, E> {
        match self.map.remove(name) {
            Some(v) => value(name, v, secret),
            None => Err(E::missing_field(name)),
        }
    }

    fn take_optional<T: ::serde::de::DeserializeOwned>(
        &mut self,
        name: &'static str,
        secret: bool,
    ) -> Result<Option<T>, E> {
        match self.map.remove(name) {
            None | Some(::serde_json::Value::Null) => Ok(None),
            Some(v) => value(name, v, secret).map(Some),
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
    // Only this closure depends on `T`; `value_with` is compiled once per crate.
    let mut out = None;
    value_with(name, v, sensitive, &mut |v, asked| {
        out = Some(T::deserialize(Hinted { value: v, asked })?);
        Ok(())
    })?;
    out.ok_or_else(|| E::custom("internal error: no value"))
}

fn value_with<E: ::serde::de::Error>(
    name: &str,
    v: ::serde_json::Value,
    sensitive: bool,
    read: &mut Read<'_>,
) -> Result<(), E> {
    let retry = coerced(&v);
    let asked = ::std::cell::Cell::new(Asked::Nothing);
    let first = match read(v, &asked) {
        Ok(()) => return Ok(()),
        Err(e) => e,
    };
    // Only for a field that takes no string at all (a number, a boolean, a list), or an
    // integer field sent a float: what the field's type asked the deserializer for says
    // so. An enum (which asks for anything) refused a string by its values, and the
    // runtime does not coerce `" 2"` or `"True"` into an enum value either.
    if asked.get() == Asked::NoString
        && let Some(Ok(())) = retry.map(|v| read(v, &asked))
    {
        return Ok(());
    }
    Err(field_error(name, &first, sensitive))
}

/// Reads a field's value with a deserializer that notes what the field's type asked for.
type Read<'a> = dyn FnMut(::serde_json::Value, &::std::cell::Cell<Asked>) -> Result<(), ::serde_json::Error>
    + 'a;

/// What a field's type asked the deserializer for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Asked {
    Nothing,
    /// A boolean, a number or a sequence: a type that takes no string.
    NoString,
    /// Anything else (a string, an enum's "any", a map, a struct).
    Other,
}

/// `serde_json::Value` as a deserializer that notes what the type asked for (seeing
/// through `Option`), so a quirk is told from a refused value by the type, not by the
/// wording of serde_json's error.
struct Hinted<'a> {
    value: ::serde_json::Value,
    asked: &'a ::std::cell::Cell<Asked>,
}

macro_rules! hinted {
    ($asked:expr => $($method:ident),*) => {
        $(
            fn $method<V: ::serde::de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
                self.asked.set($asked);
                self.value.$method(visitor)
            }
        )*
    };
}

impl<'de> ::serde::Deserializer<'de> for Hinted<'_> {
    type Error = ::serde_json::Error;

    hinted!(Asked::NoString => deserialize_bool, deserialize_i8, deserialize_i16,
        deserialize_i32, deserialize_i64, deserialize_i128, deserialize_u8, deserialize_u16,
        deserialize_u32, deserialize_u64, deserialize_u128, deserialize_f32, deserialize_f64,
        deserialize_seq);
    hinted!(Asked::Other => deserialize_any, deserialize_char, deserialize_str,
        deserialize_string, deserialize_bytes, deserialize_byte_buf, deserialize_unit,
        deserialize_map, deserialize_identifier, deserialize_ignored_any);

    fn deserialize_option<V: ::serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self.value {
            ::serde_json::Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_tuple<V: ::serde::de::Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.asked.set(Asked::NoString);
        self.value.deserialize_tuple(len, visitor)
    }

    fn deserialize_unit_struct<V: ::serde::de::Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.asked.set(Asked::Other);
        self.value.deserialize_unit_struct(name, visitor)
    }

    fn deserialize_newtype_struct<V: ::serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        // What the inner type asks for is what counts.
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_tuple_struct<V: ::serde::de::Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.asked.set(Asked::NoString);
        self.value.deserialize_tuple_struct(name, len, visitor)
    }

    fn deserialize_struct<V: ::serde::de::Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.asked.set(Asked::Other);
        self.value.deserialize_struct(name, fields, visitor)
    }

    fn deserialize_enum<V: ::serde::de::Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.asked.set(Asked::Other);
        self.value.deserialize_enum(name, variants, visitor)
    }
}

/// The same rules as `Runtime::call`'s validation: a number, boolean or array sent as a
/// string, as its JSON value; a whole float (`5.0`) as the integer it is.
fn coerced(v: &::serde_json::Value) -> Option<::serde_json::Value> {
    use ::serde_json::Value;
    match v {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64()?;
            (f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0).then(|| Value::from(f as i64))
        }
        Value::String(s) => crate::args::parse_bool(s)
            .map(Value::Bool)
            .or_else(|| {
                // `"5.0"` for an integer: the number it names, as a whole one.
                let n = Value::Number(crate::args::parse_number(s)?);
                Some(coerced(&n).unwrap_or(n))
            })
            .or_else(|| crate::args::parse_array(s).map(Value::Array)),
        _ => None,
    }
}

fn field_error<E: ::serde::de::Error>(
    name: &str,
    first: &::serde_json::Error,
    sensitive: bool,
) -> E {
    if sensitive {
        // serde's message quotes what it received: a secret must not reach error text.
        E::custom(format_args!(
            "`{name}`: invalid value (sensitive, not shown)"
        ))
    } else {
        E::custom(format_args!("`{name}`: {first}"))
    }
}

/// `Deserialize` for generated enums: a string that is one of the wire spellings.
///
/// Only this thin wrapper is instantiated per enum; the visitor, and serde's
/// `deserialize_any` behind it, depend on the deserializer alone, so a crate with
/// hundreds of enums compiles that machinery once, not once per enum.
pub fn deserialize_enum<'de, D: ::serde::Deserializer<'de>, T: Copy>(
    d: D,
    all: &'static [T],
    wire: fn(T) -> &'static str,
) -> Result<T, D::Error> {
    let name_of = |i: usize| wire(all[i]);
    deserialize_variant(d, all.len(), &name_of).map(|i| all[i])
}

/// The index of the variant whose wire spelling `d` holds.
fn deserialize_variant<'de, D: ::serde::Deserializer<'de>>(
    d: D,
    len: usize,
    name_of: &dyn Fn(usize) -> &'static str,
) -> Result<usize, D::Error> {
    struct V<'a> {
        len: usize,
        name_of: &'a dyn Fn(usize) -> &'static str,
    }
    impl V<'_> {
        fn expected(&self) -> String {
            let names: Vec<String> = (0..self.len)
                .map(|i| format!("`{}`", (self.name_of)(i)))
                .collect();
            names.join(", ")
        }
    }
    impl ::serde::de::Visitor<'_> for V<'_> {
        type Value = usize;
        fn expecting(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
            write!(f, "one of {}", self.expected())
        }
        // A model sending `1` for the enum value "1": accepted, as `Runtime::call` does.
        fn visit_u64<E: ::serde::de::Error>(self, v: u64) -> Result<usize, E> {
            self.visit_str(&v.to_string())
        }
        fn visit_i64<E: ::serde::de::Error>(self, v: i64) -> Result<usize, E> {
            self.visit_str(&v.to_string())
        }
        fn visit_f64<E: ::serde::de::Error>(self, v: f64) -> Result<usize, E> {
            // JSON's spelling, as the runtime compares it: `1.0` stays "1.0", not "1".
            match ::serde_json::Number::from_f64(v) {
                Some(n) => self.visit_str(&n.to_string()),
                None => self.visit_str(&v.to_string()),
            }
        }
        fn visit_bool<E: ::serde::de::Error>(self, v: bool) -> Result<usize, E> {
            self.visit_str(&v.to_string())
        }
        fn visit_str<E: ::serde::de::Error>(self, s: &str) -> Result<usize, E> {
            (0..self.len)
                .find(|i| (self.name_of)(*i) == s)
                .ok_or_else(|| {
                    E::custom(format_args!(
                        "unknown variant `{s}`, expected one of {}",
                        self.expected()
                    ))
                })
        }
    }
    // `any`, not `str`: a self-describing format hands numbers to `visit_u64` & co.
    d.deserialize_any(V { len, name_of })
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

/// `Serialize` for generated `Params`: each field becomes a JSON value through [`Arg`]
/// (not generic over the serializer), then one map is written in field order. A serde
/// derive would instantiate its machinery once per field type per tool; this is
/// compiled once per crate.
#[derive(Default)]
pub struct Args(::std::vec::Vec<(&'static str, ::serde_json::Value)>);

impl Args {
    /// No fields yet.
    pub fn new() -> Self {
        Args::default()
    }

    /// Adds the field `name`, unless it is an absent optional value.
    pub fn put<T: Arg + ?Sized>(&mut self, name: &'static str, value: &T) {
        if let Some(v) = value.arg() {
            self.0.push((name, v));
        }
    }

    /// Writes the fields as one map.
    pub fn serialize<S: ::serde::Serializer>(self, s: S) -> Result<S::Ok, S::Error> {
        use ::serde::ser::SerializeMap as _;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// What [`Arg::arg`] returns.
pub type ArgValue = Option<::serde_json::Value>;

/// A `Params` field as the JSON a tool receives; `None` leaves the field out.
pub trait Arg {
    /// The field's JSON value, or `None` for an absent optional value.
    fn arg(&self) -> Option<::serde_json::Value>;
}

impl Arg for ::std::string::String {
    fn arg(&self) -> Option<::serde_json::Value> {
        Some(::serde_json::Value::String(self.clone()))
    }
}

impl Arg for bool {
    fn arg(&self) -> Option<::serde_json::Value> {
        Some(::serde_json::Value::Bool(*self))
    }
}

/// A whole `f64` is a JSON integer (`10`, not `10.0`): a Python tool doing
/// `range(limit)` needs an int, and JavaScript does not care.
impl Arg for f64 {
    fn arg(&self) -> Option<::serde_json::Value> {
        const MAX_EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
        Some(if self.fract() == 0.0 && self.abs() <= MAX_EXACT {
            ::serde_json::Value::from(*self as i64)
        } else {
            ::serde_json::Value::from(*self)
        })
    }
}

impl Arg for i64 {
    fn arg(&self) -> Option<::serde_json::Value> {
        Some(::serde_json::Value::from(*self))
    }
}

impl Arg for ::serde_json::Value {
    fn arg(&self) -> Option<::serde_json::Value> {
        Some(self.clone())
    }
}

/// An element that is `None` (an array of nullable values) is `null`.
impl<T: Arg> Arg for ::std::vec::Vec<T> {
    fn arg(&self) -> Option<::serde_json::Value> {
        Some(::serde_json::Value::Array(
            self.iter()
                .map(|v| v.arg().unwrap_or(::serde_json::Value::Null))
                .collect(),
        ))
    }
}

impl<T: Arg> Arg for ::std::collections::BTreeMap<::std::string::String, T> {
    fn arg(&self) -> Option<::serde_json::Value> {
        Some(::serde_json::Value::Object(
            self.iter()
                .map(|(k, v)| (k.clone(), v.arg().unwrap_or(::serde_json::Value::Null)))
                .collect(),
        ))
    }
}

/// [`Arg`] for a generated struct nested in `Params`: its `Serialize` (through [`Args`]),
/// as JSON.
pub fn arg_of<T: ::serde::Serialize>(v: &T) -> ArgValue {
    // Such a struct holds what `Arg` gives, with string keys: serialising cannot fail.
    ::serde_json::to_value(v).ok()
}

/// A TOOL.md default of an object or array input, read from the JSON toolbind-codegen
/// wrote after checking it against the input.
pub fn json_default<T: ::serde::de::DeserializeOwned>(json: &str) -> T {
    match ::serde_json::from_str(json) {
        Ok(v) => v,
        Err(e) => panic!(
            "toolbind: a default checked by toolbind-codegen does not fit its type ({e}): {json}"
        ),
    }
}

impl<T: Arg> Arg for Option<T> {
    fn arg(&self) -> Option<::serde_json::Value> {
        self.as_ref().and_then(Arg::arg)
    }
}

impl<T: Arg> Arg for crate::Secret<T> {
    fn arg(&self) -> Option<::serde_json::Value> {
        self.expose().arg()
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

/// [`params_from_value`] for a generated tool, then the constraints types cannot hold
/// (`minimum`/`maximum`, `min_items`/`max_items`, at any depth), read from the tool's
/// schema: the typed path refuses what `Runtime::call` refuses.
pub fn params<T: Tool>(args: ::serde_json::Value) -> ::core::result::Result<T::Params, CallError> {
    let facts = schema_facts(T::SCHEMA);
    let args = if facts.nested {
        nested_quirks(&facts.schema, args)
    } else {
        args
    };
    let p: T::Params = params_from_value(T::NAME, args)?;
    if facts.constrained {
        // Params hold what `Arg` gives: serialising cannot fail.
        let v = ::serde_json::to_value(&p).unwrap_or_default();
        if let Some(message) = constraint_problem(&facts.schema, &v, "") {
            return Err(CallError::BadArgs {
                tool: T::NAME,
                message,
            });
        }
    }
    Ok(p)
}

/// Generated MCP `ToolCall::from_call`: the model's arguments are checked against the
/// server's own `inputSchema` first (the parts the generated types hold as
/// `serde_json::Value` too; a remote `$ref` is never fetched), then parsed into the params.
#[cfg(feature = "mcp")]
pub fn mcp_params<T: McpTool>(
    args: ::serde_json::Value,
) -> ::core::result::Result<T::Params, CallError> {
    let args = root_value(T::NAME, args)?;
    if let Some(message) = crate::mcp::schema_problem(T::INPUT_SCHEMA, &args) {
        return Err(CallError::BadArgs {
            tool: T::NAME,
            message,
        });
    }
    params_from_value(T::NAME, args)
}

/// What the typed path needs to know of a tool's portable schema, read once per program:
/// the schema, whether it nests (objects or arrays inside the arguments) and whether it
/// has constraints types cannot hold.
struct SchemaFacts {
    schema: ::serde_json::Value,
    nested: bool,
    constrained: bool,
}

fn schema_facts(schema: &'static str) -> ::std::sync::Arc<SchemaFacts> {
    use ::std::collections::HashMap;
    use ::std::sync::{Arc, Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<usize, Arc<SchemaFacts>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
    map.entry(schema.as_ptr() as usize)
        .or_insert_with(|| {
            Arc::new(SchemaFacts {
                schema: ::serde_json::from_str(schema).unwrap_or_default(),
                nested: schema.contains("\"items\"")
                    || schema.contains("\"additionalProperties\":{")
                    || schema.matches("\"properties\"").nth(1).is_some(),
                constrained: ["\"minimum\"", "\"maximum\"", "\"minItems\"", "\"maxItems\""]
                    .iter()
                    .any(|k| schema.contains(k)),
            })
        })
        .clone()
}

/// The quirks `Runtime::call` tolerates inside nested values (a number or boolean sent as
/// a string, a whole float for an integer, an array or object sent as a JSON string),
/// applied by the tool's schema before the typed fields read them; a flat tool's fields
/// handle their own.
fn nested_quirks(
    schema: &::serde_json::Value,
    mut args: ::serde_json::Value,
) -> ::serde_json::Value {
    if let ::serde_json::Value::String(s) = &args
        && let Ok(v @ ::serde_json::Value::Object(_)) = ::serde_json::from_str(s.trim())
    {
        args = v;
    }
    coerce(schema, &mut args);
    args
}

fn coerce(schema: &::serde_json::Value, v: &mut ::serde_json::Value) {
    use ::serde_json::Value;
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or(""),
        _ => "",
    };
    match (ty, &*v) {
        ("integer" | "number", Value::String(s)) => {
            if let Some(n) = crate::args::parse_number(s) {
                *v = Value::Number(n);
            }
        }
        ("boolean", Value::String(s)) => {
            if let Some(b) = crate::args::parse_bool(s) {
                *v = Value::Bool(b);
            }
        }
        ("array", Value::String(s)) => {
            if let Some(a) = crate::args::parse_array(s) {
                *v = Value::Array(a);
            }
        }
        ("object", Value::String(s)) if s.trim_start().starts_with('{') => {
            if let Ok(o @ Value::Object(_)) = ::serde_json::from_str(s.trim()) {
                *v = o;
            }
        }
        _ => {}
    }
    match v {
        Value::Number(n) if ty == "integer" && n.is_f64() => {
            if let Some(w) = coerced(&Value::Number(n.clone())) {
                *v = w;
            }
        }
        Value::Array(a) => {
            if let Some(items) = schema.get("items") {
                a.iter_mut().for_each(|e| coerce(items, e));
            }
        }
        Value::Object(m) => {
            let props = schema.get("properties");
            let values = schema.get("additionalProperties").filter(|a| a.is_object());
            for (k, e) in m.iter_mut() {
                if let Some(sub) = props.and_then(|p| p.get(k)).or(values) {
                    coerce(sub, e);
                }
            }
        }
        _ => {}
    }
}

/// The first value under `v` outside a `minimum`/`maximum`/`minItems`/`maxItems` of
/// `schema`, in words.
fn constraint_problem(
    schema: &::serde_json::Value,
    v: &::serde_json::Value,
    path: &str,
) -> Option<String> {
    use ::serde_json::Value;
    let bound = |k: &str| schema.get(k).and_then(Value::as_f64);
    match v {
        Value::Number(n) => {
            let f = n.as_f64()?;
            let low = bound("minimum").is_some_and(|m| f < m);
            let high = bound("maximum").is_some_and(|m| f > m);
            // The value is not shown: it may be a secret's.
            (low || high).then(|| format!("`{path}`: a number outside the allowed range"))
        }
        Value::Array(a) => {
            let n = a.len() as f64;
            if bound("minItems").is_some_and(|m| n < m) || bound("maxItems").is_some_and(|m| n > m)
            {
                return Some(format!(
                    "`{path}`: {} items is not an allowed number",
                    a.len()
                ));
            }
            let items = schema.get("items")?;
            a.iter()
                .enumerate()
                .find_map(|(i, e)| constraint_problem(items, e, &format!("{path}[{i}]")))
        }
        Value::Object(m) => {
            let props = schema.get("properties");
            let values = schema.get("additionalProperties").filter(|a| a.is_object());
            m.iter().find_map(|(k, e)| {
                let sub = props.and_then(|p| p.get(k)).or(values)?;
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                constraint_problem(sub, e, &p)
            })
        }
        _ => None,
    }
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

/// One arm of generated MCP `ToolCall::call`: [`Runtime::call_mcp`](crate::Runtime::call_mcp).
#[cfg(feature = "mcp")]
pub fn call_mcp<'a, T: McpTool + 'a>(
    runtime: &'a crate::Runtime,
    params: T::Params,
    opts: crate::CallOptions,
) -> BoxFuture<'a, crate::ToolResult> {
    ::std::boxed::Box::pin(runtime.call_mcp::<T>(params, opts))
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
    from_call(name, params)
        .map_err(|e| crate::ToolResult::stopped(crate::StopReason::ContractDrift, e.to_string()))
}

/// A generated params value as the JSON a tool receives.
pub fn to_args<T: ::serde::Serialize>(params: &T) -> ::serde_json::Value {
    // Params hold strings, numbers, booleans and enums only: serialising cannot fail.
    ::serde_json::to_value(params).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::{Fields, deserialize_enum};
    use serde_json::{Value, json};

    type E = serde_json::Error;

    fn fields(v: Value) -> Fields<E> {
        Fields::new(v, &["n", "b", "s", "k"]).unwrap()
    }

    #[test]
    fn an_integer_field_takes_a_whole_number_sent_as_a_float_or_a_string() {
        let mut f = fields(json!({"n": 5.0, "b": "7.0", "s": "1e2", "k": 2.5}));
        assert_eq!(f.required::<i64>("n").unwrap(), 5);
        assert_eq!(f.required::<i64>("b").unwrap(), 7);
        assert_eq!(f.required::<i64>("s").unwrap(), 100);
        assert!(f.required::<i64>("k").is_err());
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
