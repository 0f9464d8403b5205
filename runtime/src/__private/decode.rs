//! Reading generated types back: enums from their strings, a tool's `Output` record and
//! fields with the runtime's coercions, and the errors serde reports for them.

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
pub(super) fn coerced(v: &::serde_json::Value) -> Option<::serde_json::Value> {
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
