//! Writing generated `Params` as JSON: the [`Arg`] conversions, compiled once per crate
//! rather than once per field type per tool.

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
