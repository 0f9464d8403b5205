// Items generated code refers to (`toolbind::__private`). Not a public API: it changes
// without notice; `__bindings_version!` stops bindings from another release.

pub use ::serde;
pub use ::serde_json;

pub use crate::tool::{CallError, CompiledTool, Language};
#[cfg(feature = "mcp")]
pub use crate::tool::{CompiledMcpTool, McpTool};
pub use crate::{Secret, Tool};

mod args;
mod call;
mod decode;
// Not behind `mcp`: without it a server module stops at `__mcp_bindings!`'s one error.
mod snapshot;

pub use args::*;
pub use call::*;
pub use decode::*;
pub use snapshot::{McpSnapshot, mcp_snapshot};

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
