//! The live path: the agent loop against a real model, over HTTPS (reqwest + rustls).
//!
//! Only on request: `--model MODEL` (any OpenAI-compatible Chat Completions endpoint,
//! `OPENAI_BASE_URL` and `OPENAI_API_KEY`) or `--provider anthropic|gemini` (with
//! `ANTHROPIC_API_KEY` / `GEMINI_API_KEY`, and `ANTHROPIC_BASE_URL` / `GEMINI_BASE_URL` to
//! point elsewhere). An exported key alone never starts it.
//!
//! The loop is toolbind's provider layer end to end: definitions out, the model's turn
//! appended unchanged, its calls run as one concurrent batch, the results appended in the
//! provider's own format, until the model answers in text or a batch says `terminate`.

use std::time::Duration;

use serde_json::{Value, json};
use toolbind::Runtime;
use toolbind::batch::BatchOptions;
use toolbind::provider::Provider;

/// Where and how to reach the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Live {
    pub provider: Provider,
    pub base_url: String,
    /// Never printed.
    pub api_key: String,
    pub model: String,
    pub prompt: String,
    pub max_turns: usize,
}

/// The user message when `--prompt` is not given.
pub const DEFAULT_PROMPT: &str = "Add two items to my todo list: \"Summarise unread email from Alice\" and \"Read the release notes\". Then show me the list.";

fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

impl Live {
    /// The live configuration, or `None` for the scripted turn: only `--model` or
    /// `--provider` select the live path, whatever the environment holds.
    pub fn from_args(
        args: &[String],
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Live>, String> {
        let model = flag(args, "--model");
        let provider = flag(args, "--provider");
        if model.is_none() && provider.is_none() {
            return Ok(None);
        }
        let env_or = |name: &str, default: &str| {
            env(name)
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| default.to_owned())
        };
        let need_key = |name: &str| {
            env(name)
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("--provider needs {name} in the environment"))
        };
        let (provider, base_url, api_key, model) = match provider.as_deref() {
            None | Some("openai") => {
                let Some(model) = model else {
                    return Err("--provider openai needs --model MODEL".into());
                };
                (
                    Provider::OpenAiChat,
                    env_or("OPENAI_BASE_URL", "https://api.openai.com/v1"),
                    // A local OpenAI-compatible server may take no key.
                    env("OPENAI_API_KEY").unwrap_or_default(),
                    model,
                )
            }
            Some("anthropic") => (
                Provider::Anthropic,
                env_or("ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
                need_key("ANTHROPIC_API_KEY")?,
                model.unwrap_or_else(|| "claude-sonnet-4-5".into()),
            ),
            Some("gemini") => (
                Provider::Gemini,
                env_or(
                    "GEMINI_BASE_URL",
                    "https://generativelanguage.googleapis.com/v1beta",
                ),
                need_key("GEMINI_API_KEY")?,
                model.unwrap_or_else(|| "gemini-2.5-flash".into()),
            ),
            Some(other) => {
                return Err(format!(
                    "unknown provider `{other}`: expected openai, anthropic or gemini"
                ));
            }
        };
        let max_turns = match flag(args, "--max-turns") {
            Some(n) => n
                .parse()
                .map_err(|_| format!("--max-turns: `{n}` is not a number"))?,
            None => 8,
        };
        Ok(Some(Live {
            provider,
            base_url: base_url.trim_end_matches('/').to_owned(),
            api_key,
            model,
            prompt: flag(args, "--prompt").unwrap_or_else(|| DEFAULT_PROMPT.into()),
            max_turns,
        }))
    }

    fn request(
        &self,
        client: &reqwest::Client,
        system: &str,
        history: &[Value],
        tools: &Value,
    ) -> reqwest::RequestBuilder {
        match self.provider {
            Provider::Anthropic => client
                .post(format!("{}/v1/messages", self.base_url))
                .header("x-api-key", &self.api_key)
                .header("anthropic-version", "2023-06-01")
                .json(&json!({
                    "model": self.model,
                    "max_tokens": 4096,
                    "system": system,
                    "messages": history,
                    "tools": tools,
                })),
            Provider::Gemini => client
                .post(format!(
                    "{}/models/{}:generateContent",
                    self.base_url, self.model
                ))
                .header("x-goog-api-key", &self.api_key)
                .json(&json!({
                    "systemInstruction": {"parts": [{"text": system}]},
                    "contents": history,
                    "tools": tools,
                })),
            _ => {
                let mut messages = vec![json!({"role": "system", "content": system})];
                messages.extend(history.iter().cloned());
                let mut req = client
                    .post(format!("{}/chat/completions", self.base_url))
                    .json(&json!({"model": self.model, "messages": messages, "tools": tools}));
                if !self.api_key.is_empty() {
                    req = req.bearer_auth(&self.api_key);
                }
                req
            }
        }
    }

    fn user_message(&self) -> Value {
        match self.provider {
            Provider::Gemini => json!({"role": "user", "parts": [{"text": self.prompt}]}),
            _ => json!({"role": "user", "content": self.prompt}),
        }
    }
}

/// Plays the conversation; returns the model's final answer.
pub async fn run(
    runtime: &Runtime,
    live: &Live,
    system: &str,
) -> Result<String, Box<dyn std::error::Error>> {
    // reqwest's rustls takes the process's crypto provider: ring.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(300))
        .build()?;
    let p = live.provider;
    let tools = p.definitions(&runtime.tool_list(), false);
    let mut history = vec![live.user_message()];
    println!("user: {}", live.prompt);
    for turn in 1..=live.max_turns {
        let response = live
            .request(&client, system, &history, &tools)
            .send()
            .await?;
        let status = response.status();
        let body: Value = response.json().await?;
        if !status.is_success() {
            return Err(format!("the model's API answered {status}: {body}").into());
        }
        history.extend(p.model_turn(&body));
        let calls = p.tool_calls(&body);
        if calls.is_empty() {
            return Ok(p.text(&body).unwrap_or_default());
        }
        println!("\n-- turn {turn}: {} tool call(s)", calls.len());
        let batch = runtime.call_batch(calls, BatchOptions::new()).await;
        for a in &batch.results {
            // The name and id only: the model's arguments may hold a sensitive value.
            println!("> {}: {}", a.call.id, a.call.name);
            crate::print_result(&a.result);
        }
        history.extend(p.results(&batch));
        if batch.terminate() {
            return Ok("(a tool ended the conversation)".into());
        }
    }
    Err(format!("no answer after {} model turns", live.max_turns).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| (*a).to_owned()).collect()
    }

    fn keys(name: &str) -> Option<String> {
        Some(format!("{name}-value"))
    }

    #[test]
    fn an_exported_key_alone_plays_the_scripted_turn() {
        assert_eq!(Live::from_args(&args(&["--data", "d"]), keys), Ok(None));
    }

    #[test]
    fn flags_select_the_provider() {
        let l = Live::from_args(&args(&["--model", "m1"]), keys)
            .unwrap()
            .unwrap();
        assert_eq!(l.provider, Provider::OpenAiChat);
        assert_eq!(l.base_url, "OPENAI_BASE_URL-value");
        assert_eq!(l.model, "m1");
        let l = Live::from_args(&args(&["--provider", "gemini"]), keys)
            .unwrap()
            .unwrap();
        assert_eq!(l.provider, Provider::Gemini);
        assert_eq!(l.api_key, "GEMINI_API_KEY-value");
        let l = Live::from_args(&args(&["--provider", "anthropic"]), |_| None);
        assert_eq!(
            l,
            Err("--provider needs ANTHROPIC_API_KEY in the environment".into())
        );
        assert!(Live::from_args(&args(&["--provider", "openai"]), keys).is_err());
        assert!(Live::from_args(&args(&["--provider", "x"]), keys).is_err());
        let l = Live::from_args(&args(&["--model", "m"]), |_| None)
            .unwrap()
            .unwrap();
        assert_eq!(l.base_url, "https://api.openai.com/v1");
    }
}
