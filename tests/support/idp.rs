//! A real authorization server for the OAuth tests: `oidc-provider` (npm,
//! pinned in tests/oauth/provider; installed by scripts/oauth-deps.sh),
//! started on a loopback socket bound here and handed over as descriptor 3.
//! Tests get real access tokens from it (client credentials, for the
//! adapter's resource or another one), and forge hostile ones with its own
//! signing keys, which it writes to a file.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

/// The confidential client the provider registers for tests.
pub const TEST_CLIENT: (&str, &str) = ("herdr-tests", "herdr-tests-secret-0123456789abcdef");
/// The variables that hold the resource server's introspection client
/// credentials in the tests, and their values (the test client's).
pub const INTROSPECT_ENV: [(&str, &str); 2] = [
    ("HERDR_TEST_INTROSPECT_ID", TEST_CLIENT.0),
    ("HERDR_TEST_INTROSPECT_SECRET", TEST_CLIENT.1),
];
/// Another resource the same provider issues tokens for.
pub const OTHER_RESOURCE: &str = "http://127.0.0.1:1/other";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// What the provider is started with.
#[derive(Default, Clone)]
pub struct IdpOptions {
    /// The adapter's resource (JWT access tokens).
    pub resource: String,
    /// A resource whose tokens are opaque (for introspection).
    pub opaque_resource: Option<String>,
    /// Grants never include herdr.send.
    pub deny_send: bool,
    /// Every answer waits this long.
    pub delay_ms: u64,
    /// Signing keys to reuse (a restarted provider keeps its keys).
    pub keys_in: Option<PathBuf>,
}

pub struct Idp {
    child: tokio::process::Child,
    pub issuer: String,
    pub port: u16,
    /// Its signing keys (private PEMs included), as it wrote them.
    pub keys_file: PathBuf,
    pub keys: Value,
}

impl Idp {
    /// Starts the provider on `listener` (bound, and listening or not: it
    /// listens on it), and waits until it says it serves.
    pub async fn start(listener: &std::net::TcpListener, dir: &Path, options: &IdpOptions) -> Idp {
        let provider = root().join("tests/oauth/provider/provider.mjs");
        assert!(
            root()
                .join("tests/oauth/provider/node_modules/oidc-provider")
                .is_dir(),
            "the test authorization server is not installed: run scripts/oauth-deps.sh (scripts/test.sh does)"
        );
        let keys_file = options.keys_in.clone().unwrap_or_else(|| {
            dir.join(format!(
                "idp-keys-{}.json",
                listener.local_addr().unwrap().port()
            ))
        });
        let mut command = tokio::process::Command::from(hc_sim::testing::command_with_listener(
            Path::new("node"),
            listener,
        ));
        command
            .arg(&provider)
            .arg("--resource")
            .arg(&options.resource)
            .arg("--other-resource")
            .arg(OTHER_RESOURCE);
        if let Some(opaque) = &options.opaque_resource {
            command.arg("--opaque-resource").arg(opaque);
        }
        if options.deny_send {
            command.arg("--deny-scopes").arg("herdr.send");
        }
        if options.delay_ms > 0 {
            command.arg("--delay-ms").arg(options.delay_ms.to_string());
        }
        match &options.keys_in {
            Some(keys) => command.arg("--keys-in").arg(keys),
            None => command.arg("--keys-out").arg(&keys_file),
        };
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .expect("start the test authorization server (node)");
        let stdout = child.stdout.take().expect("its stdout");
        let mut line = String::new();
        tokio::time::timeout(super::PATIENCE, BufReader::new(stdout).read_line(&mut line))
            .await
            .expect("the authorization server starts in time")
            .expect("its first line");
        let ready: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the authorization server's first line {line:?}: {e}"));
        let keys: Value =
            serde_json::from_slice(&std::fs::read(&keys_file).expect("its keys file")).unwrap();
        Idp {
            child,
            issuer: ready["issuer"].as_str().unwrap().to_owned(),
            port: ready["port"].as_u64().unwrap() as u16,
            keys_file,
            keys,
        }
    }

    /// Stops it for good (the socket closes with it).
    pub async fn kill(mut self) {
        let _ = self.child.kill().await;
    }

    /// A real access token for `resource` with `scope`, by client credentials.
    pub async fn token(&self, resource: &str, scope: &str) -> String {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", "client_credentials")
            .append_pair("scope", scope)
            .append_pair("resource", resource)
            .finish();
        let response = reqwest::Client::new()
            .post(format!("{}/token", self.issuer))
            .basic_auth(TEST_CLIENT.0, Some(TEST_CLIENT.1))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .timeout(Duration::from_secs(20))
            .send()
            .await
            .expect("the token endpoint answers");
        let status = response.status();
        let answer: Value = response.json().await.expect("a JSON token answer");
        assert!(status.is_success(), "token request refused: {answer}");
        answer["access_token"]
            .as_str()
            .expect("an access token")
            .to_owned()
    }

    /// The provider's key of `alg` (RS256 or ES256): its kid and PEMs.
    pub fn key(&self, alg: &str) -> &Value {
        self.keys["keys"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["alg"] == alg)
            .unwrap_or_else(|| panic!("a {alg} key in {}", self.keys))
    }

    /// A token signed with the provider's own RS256 key: `claims` over
    /// sensible defaults for `resource` (the test then spoils one part).
    pub fn forge(&self, resource: &str, header: Value, claims: Value) -> String {
        let key = self.key("RS256");
        let mut full_header = json!({"alg": "RS256", "typ": "at+jwt", "kid": key["kid"]});
        crate::support::merge(&mut full_header, header);
        let now = now_s();
        let mut full_claims = json!({
            "iss": self.issuer, "aud": resource, "sub": "forged-user",
            "client_id": "forger", "scope": "herdr.read herdr.send",
            "iat": now, "exp": now + 600,
        });
        crate::support::merge(&mut full_claims, claims);
        let header: jsonwebtoken::Header = serde_json::from_value(full_header).unwrap();
        let signing = jsonwebtoken::EncodingKey::from_rsa_pem(
            key["private_pem"].as_str().unwrap().as_bytes(),
        )
        .unwrap();
        jsonwebtoken::encode(&header, &full_claims, &signing).unwrap()
    }

    /// `http.auth` in oauth mode for `resource`, trusting this provider,
    /// opaque tokens introspected at its endpoint with [`INTROSPECT_ENV`].
    pub fn introspecting_auth(&self, resource: &str) -> Value {
        json!({
            "mode": "oauth", "issuer": self.issuer, "resource": resource,
            "introspection": {
                "endpoint": format!("{}/token/introspection", self.issuer),
                "clientIdEnv": INTROSPECT_ENV[0].0,
                "clientSecretEnv": INTROSPECT_ENV[1].0,
            },
        })
    }

    /// Asks it to delay every later answer by `ms`.
    pub async fn set_delay(&self, ms: u64) {
        let response = reqwest::Client::new()
            .post(format!("{}/__control", self.issuer))
            .json(&json!({"delayMs": ms}))
            .send()
            .await
            .expect("the control endpoint answers");
        assert!(response.status().is_success());
    }
}

/// base64url without padding, as JOSE encodes.
pub fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

pub fn now_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}
