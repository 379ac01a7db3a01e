//! One lockstep connection to hc: a [`Framed`] stream that has passed the
//! handshake with its exact pins (generation, framing; the core_id is
//! checked by its type) and a version the [`Admission`] accepts, its
//! `rpc.discover` document checked when the acceptance is bound to one. A `Connection` never outlives a fault: every
//! error returned here means the caller must drop it. Timeouts and pooling
//! are the client's and the pool's business.

use std::path::Path;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::acceptance::{self, Acceptance, Admission, Standing};
use super::error::CoreError;
use super::framing::Framed;
use super::wire::{self, ClientInfo, Hello, HelloParams, Method};

/// Name and version sent in `hc.hello`.
const CLIENT_NAME: &str = env!("CARGO_PKG_NAME");
const CLIENT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The handshake's params: the pins, and who is calling.
pub fn hello_params() -> HelloParams<'static> {
    HelloParams {
        generation: wire::PINNED_GENERATION,
        framing: wire::PINNED_FRAMING,
        client: ClientInfo {
            name: CLIENT_NAME,
            version: CLIENT_VERSION,
        },
    }
}

/// One connection to hc whose handshake passed the pins, and what that
/// handshake said.
pub struct Connection {
    framed: Framed,
    hello: Arc<Hello>,
    /// The acceptance this connection was admitted under: a parked
    /// connection is reused only while that one is still in force.
    admitted: Arc<Acceptance>,
}

impl Connection {
    /// Connects and performs the handshake; fails unless hc is exactly the
    /// pinned generation and framing, and a version `admission` accepts.
    pub async fn open(path: Arc<Path>, admission: &Admission) -> Result<Connection, CoreError> {
        let mut framed = Framed::connect(path).await?;
        let hello: Hello = match framed.call(Method::Hello, &hello_params()).await {
            Ok(hello) => hello,
            Err(CoreError::Rpc { message, data, .. }) => {
                let detail = match data {
                    Some(data) => format!("{message} {data}"),
                    None => message,
                };
                return Err(CoreError::HandshakeRefused {
                    path: framed.path().to_path_buf(),
                    detail,
                });
            }
            Err(e) => return Err(e),
        };
        check_pins(framed.path(), &hello, &admission.current().operator_flag)?;
        let admitted = admit(&mut framed, &hello, admission).await?;
        Ok(Connection {
            framed,
            hello: Arc::new(hello),
            admitted,
        })
    }

    /// The acceptance this connection was admitted under.
    pub fn admitted(&self) -> &Arc<Acceptance> {
        &self.admitted
    }

    /// Who answered the handshake on this connection.
    pub fn hello(&self) -> &Arc<Hello> {
        &self.hello
    }

    /// True while nothing unexpected is waiting on the socket, asked of the
    /// kernel (see [`Framed::is_healthy`]).
    pub fn is_healthy(&self) -> bool {
        self.framed.is_healthy()
    }

    /// The same without a system call unless the runtime has seen
    /// something arrive (see [`Framed::looks_healthy`]).
    pub fn looks_healthy(&self) -> bool {
        self.framed.looks_healthy()
    }

    /// True after a write that failed before any byte of the request left:
    /// hc cannot have received it.
    pub fn sent_nothing(&self) -> bool {
        self.framed.sent_nothing()
    }

    /// Writes one request line. Once this starts, the request may have
    /// reached hc, whatever happens next.
    pub async fn write_request<P: Serialize>(
        &mut self,
        method: Method,
        params: &P,
    ) -> Result<u64, CoreError> {
        self.framed.write_request(method, params).await
    }

    /// Reads and validates the reply to request `id`, decoding its result.
    pub async fn read_reply<R: DeserializeOwned>(
        &mut self,
        method: Method,
        id: u64,
    ) -> Result<R, CoreError> {
        self.framed.read_reply(method, id).await
    }

    /// One request and its reply, without a deadline (the client adds it).
    pub async fn call<P: Serialize, R: DeserializeOwned>(
        &mut self,
        method: Method,
        params: &P,
    ) -> Result<R, CoreError> {
        self.framed.call(method, params).await
    }
}

fn check_pins(path: &Path, hello: &Hello, flag: &str) -> Result<(), CoreError> {
    let pin = |what, expected: &str, actual: String| CoreError::HandshakePin {
        flag: flag.to_owned(),
        path: path.to_path_buf(),
        what,
        expected: expected.to_owned(),
        actual,
    };
    if hello.generation != wire::PINNED_GENERATION {
        return Err(pin("generation", "1", hello.generation.to_string()));
    }
    if hello.framing != wire::PINNED_FRAMING {
        return Err(pin(
            "framing",
            wire::PINNED_FRAMING,
            crate::escape::bounded(&hello.framing, 64).into_owned(),
        ));
    }
    Ok(())
}

/// The version: built in, or accepted, and then, when the acceptance is
/// bound to the core's document, that document asked for (once per core)
/// and hashed.
async fn admit(
    framed: &mut Framed,
    hello: &Hello,
    admission: &Admission,
) -> Result<Arc<Acceptance>, CoreError> {
    let accepted = admission.current();
    let path = framed.path().to_path_buf();
    let refuse = |why: String| CoreError::Unaccepted {
        path: path.clone(),
        version: crate::escape::bounded(&hello.version, 64).into_owned(),
        why,
        flag: accepted.operator_flag.clone(),
    };
    let expected = match accepted.standing(&hello.version) {
        Standing::Accepted => return Ok(accepted),
        Standing::Unaccepted => return Err(refuse(String::new())),
        Standing::Unguarded => {
            return Err(refuse(
                " as listed: it was accepted without its `if` guard being seen (no document declaring it, no live guard check), and an idle-only send rests on that guard. Check it again with --guard-check ADDRESS (a terminal of that core; the check types nothing)".to_owned(),
            ));
        }
        Standing::IfDocumentIs(sha) => sha,
    };
    if admission.is_verified(&hello.core_id, expected) {
        return Ok(Arc::clone(&accepted));
    }
    let document: Value = match framed.call(Method::Discover, &serde_json::json!({})).await {
        Ok(document) => document,
        Err(CoreError::Rpc { code, .. }) => {
            return Err(refuse(format!(
                " as it runs now: it was accepted with its rpc.discover document, and now answers rpc.discover with error {code}"
            )));
        }
        Err(e) => return Err(e),
    };
    let found = acceptance::document_sha256(&document);
    if found != expected {
        return Err(refuse(format!(
            " as it runs now: it was accepted with an rpc.discover document of SHA-256 {}…, and now serves one of {}…, so the core was upgraded or changed since it was checked",
            &expected[..expected.len().min(12)],
            &found[..12]
        )));
    }
    admission.mark_verified(&hello.core_id, expected);
    Ok(Arc::clone(&accepted))
}
