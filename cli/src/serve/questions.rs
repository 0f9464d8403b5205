//! The keys of questions that wait, by key, for their client's answer: a task's
//! `inputRequests` and an MCP 2026-07-28 call's round share one rule for naming them.

use serde_json::Value;
use toolbind::host::MAX_QUESTIONS;

/// The key of a new question where a call's questions wait by key (a task's
/// `inputRequests`, a 2026-07-28 call's round), after checking that `request` is one a
/// client can be asked there and that fewer than [`MAX_QUESTIONS`] are `open`: the tool's
/// `key` unless a question of that name is open, else the next free `input-N` (`unnamed`
/// counts them).
pub(crate) fn open_key(
    request: &Value,
    key: Option<String>,
    open: usize,
    is_open: impl Fn(&str) -> bool,
    unnamed: &mut u64,
) -> Result<String, String> {
    if serde_json::from_value::<rmcp::model::InputRequest>(request.clone()).is_err() {
        return Err(
            "the question is not one a client can be asked (an MCP elicitation, sample or roots request)".into(),
        );
    }
    if open >= MAX_QUESTIONS {
        return Err(format!(
            "at most {MAX_QUESTIONS} questions may be open at once"
        ));
    }
    match key {
        Some(key) if is_open(&key) => Err(format!("a question named `{key}` is already open")),
        Some(key) => Ok(key),
        None => loop {
            *unnamed += 1;
            let key = format!("input-{unnamed}");
            if !is_open(&key) {
                break Ok(key);
            }
        },
    }
}
