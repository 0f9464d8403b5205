//! [`Question`]: what a tool or an MCP server asks the host, parsed once at the edge it
//! comes in by (the harness's `ask` line, a server's request or `InputRequiredResult`);
//! inside, the runtime matches on the type, never on a string kind.

use serde_json::Value;

use super::{MAX_KEY_LEN, Refusal};

/// A question for the host, checked: the runtime's bounds hold before the host sees it.
#[derive(Debug, Clone)]
pub(crate) enum Question {
    /// `ctx.confirm(message)`: a yes or no.
    Confirm { message: String },
    /// `ctx.elicit(message, schema)`: a flat form (checked against what MCP allows).
    Elicit { message: String, schema: Value },
    /// `ctx.sample({messages, ...})`: a completion from the host's model.
    Sample { params: Value },
    /// `ctx.roots()`: the workspace roots.
    Roots,
}

impl Question {
    /// Its kind, as `ctx` names it: `confirm`, `elicit`, `sample` or `roots`.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Question::Confirm { .. } => "confirm",
            Question::Elicit { .. } => "elicit",
            Question::Sample { .. } => "sample",
            Question::Roots => "roots",
        }
    }

    /// A question of `kind` (as `ctx` names it) with its `params`: as the harness sent it, or
    /// as an MCP request reads.
    pub(crate) fn parse(kind: &str, params: Value) -> Result<Question, Refusal> {
        let text = |field: &str| params.get(field).and_then(Value::as_str).map(str::to_owned);
        let bad = |why: &str| Err(Refusal::BadQuestion(why.to_owned()));
        match kind {
            "confirm" => match text("message") {
                Some(message) => Ok(Question::Confirm { message }),
                None => bad("ctx.confirm(message) needs a message, a string"),
            },
            "elicit" => {
                let Some(message) = text("message") else {
                    return bad("ctx.elicit(message, schema) needs a message, a string");
                };
                let schema = params.get("schema").cloned().unwrap_or(Value::Null);
                super::form::flat_schema(&schema).map_err(Refusal::BadQuestion)?;
                Ok(Question::Elicit { message, schema })
            }
            "sample" if !params.get("messages").is_some_and(Value::is_array) => {
                bad("ctx.sample({messages, ...}) needs `messages`, an array")
            }
            "sample" => Ok(Question::Sample { params }),
            "roots" => Ok(Question::Roots),
            other => Err(Refusal::BadQuestion(format!(
                "unknown question `{}`: ctx has confirm, elicit, sample, roots and notify",
                other.chars().take(64).collect::<String>()
            ))),
        }
    }
}

/// Reads the key a tool gave question `kind` (`None` when it gave none): 1 to
/// [`MAX_KEY_LEN`] letters, digits, `_`, `-` or `.`, else the refusal the tool reads.
pub(crate) fn question_key(kind: &str, key: Option<Value>) -> Result<Option<String>, Refusal> {
    let key = match key {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(k)) => k,
        Some(other) => {
            return Err(Refusal::BadQuestion(format!(
                "ctx.{kind}: key must be a string, not {}",
                toolbind_codegen::mcp::json_kind(&other)
            )));
        }
    };
    let ok = !key.is_empty()
        && key.len() <= MAX_KEY_LEN
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok {
        Ok(Some(key))
    } else {
        Err(Refusal::BadQuestion(format!(
            "ctx.{kind}: key must be 1 to {MAX_KEY_LEN} letters, digits, `_`, `-` or `.` (got {} characters)",
            key.chars().count()
        )))
    }
}

/// The most tokens a sample may ask a model for.
pub const MAX_SAMPLE_TOKENS: u64 = 4096;

/// What of a sample's params goes on to a model: the messages, system prompt, model
/// preferences, temperature and stop sequences, and `maxTokens` (at most
/// [`MAX_SAMPLE_TOKENS`]); never `includeContext` (a conversation would come back to
/// whoever asked) nor tools to call.
pub fn sample_params(params: Value) -> Value {
    let mut out = serde_json::Map::new();
    for key in [
        "messages",
        "systemPrompt",
        "modelPreferences",
        "temperature",
        "stopSequences",
    ] {
        if let Some(v) = params.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    let tokens = params
        .get("maxTokens")
        .and_then(Value::as_u64)
        .unwrap_or(MAX_SAMPLE_TOKENS)
        .min(MAX_SAMPLE_TOKENS);
    out.insert("maxTokens".into(), Value::from(tokens));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_question_key_is_a_short_plain_name() {
        let key = |v: Value| question_key("elicit", Some(v));
        assert_eq!(
            key(json!("user_name")).unwrap().as_deref(),
            Some("user_name")
        );
        assert_eq!(question_key("elicit", None).unwrap(), None);
        assert_eq!(key(Value::Null).unwrap(), None);
        // Dots are allowed (a key is never a path); anything that could break a line, a
        // log or a map's rendering is not.
        assert_eq!(key(json!("..")).unwrap().as_deref(), Some(".."));
        for bad in [
            json!(""),
            json!("a\nb"),
            json!("a b"),
            json!("ключ"),
            json!("../etc"),
            json!("x".repeat(MAX_KEY_LEN + 1)),
        ] {
            let e = key(bad.clone()).unwrap_err().to_string();
            assert!(
                e.starts_with("ctx.elicit: key must be 1 to 64"),
                "{bad}: {e}"
            );
        }
        let e = key(json!(7)).unwrap_err().to_string();
        assert!(e.contains("must be a string, not a number"), "{e}");
        assert!(key(json!("x".repeat(MAX_KEY_LEN))).is_ok());
    }
}
