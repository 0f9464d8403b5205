//! The `mcpServers` JSON that MCP hosts already use (`.mcp.json`, Claude Desktop's and
//! Cursor's config files), with `${VAR}` and `${VAR:-default}` expansion.
//!
//! ```json
//! {"mcpServers": {
//!   "fs":  {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
//!           "env": {"DEBUG": "${DEBUG:-0}"}},
//!   "api": {"type": "http", "url": "https://example.com/mcp",
//!           "headers": {"Authorization": "Bearer ${API_TOKEN}"}}
//! }}
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The largest config file read.
pub const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;

/// How to reach one MCP server.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerConfig {
    /// A server toolbind starts and speaks to over its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set in its environment, on top of the inherited ones.
        env: BTreeMap<String, String>,
        /// Its working folder (`cwd`), when set.
        cwd: Option<PathBuf>,
    },
    /// A server reached over Streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
        /// Headers sent with every request (an `Authorization` header among them).
        headers: BTreeMap<String, String>,
    },
}

impl ServerConfig {
    /// A stdio server: `command` with `args`, no extra environment.
    pub fn stdio(
        command: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        ServerConfig::Stdio {
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: BTreeMap::new(),
            cwd: None,
        }
    }

    /// A Streamable HTTP server at `url`, no headers.
    pub fn http(url: impl Into<String>) -> Self {
        ServerConfig::Http {
            url: url.into(),
            headers: BTreeMap::new(),
        }
    }
}

// Environment values and headers hold secrets (tokens, keys): Debug names them only.
impl fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerConfig::Stdio {
                command,
                args,
                env,
                cwd,
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &env.keys().collect::<Vec<_>>())
                .field("cwd", cwd)
                .finish(),
            ServerConfig::Http { url, headers } => f
                .debug_struct("Http")
                .field("url", url)
                .field("headers", &headers.keys().collect::<Vec<_>>())
                .finish(),
        }
    }
}

/// Why an `mcpServers` config could not be read. The message names the file, the server
/// and the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// Reads an `mcpServers` config file, expanding variables from the process environment.
pub fn read_config(file: &Path) -> Result<BTreeMap<String, ServerConfig>, ConfigError> {
    Ok(read_servers(file)?
        .into_iter()
        .map(|(name, (config, _))| (name, config))
        .collect())
}

/// [`read_config`], with each server's [`Extras`].
pub(crate) fn read_servers(
    file: &Path,
) -> Result<BTreeMap<String, (ServerConfig, Extras)>, ConfigError> {
    let text = read_text(file, MAX_CONFIG_BYTES, "the mcpServers config")?;
    parse_servers(&text, &file.display().to_string(), &|name| {
        std::env::var(name).ok()
    })
}

/// Parses an `mcpServers` config; `origin` names it in errors and `var` looks variables
/// up. Servers are returned by name. A relative `cwd` is made absolute against the current
/// directory when the config is parsed.
pub fn parse_config(
    text: &str,
    origin: &str,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<BTreeMap<String, ServerConfig>, ConfigError> {
    Ok(parse_servers(text, origin, var)?
        .into_iter()
        .map(|(name, (config, _))| (name, config))
        .collect())
}

/// What an `mcpServers` entry says for toolbind alone (other hosts ignore the keys):
/// `"prefix"`, put in front of each tool name ([`McpServer::prefix`](super::McpServer::prefix)),
/// and `"sensitive"`, input names redacted as secrets
/// ([`McpServer::sensitive`](super::McpServer::sensitive)).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Extras {
    pub(crate) prefix: Option<String>,
    pub(crate) sensitive: Vec<String>,
    /// `"oauth"`: how to sign in to an HTTP server that asks for OAuth.
    #[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
    pub(crate) oauth: Option<OAuthKeys>,
}

/// An entry's `"oauth"` object, spelt as Claude Code's `.mcp.json` spells it (`clientId`,
/// `callbackPort`), plus keys for toolbind that other hosts ignore: `scopes`,
/// `clientSecretEnvVar` / `clientSecretFile` (a secret is never written in the file),
/// `clientMetadataUrl` and `"grant": "client_credentials"`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
#[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
pub(crate) struct OAuthKeys {
    pub(crate) client_id: Option<String>,
    pub(crate) callback_port: Option<u16>,
    pub(crate) scopes: Option<Vec<String>>,
    pub(crate) client_secret_env: Option<String>,
    pub(crate) client_secret_file: Option<String>,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) client_credentials: bool,
}

/// [`parse_config`], with each server's [`Extras`].
pub(crate) fn parse_servers(
    text: &str,
    origin: &str,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<BTreeMap<String, (ServerConfig, Extras)>, ConfigError> {
    let err = |m: String| ConfigError(format!("{origin}: {m}"));
    let v: Value = serde_json::from_str(text).map_err(|e| err(format!("not valid JSON: {e}")))?;
    let servers = match v.get("mcpServers") {
        Some(Value::Object(m)) => m,
        Some(_) => return Err(err("`mcpServers` is not an object".into())),
        None => {
            return Err(err(
                "no `mcpServers` object: expected {\"mcpServers\": {\"<name>\": {\"command\": ...}}}"
                    .into(),
            ));
        }
    };
    let mut out = BTreeMap::new();
    for (name, s) in servers {
        let Value::Object(fields) = s else {
            return Err(ConfigError(format!(
                "{origin}: server `{name}`: is not an object"
            )));
        };
        let entry = Entry {
            origin,
            name,
            fields,
            var,
        };
        let config = entry.transport()?;
        let sensitive = entry.sensitive()?;
        let extras = Extras {
            prefix: entry.string("prefix")?,
            sensitive,
            oauth: entry.oauth()?,
        };
        out.insert(name.clone(), (config, extras));
    }
    Ok(out)
}

/// One `mcpServers` entry being read: its keys, and what errors about it say.
struct Entry<'a> {
    origin: &'a str,
    name: &'a str,
    fields: &'a serde_json::Map<String, Value>,
    var: &'a dyn Fn(&str) -> Option<String>,
}

impl Entry<'_> {
    fn err(&self, m: String) -> ConfigError {
        ConfigError(format!("{}: server `{}`: {m}", self.origin, self.name))
    }

    /// A string key, `${VAR}`s expanded.
    fn string(&self, key: &str) -> Result<Option<String>, ConfigError> {
        match self.fields.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(t)) => expand(t, self.var)
                .map(Some)
                .map_err(|m| self.err(format!("`{key}`: {m}"))),
            Some(_) => Err(self.err(format!("`{key}` is not a string"))),
        }
    }

    /// An object of strings (`env`, `headers`), `${VAR}`s expanded.
    fn strings(&self, key: &str) -> Result<BTreeMap<String, String>, ConfigError> {
        match self.fields.get(key) {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(m)) => m
                .iter()
                .map(|(k, v)| match v {
                    Value::String(t) => expand(t, self.var)
                        .map(|t| (k.clone(), t))
                        .map_err(|m| self.err(format!("`{key}.{k}`: {m}"))),
                    _ => Err(self.err(format!("`{key}.{k}` is not a string"))),
                })
                .collect(),
            Some(_) => Err(self.err(format!("`{key}` is not an object of strings"))),
        }
    }

    /// How the server is reached: `command` (stdio) or `url` (Streamable HTTP), as
    /// `type` says when it is there.
    fn transport(&self) -> Result<ServerConfig, ConfigError> {
        let ty = self.string("type")?;
        let command = self.string("command")?;
        let url = self.string("url")?;
        match (ty.as_deref(), command, url) {
            (Some("sse"), ..) => Err(self.err(
                "`\"type\": \"sse\"` is the deprecated HTTP+SSE transport, which toolbind does not speak: use the server's Streamable HTTP endpoint (`\"type\": \"http\"`, usually the same URL ending in `/mcp`)"
                    .into(),
            )),
            (_, Some(_), Some(_)) => Err(self.err(
                "has both `command` (a stdio server) and `url` (an HTTP server): keep the one that says how to reach it"
                    .into(),
            )),
            (None | Some("stdio"), Some(command), None) => self.stdio(command),
            (None | Some("http" | "streamable-http" | "streamableHttp"), None, Some(url)) => {
                self.http(url)
            }
            (Some(t @ ("stdio" | "http" | "streamable-http" | "streamableHttp")), None, None) => {
                let key = if t == "stdio" { "command" } else { "url" };
                Err(self.err(format!("is `\"type\": \"{t}\"` but has no `{key}`")))
            }
            (None, None, None) => Err(self.err(
                "has neither `command` (a stdio server) nor `url` (an HTTP server)".into(),
            )),
            (Some(t), ..) => Err(self.err(format!(
                "unknown `\"type\": \"{t}\"`: expected \"stdio\" or \"http\""
            ))),
        }
    }

    fn stdio(&self, command: String) -> Result<ServerConfig, ConfigError> {
        let args = match self.fields.get("args") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(t) => {
                        expand(t, self.var).map_err(|m| self.err(format!("`args[{i}]`: {m}")))
                    }
                    _ => Err(self.err(format!("`args[{i}]` is not a string"))),
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(self.err("`args` is not an array of strings".into())),
        };
        Ok(ServerConfig::Stdio {
            command,
            args,
            env: self.strings("env")?,
            // Resolved now, as every folder given to the runtime: the server runs jailed,
            // elsewhere.
            cwd: self
                .string("cwd")?
                .map(|c| crate::dirs::given(PathBuf::from(c))),
        })
    }

    fn http(&self, url: String) -> Result<ServerConfig, ConfigError> {
        let mut headers = self.strings("headers")?;
        let file = self.string("bearerTokenFile")?;
        let env = self.string("bearerTokenEnvVar")?;
        let source = match (&file, &env) {
            (Some(_), Some(_)) => {
                return Err(self.err(
                    "has both `bearerTokenFile` and `bearerTokenEnvVar`: keep the one the token is in"
                        .into(),
                ));
            }
            (Some(f), None) => Some(("bearerTokenFile", TokenSource::File(Path::new(f)))),
            (None, Some(n)) => Some(("bearerTokenEnvVar", TokenSource::Var(n))),
            (None, None) => None,
        };
        if let Some((key, source)) = source {
            add_bearer_token(&mut headers, source, self.var)
                .map_err(|e| self.err(format!("`{key}`: {e}")))?;
        }
        Ok(ServerConfig::Http { url, headers })
    }

    /// `"oauth"`: [`OAuthKeys`]. Keys other hosts add are ignored; a key toolbind reads
    /// with the wrong type is an error.
    fn oauth(&self) -> Result<Option<OAuthKeys>, ConfigError> {
        let m = match self.fields.get("oauth") {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Object(m)) => m,
            Some(_) => return Err(self.err("`oauth` is not an object".into())),
        };
        let text = |k: &str| -> Result<Option<String>, ConfigError> {
            match m.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(t)) => expand(t, self.var)
                    .map(Some)
                    .map_err(|e| self.err(format!("`oauth.{k}`: {e}"))),
                Some(_) => Err(self.err(format!("`oauth.{k}` is not a string"))),
            }
        };
        if m.contains_key("clientSecret") {
            return Err(self.err(
                "`oauth.clientSecret`: a secret is not kept in the config; use `clientSecretEnvVar` (a variable's name) or `clientSecretFile`".into(),
            ));
        }
        let callback_port = match m.get("callbackPort") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .and_then(|p| u16::try_from(p).ok())
                    .filter(|p| *p != 0)
                    .ok_or_else(|| {
                        self.err("`oauth.callbackPort` is not a port (1-65535)".into())
                    })?,
            ),
        };
        let scopes = match m.get("scopes") {
            None | Some(Value::Null) => None,
            Some(Value::String(t)) => Some(t.split_whitespace().map(str::to_owned).collect()),
            Some(Value::Array(a)) => Some(
                a.iter()
                    .map(|v| v.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| self.err("`oauth.scopes` is not an array of strings".into()))?,
            ),
            Some(_) => return Err(self.err("`oauth.scopes` is not an array of strings".into())),
        };
        let client_credentials = match text("grant")?.as_deref() {
            None | Some("authorization_code") => false,
            Some("client_credentials") => true,
            Some(g) => {
                return Err(self.err(format!(
                    "`oauth.grant` is `{g}`: toolbind runs `authorization_code` (a person signs in) or `client_credentials`"
                )));
            }
        };
        Ok(Some(OAuthKeys {
            client_id: text("clientId")?,
            callback_port,
            scopes,
            client_secret_env: text("clientSecretEnvVar")?,
            client_secret_file: text("clientSecretFile")?,
            client_metadata_url: text("clientMetadataUrl")?,
            client_credentials,
        }))
    }

    /// `"sensitive"`: input names redacted as secrets.
    fn sensitive(&self) -> Result<Vec<String>, ConfigError> {
        match self.fields.get("sensitive") {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(t) if !t.is_empty() => Ok(t.clone()),
                    _ => Err(self.err(format!(
                        "`sensitive[{i}]` is not an input name (a non-empty string)"
                    ))),
                })
                .collect(),
            Some(_) => {
                Err(self.err("`sensitive` is not an array of input names (`[\"api_key\"]`)".into()))
            }
        }
    }
}

/// The largest bearer token file read.
const MAX_TOKEN_BYTES: u64 = 64 * 1024;

/// Where a Streamable HTTP server's bearer token is.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum TokenSource<'a> {
    /// A file holding the token on one line ([`read_token_file`]).
    File(&'a Path),
    /// An environment variable, by name.
    Var(&'a str),
}

/// Adds `Authorization: Bearer <token>` to `headers`, the token read from `source`
/// (variables looked up through `var`). An unset or empty variable, an unreadable file,
/// or an `Authorization` header already there is an error, which never holds the token.
pub fn add_bearer_token(
    headers: &mut BTreeMap<String, String>,
    source: TokenSource<'_>,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<(), ConfigError> {
    let token = match source {
        TokenSource::File(f) => read_token_file(f)?,
        TokenSource::Var(name) => match var(name) {
            Some(t) if !t.trim().is_empty() => t.trim().to_owned(),
            _ => {
                return Err(ConfigError(format!(
                    "the environment variable `{name}` is not set or is empty"
                )));
            }
        },
    };
    if headers
        .keys()
        .any(|k| k.eq_ignore_ascii_case("authorization"))
    {
        return Err(ConfigError(
            "an `Authorization` header is given too: keep one of the two".into(),
        ));
    }
    headers.insert("Authorization".into(), format!("Bearer {token}"));
    Ok(())
}

/// Reads a bearer token from a file: its text without surrounding whitespace, which must
/// be neither empty nor more than one line. The error never holds the token.
pub fn read_token_file(path: &Path) -> Result<String, ConfigError> {
    let shown = path.display();
    // The one reader of secret files: a FIFO, a folder, a 200 MB file or another user's
    // file is an error here, at the config's load, without blocking or reading it.
    let file = crate::secret::read_secret_file(path, "the token file", MAX_TOKEN_BYTES)
        .map_err(|e| ConfigError(e.to_string()))?;
    if file.readable_by_others() {
        tracing::warn!("the token file {shown} is readable by other users (chmod 600 it)");
    }
    let text = std::str::from_utf8(file.bytes())
        .map_err(|_| ConfigError(format!("the token file {shown} is not UTF-8 text")))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(ConfigError(format!("the token file {shown} is empty")));
    }
    if token.contains(['\n', '\r']) {
        return Err(ConfigError(format!(
            "the token file {shown} holds more than one line: a bearer token is one line"
        )));
    }
    Ok(token.to_owned())
}

/// A regular file's UTF-8 text, at most `max` bytes; `what` names it in errors.
fn read_text(path: &Path, max: u64, what: &str) -> Result<String, ConfigError> {
    let shown = path.display();
    let len = std::fs::metadata(path)
        .map_err(|e| ConfigError(format!("cannot read {what} {shown}: {e}")))?
        .len();
    if len > max {
        return Err(ConfigError(format!(
            "{what} {shown} is {len} bytes, over the {max}-byte limit"
        )));
    }
    let bytes = toolbind_codegen::read_regular_file(path)
        .map_err(|e| ConfigError(format!("cannot read {what} {shown}: {e}")))?;
    String::from_utf8(bytes).map_err(|_| ConfigError(format!("{what} {shown} is not UTF-8 text")))
}

/// Expands `${VAR}` and `${VAR:-default}` in `s`; `$$` is not special. An unset variable
/// without a default is an error naming it.
fn expand(s: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("unclosed `${{` in {s:?}"));
        };
        let body = &after[..end];
        let (name, default) = match body.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (body, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("`${{{body}}}` is not a variable name"));
        }
        match (var(name), default) {
            (Some(v), _) if !(v.is_empty() && default.is_some()) => out.push_str(&v),
            (_, Some(d)) => out.push_str(d),
            (Some(v), None) => out.push_str(&v),
            (None, None) => {
                return Err(format!(
                    "the environment variable `{name}` is not set (set it, or give a default: `${{{name}:-value}}`)"
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    fn parse(text: &str) -> Result<BTreeMap<String, ServerConfig>, ConfigError> {
        parse_config(text, ".mcp.json", &vars)
    }

    #[test]
    fn a_relative_cwd_is_made_absolute_when_parsed() {
        let c = parse(r#"{"mcpServers": {"fs": {"command": "srv", "cwd": "data/work"}}}"#).unwrap();
        let ServerConfig::Stdio { cwd, .. } = &c["fs"] else {
            panic!("{c:?}")
        };
        let here = std::env::current_dir().unwrap();
        assert_eq!(cwd.as_deref(), Some(here.join("data/work").as_path()));
    }

    #[test]
    fn reads_both_kinds_and_expands() {
        let c = parse(
            r#"{"mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "pkg", "${HOME_DIR:-/tmp}"], "env": {"K": "${TOKEN}"}},
                "api": {"type": "http", "url": "http://x/mcp", "headers": {"Authorization": "Bearer ${TOKEN}", "E": "${EMPTY:-d}"}}
            }}"#,
        )
        .unwrap();
        let ServerConfig::Stdio {
            command, args, env, ..
        } = &c["fs"]
        else {
            panic!()
        };
        assert_eq!((command.as_str(), args[2].as_str()), ("npx", "/tmp"));
        assert_eq!(env["K"], "s3cret");
        let ServerConfig::Http { url, headers } = &c["api"] else {
            panic!()
        };
        assert_eq!(url, "http://x/mcp");
        assert_eq!(headers["Authorization"], "Bearer s3cret");
        assert_eq!(headers["E"], "d");
        // Secrets stay out of Debug.
        let debug = format!("{c:?}");
        assert!(!debug.contains("s3cret"), "{debug}");
    }

    #[test]
    fn bearer_tokens_come_from_a_variable_or_a_file() {
        let c = parse(
            r#"{"mcpServers": {"api": {"type": "http", "url": "http://x/mcp", "bearerTokenEnvVar": "TOKEN"}}}"#,
        )
        .unwrap();
        let ServerConfig::Http { headers, .. } = &c["api"] else {
            panic!()
        };
        assert_eq!(headers["Authorization"], "Bearer s3cret");

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "  t0ken\n").unwrap();
        let text = format!(
            r#"{{"mcpServers": {{"api": {{"url": "http://x/mcp", "bearerTokenFile": {:?}}}}}}}"#,
            file.display().to_string()
        );
        let c = parse(&text).unwrap();
        let ServerConfig::Http { headers, .. } = &c["api"] else {
            panic!()
        };
        assert_eq!(headers["Authorization"], "Bearer t0ken");
        assert!(!format!("{c:?}").contains("t0ken"));

        for (body, want) in [("", "is empty"), ("a\nb", "more than one line")] {
            std::fs::write(&file, body).unwrap();
            let e = parse(&text).unwrap_err().to_string();
            assert!(e.contains(want), "{want:?} not in {e}");
        }
    }

    #[test]
    fn toolbind_keys_are_read_beside_the_hosts_keys() {
        let servers = parse_servers(
            r#"{"mcpServers": {"fs": {"command": "x", "prefix": "${P:-fs_}", "sensitive": ["api_key", "pin"], "disabled": false}}}"#,
            "f.json",
            &vars,
        )
        .unwrap();
        let (config, extras) = &servers["fs"];
        assert!(matches!(config, ServerConfig::Stdio { .. }));
        assert_eq!(extras.prefix.as_deref(), Some("fs_"));
        assert_eq!(extras.sensitive, ["api_key", "pin"]);
        assert_eq!(extras.oauth, None);
        // Claude Code's `oauth` keys, and toolbind's beside them; other keys ignored.
        let servers = parse_servers(
            r#"{"mcpServers": {"gh": {"url": "https://x/mcp", "oauth": {"clientId": "Iv1.${P:-x}", "callbackPort": 8080, "scopes": "repo read:org", "clientSecretEnvVar": "GH_SECRET", "grant": "client_credentials", "somethingElse": true}}}}"#,
            "f.json",
            &vars,
        )
        .unwrap();
        let oauth = servers["gh"].1.oauth.clone().unwrap();
        assert_eq!(oauth.client_id.as_deref(), Some("Iv1.x"));
        assert_eq!(oauth.callback_port, Some(8080));
        assert_eq!(
            oauth.scopes.as_deref(),
            Some(&["repo".to_owned(), "read:org".to_owned()][..])
        );
        assert_eq!(oauth.client_secret_env.as_deref(), Some("GH_SECRET"));
        assert!(oauth.client_credentials);
        for (bad, says) in [
            (r#""sensitive": "api_key""#, "`sensitive` is not an array"),
            (r#""sensitive": [1]"#, "`sensitive[0]` is not an input name"),
            (r#""prefix": 3"#, "`prefix` is not a string"),
            (r#""oauth": "x""#, "`oauth` is not an object"),
            (r#""oauth": {"clientSecret": "s"}"#, "`clientSecretEnvVar`"),
            (
                r#""oauth": {"callbackPort": 70000}"#,
                "`oauth.callbackPort` is not a port",
            ),
            (
                r#""oauth": {"scopes": [1]}"#,
                "`oauth.scopes` is not an array",
            ),
            (
                r#""oauth": {"grant": "password"}"#,
                "`oauth.grant` is `password`",
            ),
        ] {
            let text = format!(r#"{{"mcpServers": {{"fs": {{"command": "x", {bad}}}}}}}"#);
            let e = parse_servers(&text, "f.json", &vars)
                .unwrap_err()
                .to_string();
            assert!(e.contains("server `fs`") && e.contains(says), "{e}");
        }
    }

    #[test]
    fn each_mistake_is_named() {
        for (text, want) in [
            (
                r#"{"mcpServers": {"a": {"command": "x", "env": {"K": "${NOPE}"}}}}"#,
                "server `a`: `env.K`: the environment variable `NOPE` is not set",
            ),
            (
                r#"{"mcpServers": {"a": {"type": "sse", "url": "http://x/sse"}}}"#,
                "deprecated HTTP+SSE",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "url": "http://x"}}}"#,
                "both `command`",
            ),
            (r#"{"mcpServers": {"a": {}}}"#, "neither `command`"),
            (
                r#"{"mcpServers": {"a": {"type": "ws", "url": "x"}}}"#,
                "unknown `\"type\": \"ws\"`",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "args": "y"}}}"#,
                "`args` is not an array",
            ),
            (r#"{"mcpServers": {"a": {"command": "${X"}}}"#, "unclosed"),
            (r#"{"servers": {}}"#, "no `mcpServers`"),
            (
                r#"{"mcpServers": {"a": {"url": "http://x", "bearerTokenEnvVar": "NOPE"}}}"#,
                "server `a`: `bearerTokenEnvVar`: the environment variable `NOPE` is not set",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "http://x", "bearerTokenEnvVar": "TOKEN", "bearerTokenFile": "f"}}}"#,
                "both `bearerTokenFile` and `bearerTokenEnvVar`",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "http://x", "bearerTokenEnvVar": "TOKEN", "headers": {"authorization": "x"}}}}"#,
                "`bearerTokenEnvVar`: an `Authorization` header is given too",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "http://x", "bearerTokenFile": "/nonexistent/token"}}}"#,
                "`bearerTokenFile`: cannot read the token file /nonexistent/token",
            ),
            ("{", "not valid JSON"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.starts_with(".mcp.json: "), "{e}");
            assert!(e.contains(want), "{want:?} not in {e}");
        }
    }

    /// `bearerTokenFile` goes through the one secret reader: a FIFO, a folder, a 200 MB
    /// file and another user's file are errors at the config's load, never a hang; a file
    /// others can read is still used.
    #[test]
    fn bearer_token_files_that_are_not_private_small_regular_files_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let config = |file: &Path| {
            format!(
                r#"{{"mcpServers": {{"api": {{"url": "http://x/mcp", "bearerTokenFile": {:?}}}}}}}"#,
                file.display().to_string()
            )
        };
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let big = dir.path().join("big");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(200 << 20)
            .unwrap();
        for (file, want) in [
            (&fifo, "is a FIFO (named pipe), not a regular file"),
            (&dir.path().to_owned(), "is a folder, not a regular file"),
            (&big, "is 209715200 bytes, over the 65536-byte limit"),
        ] {
            let e = parse(&config(file)).unwrap_err().to_string();
            assert!(e.contains("`bearerTokenFile`: the token file"), "{e}");
            assert!(e.contains(&file.display().to_string()), "{e}");
            assert!(e.contains(want), "{want:?} not in {e}");
        }

        let open = dir.path().join("open");
        std::fs::write(&open, "t0ken\n").unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
        let c = parse(&config(&open)).unwrap();
        let ServerConfig::Http { headers, .. } = &c["api"] else {
            panic!()
        };
        assert_eq!(headers["Authorization"], "Bearer t0ken");

        if nix::unistd::geteuid().is_root() {
            std::os::unix::fs::chown(&open, Some(65534), None).unwrap();
            let e = parse(&config(&open)).unwrap_err().to_string();
            assert!(e.contains("belongs to user 65534"), "{e}");
        } else {
            // Only root can give a file away; CI runs the suite as root.
            eprintln!("skipped the other-owner case: not root");
        }
    }
}
