//! A tool's declared outputs: the typed `details` of its results.

use super::*;

/// The type of an output field (TOOL.md `outputs:`): the input types, plus `object` and
/// `array` so that structured results (a list of messages) can be declared.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum OutputType {
    /// `type: string`.
    String,
    /// `type: number` (an integer or a float).
    Number,
    /// `type: integer`: a number without a fraction (an `i64` in Rust).
    Integer,
    /// `type: boolean`.
    Boolean,
    /// `type: enum`: a string that is one of `values`.
    Enum {
        /// The allowed values, in TOOL.md order.
        values: Vec<EnumValue>,
        /// The generated Rust enum's name in the tool's `output` module.
        rust_type: String,
    },
    /// `type: object`: a JSON object with the fields `properties`; other fields may be
    /// present too. With no `properties`, any object.
    Object {
        /// The declared fields, in TOOL.md order.
        properties: Vec<OutputField>,
        /// The generated Rust struct's name in the tool's `output` module; empty for an
        /// object without `properties` (a map in Rust).
        rust_type: String,
    },
    /// `type: array`: a JSON array whose every element is `items`.
    Array {
        /// The element's spec (`items:`): its `name` is empty and it is never optional.
        items: Box<OutputField>,
    },
}

impl OutputType {
    /// Every type name TOOL.md accepts for an output, in the order messages list them.
    pub const NAMES: [&'static str; 7] = [
        "string", "number", "integer", "boolean", "enum", "object", "array",
    ];

    /// The spelling used in TOOL.md (`type: array`).
    pub const fn as_str(&self) -> &'static str {
        match self {
            OutputType::String => "string",
            OutputType::Number => "number",
            OutputType::Integer => "integer",
            OutputType::Boolean => "boolean",
            OutputType::Enum { .. } => "enum",
            OutputType::Object { .. } => "object",
            OutputType::Array { .. } => "array",
        }
    }

    /// The JSON Schema `type` keyword for this output (`string` for an enum).
    pub const fn json_type(&self) -> &'static str {
        match self {
            OutputType::String | OutputType::Enum { .. } => "string",
            OutputType::Number => "number",
            OutputType::Integer => "integer",
            OutputType::Boolean => "boolean",
            OutputType::Object { .. } => "object",
            OutputType::Array { .. } => "array",
        }
    }
}

impl fmt::Display for OutputType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One declared field of a tool's result `details` (TOOL.md `outputs:`, or an object's
/// `properties:`), or the element of an array (`items:`).
///
/// ```yaml
/// outputs:
///   status:
///     type: number
///     description: The HTTP status code.
///   messages:
///     type: array
///     description: The messages found.
///     items:
///       type: object
///       properties:
///         subject:
///           type: string
///           description: The subject line.
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct OutputField {
    /// The field's name in the JSON `details`; empty for an array's `items`.
    pub name: String,
    /// The Rust field name (`snake_case`, escaped where needed); empty for `items`.
    pub rust_name: String,
    /// What the field holds; empty when TOOL.md gives no description.
    pub description: String,
    /// The type, with what it holds (enum values, object properties, array items).
    pub ty: OutputType,
    /// `optional: true`: the field may be absent or `null`. Never set for `items`.
    pub optional: bool,
    /// Where the field's key (for `items`, the `items` key) is in TOOL.md.
    pub pos: Pos,
    /// Keys of the spec that toolbind does not use, as JSON (see [`Input::metadata`]).
    pub metadata: BTreeMap<String, Value>,
}
