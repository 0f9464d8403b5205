//! A tool's inputs: their types, enum values and constraints, and the walk over the
//! objects and arrays nested in them.

use super::*;

/// The type of an input: what TOOL.md spells (`string`, `number`, `integer`, `boolean`,
/// `enum`, `object`, `array`), and what other tool sources (an MCP server's JSON Schemas)
/// also need: maps, constants and untyped values.
///
/// Exhaustive on purpose: code generated for a tool matches on it, and a new type changes
/// what every binding holds. What a type holds (enum values, object properties, array
/// items, a map's values, the constant) is on the [`Input`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InputType {
    /// `type: string`: a JSON string.
    String,
    /// `type: number`: a JSON number (an `f64` in Rust).
    Number,
    /// `type: integer`: a JSON number without a fraction (an `i64` in Rust).
    Integer,
    /// `type: boolean`: `true` or `false`.
    Boolean,
    /// `type: enum`: one of the input's [`values`](Input::values), sent as a string.
    Enum,
    /// `type: object`: a JSON object with the fields [`properties`](Input::properties)
    /// (no others).
    Object,
    /// `type: array`: a JSON array whose every element is [`items`](Input::items).
    Array,
    /// A JSON object with any keys, every value [`items`](Input::items) (JSON Schema's
    /// `additionalProperties` with a schema; a `BTreeMap<String, T>` in Rust). Not
    /// spelled in TOOL.md.
    Map,
    /// Exactly the JSON value [`constant`](Input::constant) (JSON Schema's `const`). Not
    /// spelled in TOOL.md.
    Const,
    /// Any JSON value (a schema without a type; a `serde_json::Value` in Rust). Not spelled
    /// in TOOL.md.
    Any,
}

impl InputType {
    /// Every input type.
    pub const ALL: [InputType; 10] = [
        InputType::String,
        InputType::Number,
        InputType::Integer,
        InputType::Boolean,
        InputType::Enum,
        InputType::Object,
        InputType::Array,
        InputType::Map,
        InputType::Const,
        InputType::Any,
    ];

    /// The types TOOL.md spells, in the order messages list them.
    pub const TOOL_MD: [InputType; 7] = [
        InputType::String,
        InputType::Number,
        InputType::Integer,
        InputType::Boolean,
        InputType::Enum,
        InputType::Object,
        InputType::Array,
    ];

    /// The name of the type (`string`, ..., `map`, `const`, `any`); TOOL.md's spelling for
    /// the types it has.
    pub const fn as_str(self) -> &'static str {
        match self {
            InputType::String => "string",
            InputType::Number => "number",
            InputType::Integer => "integer",
            InputType::Boolean => "boolean",
            InputType::Enum => "enum",
            InputType::Object => "object",
            InputType::Array => "array",
            InputType::Map => "map",
            InputType::Const => "const",
            InputType::Any => "any",
        }
    }

    /// The type a TOOL.md `type:` value names (one of [`TOOL_MD`](Self::TOOL_MD)).
    pub fn from_name(s: &str) -> Option<Self> {
        InputType::TOOL_MD.into_iter().find(|t| t.as_str() == s)
    }

    /// The JSON Schema `type` keyword for this input; `None` for a constant (its value
    /// decides) and for any value.
    pub const fn json_type(self) -> Option<&'static str> {
        match self {
            InputType::String | InputType::Enum => Some("string"),
            InputType::Number => Some("number"),
            InputType::Integer => Some("integer"),
            InputType::Boolean => Some("boolean"),
            InputType::Object | InputType::Map => Some("object"),
            InputType::Array => Some("array"),
            InputType::Const | InputType::Any => None,
        }
    }

    /// Whether a value of this type is one JSON scalar (string, number, boolean, enum).
    pub const fn is_scalar(self) -> bool {
        matches!(
            self,
            InputType::String
                | InputType::Number
                | InputType::Integer
                | InputType::Boolean
                | InputType::Enum
        )
    }
}

impl fmt::Display for InputType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The most levels of nesting a tool's arguments may have, the arguments object being the
/// first: OpenAI's strict mode refuses deeper schemas.
pub const MAX_DEPTH: usize = 10;

/// One allowed value of an enum input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnumValue {
    /// Exactly as the model must send it.
    pub wire: String,
    /// The Rust variant name (`UpperCamelCase`, escaped where needed).
    pub rust: String,
}

/// One typed input of a tool, or a field of an object input (its
/// [`properties`](Input::properties)), or the element of an array or map input (its
/// [`items`](Input::items)).
///
/// ```yaml
/// inputs:
///   edits:
///     type: array
///     description: The edits, applied in order.
///     min_items: 1
///     items:
///       type: object
///       properties:
///         old_text:
///           type: string
///           description: Text to replace.
///         new_text:
///           type: string
///           description: The replacement.
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Input {
    /// The parameter name as the model sends it; empty for an array's or map's `items`.
    pub name: String,
    /// The Rust field name (`snake_case`, a raw identifier or escaped where needed); empty
    /// for `items`.
    pub rust_name: String,
    /// The Rust type name of an enum or of an object with properties (`Mode` for `mode`,
    /// `Edit` for the items of `edits`, or its `title`; a numbered fallback when two would
    /// share one in the tool's module); empty otherwise.
    pub rust_type: String,
    /// The input's type (`type:`).
    pub ty: InputType,
    /// A display name for an object (`title:`); the Rust type is named after it.
    pub title: Option<String>,
    /// What the model reads about the input (`description:`); may be empty for `items`.
    pub description: String,
    /// `optional: true`: the model may leave the input out. Never set for `items`.
    pub optional: bool,
    /// `null` is a value of this input (a JSON Schema type list with `"null"`); an optional
    /// input takes `null` for "not given" whatever this says. Not spelled in TOOL.md.
    pub nullable: bool,
    /// `sensitive: true`: the value is a secret (for an object or array, all of it: every
    /// input inside a sensitive one is sensitive too); it is redacted from every text the
    /// runtime builds and wrapped in `Secret` in Rust.
    pub sensitive: bool,
    /// Allowed values, for [`InputType::Enum`] only.
    pub values: Vec<EnumValue>,
    /// The fields of an [`InputType::Object`], in TOOL.md order.
    pub properties: Vec<Input>,
    /// The element of an [`InputType::Array`], or the value of an [`InputType::Map`].
    pub items: Option<Box<Input>>,
    /// The value of an [`InputType::Const`].
    pub constant: Option<Value>,
    /// `minimum:`: the smallest number or integer allowed.
    pub minimum: Option<f64>,
    /// `maximum:`: the largest number or integer allowed.
    pub maximum: Option<f64>,
    /// `min_items:`: the fewest elements an array may have.
    pub min_items: Option<u64>,
    /// `max_items:`: the most elements an array may have.
    pub max_items: Option<u64>,
    /// The default, already type-checked (a number default keeps its JSON form: `10`, not
    /// `10.0`). A field's default applies only when the object holding it is given.
    pub default: Option<Value>,
    /// For an [`InputType::Any`] from a schema's union of primitive types
    /// (`{"type": ["boolean", "string"]}`, or an `anyOf` of them): those JSON types, in
    /// the schema's order, `null` left out (see `nullable`). Empty otherwise.
    pub json_types: Vec<String>,
    /// Where the input's key (for `items`, the `items` key) is in TOOL.md.
    pub pos: Pos,
    /// Keys of the input spec that toolbind does not use (`example:`, ...), as JSON, in
    /// file order. TOOL.md authors put metadata there; it is kept, not rejected.
    pub metadata: BTreeMap<String, Value>,
}

impl Input {
    /// An input of type `ty` with nothing else set: for code that builds a model from
    /// another source than TOOL.md (an MCP server's JSON Schema).
    pub fn new(name: impl Into<String>, ty: InputType) -> Self {
        Input {
            name: name.into(),
            rust_name: String::new(),
            rust_type: String::new(),
            ty,
            title: None,
            description: String::new(),
            optional: false,
            nullable: false,
            sensitive: false,
            values: Vec::new(),
            properties: Vec::new(),
            items: None,
            constant: None,
            minimum: None,
            maximum: None,
            min_items: None,
            max_items: None,
            default: None,
            json_types: Vec::new(),
            pos: Pos::NONE,
            metadata: BTreeMap::new(),
        }
    }

    /// Whether a model must send this input (not optional and no default).
    pub fn required(&self) -> bool {
        !self.optional && self.default.is_none()
    }

    /// The default as it may be shown: in schemas, prompts, docs and generated code. A
    /// sensitive input's default is applied by the runtime only, so this is `None` for it.
    pub fn public_default(&self) -> Option<&Value> {
        // An object's default holds its fields' values: a sensitive field's among them.
        if self.holds_sensitive() {
            None
        } else {
            self.default.as_ref()
        }
    }

    /// The Rust type name for an enum or object input (`Mode` for `mode`).
    pub fn enum_type_name(&self) -> String {
        if self.rust_type.is_empty() {
            crate::ident::type_name(&self.name)
        } else {
            self.rust_type.clone()
        }
    }

    /// The field named `name` (its wire name) of an object input.
    pub fn property(&self, name: &str) -> Option<&Input> {
        self.properties.iter().find(|p| p.name == name)
    }

    /// What an untyped input from a union takes, in words: `a boolean or a string`
    /// (`, or null` when nullable); `None` for any other input.
    pub fn union_text(&self) -> Option<String> {
        if self.ty != InputType::Any || self.json_types.is_empty() {
            return None;
        }
        let mut words: Vec<String> = self
            .json_types
            .iter()
            .map(|t| match t.as_str() {
                "integer" => "an integer".to_owned(),
                "object" | "array" => format!("an {t}"),
                t => format!("a {t}"),
            })
            .collect();
        if self.nullable {
            words.push("null".to_owned());
        }
        let last = words.pop().unwrap_or_default();
        Some(if words.is_empty() {
            last
        } else {
            format!("{} or {last}", words.join(", "))
        })
    }

    /// The constraints on the value, in words, for descriptions and messages: `from 1 to
    /// 10`, `at least 0`, `1–10 items`, `at most 5 items`; `None` when there are none.
    pub fn constraint_text(&self) -> Option<String> {
        let num = |f: f64| match whole(f) {
            Some(i) => i.to_string(),
            None => {
                serde_json::Number::from_f64(f).map_or_else(|| f.to_string(), |n| n.to_string())
            }
        };
        let range = match (self.minimum, self.maximum) {
            (Some(a), Some(b)) => Some(format!("from {} to {}", num(a), num(b))),
            (Some(a), None) => Some(format!("at least {}", num(a))),
            (None, Some(b)) => Some(format!("at most {}", num(b))),
            (None, None) => None,
        };
        let items = match (self.min_items, self.max_items) {
            (Some(a), Some(b)) if a == b => Some(format!("exactly {a} items")),
            (Some(a), Some(b)) => Some(format!("{a}\u{2013}{b} items")),
            (Some(a), None) => Some(format!("at least {a} items")),
            (None, Some(b)) => Some(format!("at most {b} items")),
            (None, None) => None,
        };
        match (range, items) {
            (Some(r), Some(i)) => Some(format!("{r}; {i}")),
            (r, i) => r.or(i),
        }
    }

    /// How many levels of nesting a value of this input has (1 for a scalar, 2 for an
    /// object of scalars or an array of them, ...).
    pub fn depth(&self) -> usize {
        1 + self
            .properties
            .iter()
            .map(Input::depth)
            .chain(self.items.as_deref().map(Input::depth))
            .max()
            .unwrap_or(0)
    }

    /// Calls `f` on this input and on every input nested in it (properties and items), an
    /// object before its fields.
    pub fn visit<'a>(&'a self, f: &mut dyn FnMut(&'a Input)) {
        f(self);
        for p in &self.properties {
            p.visit(f);
        }
        if let Some(items) = &self.items {
            items.visit(f);
        }
    }

    /// [`visit`](Self::visit) with mutable access.
    pub fn visit_mut(&mut self, f: &mut dyn FnMut(&mut Input)) {
        f(self);
        for p in &mut self.properties {
            p.visit_mut(f);
        }
        if let Some(items) = &mut self.items {
            items.visit_mut(f);
        }
    }

    /// Whether this input or anything nested in it is sensitive.
    pub fn holds_sensitive(&self) -> bool {
        self.sensitive
            || self.properties.iter().any(Input::holds_sensitive)
            || self.items.as_deref().is_some_and(Input::holds_sensitive)
    }

    pub(super) fn hash_into(&self, h: &mut Fnv) {
        h.write(self.name.as_bytes());
        h.write(self.ty.as_str().as_bytes());
        h.write(&[u8::from(self.optional), u8::from(self.sensitive)]);
        if self.nullable {
            h.write(b"\x09");
        }
        for v in &self.values {
            h.write(b"\x01");
            h.write(v.wire.as_bytes());
        }
        match (&self.default, self.holds_sensitive()) {
            // Generated code embeds the fingerprint: a secret default must not be
            // recoverable from it, so only its presence counts.
            (Some(_), true) => h.write(b"\x03"),
            (Some(d), false) => {
                h.write(b"\x02");
                h.write(d.to_string().as_bytes());
            }
            (None, _) => {}
        }
        if let Some(c) = &self.constant {
            h.write(b"\x04");
            h.write(c.to_string().as_bytes());
        }
        for (tag, bound) in [(b'\x05', self.minimum), (b'\x06', self.maximum)] {
            if let Some(b) = bound {
                h.write(&[tag]);
                h.write(&b.to_bits().to_le_bytes());
            }
        }
        for (tag, bound) in [(b'\x07', self.min_items), (b'\x08', self.max_items)] {
            if let Some(b) = bound {
                h.write(&[tag]);
                h.write(&b.to_le_bytes());
            }
        }
        for p in &self.properties {
            h.write(b"\x10");
            p.hash_into(h);
            h.write(b"\x11");
        }
        if let Some(items) = &self.items {
            h.write(b"\x12");
            items.hash_into(h);
            h.write(b"\x13");
        }
    }
}

/// `f` as an integer when it is a whole number an `f64` holds exactly (up to 2^53, which
/// takes in JavaScript's `Number.MAX_SAFE_INTEGER`, a common `maximum`): how a bound is
/// written in schemas and words (`9007199254740991`, not `9007199254740991.0`).
pub(crate) fn whole(f: f64) -> Option<i64> {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    (f.fract() == 0.0 && f.abs() <= EXACT).then_some(f as i64)
}
