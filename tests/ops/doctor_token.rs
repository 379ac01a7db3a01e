//! doctor checks the HTTP tokens of this shell against the running serve
//! of the same config: a token the serve would refuse fails, however
//! generated it looks, and the fix is never to make a new one.

use crate::support::mcp::{READ_TEST_TOKEN, TEST_TOKEN};
use crate::support::{Sim, SimOptions, run_adapter};

/// The doctor line of `check`.
fn line<'a>(stdout: &'a str, check: &str) -> Vec<&'a str> {
    stdout
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some(check))
        .collect()
}

#[tokio::test]
async fn doctor_asks_the_running_serve_whether_it_takes_this_shell_s_tokens() {
    let sim = Sim::start(SimOptions::default());
    let (served, config) = crate::support::http::serve_process_with_config(&sim).await;
    let config = config.to_str().unwrap();
    let pid = served.child.id().unwrap();

    let (_, stdout, _) = run_adapter(
        &["doctor", "--config", config],
        &[
            ("HERDR_MCP_TOKEN", TEST_TOKEN),
            ("HERDR_MCP_READ_TOKEN", READ_TEST_TOKEN),
        ],
    );
    let token = line(&stdout, "token");
    assert!(
        token
            .iter()
            .any(|l| l.starts_with("ok")
                && l.contains(&format!("(pid {pid}) accepts HERDR_MCP_TOKEN"))),
        "{stdout}"
    );
    let read = line(&stdout, "read");
    assert!(
        read.iter()
            .any(|l| l.contains("accepts HERDR_MCP_READ_TOKEN")),
        "{stdout}"
    );

    // A freshly generated token that is not the serve's.
    let other = "Xk3pQ9wN7vB2mT5rZ8cF1hJ6sL0dG4yA";
    let (code, stdout, _) = run_adapter(
        &["doctor", "--config", config],
        &[("HERDR_MCP_TOKEN", other)],
    );
    assert_ne!(code, 0, "{stdout}");
    let token = line(&stdout, "token");
    let refused = token
        .iter()
        .find(|l| l.starts_with("FAIL"))
        .unwrap_or_else(|| panic!("no FAIL token line:\n{stdout}"));
    assert!(
        refused.contains("refuses this HERDR_MCP_TOKEN")
            && refused.contains("do not make a new one"),
        "{refused}"
    );
    assert!(
        !stdout.contains(other),
        "the token is never printed: {stdout}"
    );
    assert!(!stdout.contains("openssl rand"), "{stdout}");
}
