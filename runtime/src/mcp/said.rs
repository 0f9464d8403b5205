//! What the Streamable HTTP transport and the OAuth client share, below both: how errors
//! from the HTTP client and rmcp read in toolbind's messages (their causes in one line,
//! URLs without the user information or query that may hold a key), and the TLS setup.

/// An error and its sources, `: `-separated, each once.
pub(crate) fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    // rmcp's HTTP client error holds reqwest's as a field, not as its source.
    #[cfg(feature = "mcp-http")]
    if let Some(rmcp::transport::streamable_http_client::StreamableHttpError::Client(r)) =
        e.downcast_ref::<rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>>()
    {
        out = r.to_string();
        cur = std::error::Error::source(r);
    }
    while let Some(c) = cur {
        let t = c.to_string();
        if !out.contains(&t) {
            out.push_str(": ");
            out.push_str(&t);
        }
        cur = c.source();
    }
    out
}

/// `url` as messages show it: without user information or query, which may hold a key.
#[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
pub(crate) fn shown_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let rest = match rest.split_once('/') {
        Some((authority, path)) => format!(
            "{}/{path}",
            authority.rsplit_once('@').map_or(authority, |(_, h)| h)
        ),
        None => rest.rsplit_once('@').map_or(rest, |(_, h)| h).to_owned(),
    };
    if scheme.is_empty() {
        rest
    } else {
        format!("{scheme}://{rest}")
    }
}

/// `text` with every URL in it shown as [`shown_url`] shows it: an error of the HTTP
/// client quotes the URL it was given, query and user information included.
#[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
pub(crate) fn scrub_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        // The scheme: the letters before `://`.
        let start = rest[..i]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '+' || c == '-' || c == '.'))
            .map_or(0, |j| j + 1);
        let end = rest[i..]
            .find(|c: char| {
                c.is_whitespace() || matches!(c, ')' | '(' | '"' | '\'' | '`' | '<' | '>' | ',')
            })
            .map_or(rest.len(), |j| i + j);
        out.push_str(&rest[..start]);
        out.push_str(&shown_url(&rest[start..end]));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(feature = "mcp-http")]
/// rustls needs one crypto provider for the process; ring is the one built in. An
/// embedding program that installed its own keeps it. Before any reqwest client.
pub(crate) fn tls() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn urls_in_errors_are_scrubbed() {
        assert_eq!(
            super::scrub_urls(
                "error sending request for url (http://user:pw@127.0.0.1:9/mcp?key=SECRET): refused; see https://h/x?t=1"
            ),
            "error sending request for url (http://127.0.0.1:9/mcp): refused; see https://h/x"
        );
        assert_eq!(super::scrub_urls("no url here"), "no url here");
    }

    #[test]
    fn urls_are_shown_without_secrets() {
        use super::shown_url;
        assert_eq!(
            shown_url("https://user:pw@mcp.example.com/mcp?key=SECRET#x"),
            "https://mcp.example.com/mcp"
        );
        assert_eq!(
            shown_url("http://127.0.0.1:80/mcp"),
            "http://127.0.0.1:80/mcp"
        );
        assert_eq!(shown_url("https://k@h"), "https://h");
    }
}
