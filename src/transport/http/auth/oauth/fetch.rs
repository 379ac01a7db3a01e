//! Every request the resource server makes to the identity provider:
//! metadata, keys, introspection. Each is bounded in time and size, follows
//! no redirect (a redirect could lead key fetches anywhere), and is made
//! only to the URLs the config or the issuer's own metadata name.

use std::time::Duration;

use http::header::{ACCEPT, CONTENT_LENGTH};
use serde_json::Value;
use url::Url;

/// The whole exchange, connect to last byte. An IdP slower than this is
/// treated as down: cached keys keep working, and it is asked again later.
pub(crate) const FETCH_TIMEOUT: Duration = Duration::from_secs(3);
/// Largest document read: metadata and key sets are a few KiB.
pub(super) const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

/// Why a document could not be fetched from the identity provider.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FetchError {
    /// No answer: the connection failed or timed out (the text says which,
    /// and the innermost cause, e.g. `connection refused`).
    #[error("{0}")]
    Request(String),
    /// An answer other than 2xx.
    #[error("answered HTTP {0}")]
    Status(u16),
    /// A document over [`MAX_DOCUMENT_BYTES`].
    #[error("answered more than {MAX_DOCUMENT_BYTES} bytes")]
    TooBig,
    /// A body that is not one JSON object.
    #[error("answered something that is not a JSON object")]
    NotJson,
}

/// What a failed request met, in words an operator can act on: a refused
/// or failed connection and a timeout are named as such, with the
/// innermost cause (reqwest's own text is only "error sending request").
/// Never the URL's credentials or a header.
fn described(error: reqwest::Error) -> FetchError {
    let error = error.without_url();
    let mut innermost = None;
    let mut cause = std::error::Error::source(&error);
    while let Some(c) = cause {
        innermost = Some(c.to_string());
        cause = c.source();
    }
    let text = if error.is_timeout() {
        format!("no answer within {} s", FETCH_TIMEOUT.as_secs())
    } else if error.is_connect() {
        format!(
            "cannot connect ({})",
            innermost
                .as_deref()
                .unwrap_or("the connection failed")
                .to_lowercase()
        )
    } else {
        match innermost {
            Some(cause) => format!("{error} ({cause})"),
            None => error.to_string(),
        }
    };
    FetchError::Request(text)
}

/// What the resource server fetches with.
#[derive(Clone)]
pub(crate) struct Fetcher {
    client: reqwest::Client,
}

impl Default for Fetcher {
    fn default() -> Fetcher {
        Fetcher::new()
    }
}

impl Fetcher {
    /// A client that follows no redirect and gives up after
    /// [`FETCH_TIMEOUT`].
    pub(crate) fn new() -> Fetcher {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(FETCH_TIMEOUT)
            .connect_timeout(FETCH_TIMEOUT)
            .user_agent(concat!(
                env!("CARGO_PKG_NAME"),
                "/",
                env!("CARGO_PKG_VERSION")
            ))
            .build()
            .expect("an HTTP client with static settings builds");
        Fetcher { client }
    }

    /// GETs a JSON object.
    pub(crate) async fn get(&self, url: &Url) -> Result<Value, FetchError> {
        let request = self
            .client
            .get(url.clone())
            .header(ACCEPT, "application/json");
        read_json(request).await
    }

    /// POSTs a form with HTTP Basic client credentials (RFC 7662 section 2.1).
    pub(crate) async fn post_form(
        &self,
        url: &Url,
        client: (&str, &str),
        form: &[(&str, &str)],
    ) -> Result<Value, FetchError> {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        // RFC 6749 section 2.3.1: the credentials are form-encoded first.
        let encode =
            |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        let request = self
            .client
            .post(url.clone())
            .basic_auth(encode(client.0), Some(encode(client.1)))
            .header(ACCEPT, "application/json")
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(body);
        read_json(request).await
    }
}

async fn read_json(request: reqwest::RequestBuilder) -> Result<Value, FetchError> {
    // The error's text names the URL and the cause, never a header.
    let mut response = request.send().await.map_err(described)?;
    if !response.status().is_success() {
        return Err(FetchError::Status(response.status().as_u16()));
    }
    let declared = response
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > MAX_DOCUMENT_BYTES) {
        return Err(FetchError::TooBig);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(described)? {
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(FetchError::TooBig);
        }
        body.extend_from_slice(&chunk);
    }
    match serde_json::from_slice::<Value>(&body) {
        Ok(value @ Value::Object(_)) => Ok(value),
        _ => Err(FetchError::NotJson),
    }
}
