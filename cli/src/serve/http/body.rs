//! Request bodies (bounded in size and time) and the answers the HTTP layer writes
//! itself: JSON-RPC errors, plain text, and the response body that counts a request in
//! flight until it ends.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};
use rmcp::model::ErrorCode;
use serde_json::{Value, json};

use super::{BODY_TIMEOUT, HttpBody};

/// JSON-RPC error codes of the HTTP layer, which rmcp has no constants for. JSON-RPC 2.0
/// (section 5.1, "Error object") reserves -32000 to -32099 for implementation-defined
/// server errors; these three are this server's own picks from that range, and its HTTP
/// status says the same thing to a client that does not read the body.
pub(super) const BUSY: ErrorCode = ErrorCode(-32000);
pub(super) const UNAUTHORIZED: ErrorCode = ErrorCode(-32001);
pub(super) const FORBIDDEN: ErrorCode = ErrorCode(-32003);

pub(super) fn rpc_error(
    status: StatusCode,
    id: Value,
    code: ErrorCode,
    message: &str,
) -> Response<HttpBody> {
    json_response(
        status,
        &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code.0, "message": message}}),
    )
}

pub(super) fn json_response(status: StatusCode, body: &Value) -> Response<HttpBody> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

pub(super) fn plain(status: StatusCode, text: &str) -> Response<HttpBody> {
    let mut r = Response::new(Full::new(Bytes::from(format!("{text}\n"))).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// The request body, at most `max` bytes (413 beyond, without reading on when
/// `Content-Length` already says so).
pub(super) async fn read_body(
    body: Incoming,
    headers: &HeaderMap,
    max: usize,
) -> Result<Bytes, Response<HttpBody>> {
    let too_large = || {
        let mut r = rpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            Value::Null,
            ErrorCode::INVALID_REQUEST,
            &format!(
                "Invalid Request: the request body is longer than the server's limit of {max} bytes (toolbind serve --max-request-bytes)"
            ),
        );
        r.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        r
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(too_large());
    }
    match tokio::time::timeout(BODY_TIMEOUT, Limited::new(body, max).collect()).await {
        Err(_) => Err(plain(
            StatusCode::REQUEST_TIMEOUT,
            "the request body did not arrive in time",
        )),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Ok(Err(e)) => Err(plain(
            StatusCode::BAD_REQUEST,
            &format!("cannot read the request body: {e}"),
        )),
    }
}

/// A response body that holds a guard (its request's `InFlight`) until it is sent or dropped.
pub(super) struct Tracked<G> {
    pub(super) body: HttpBody,
    pub(super) _guard: G,
}

impl<G: Unpin> Body for Tracked<G> {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
