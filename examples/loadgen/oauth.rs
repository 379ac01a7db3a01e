//! `loadgen bench`'s OAuth rows: `read_output` over HTTP at 32 clients
//! through an adapter in oauth mode beside one in token mode, in
//! interleaved cells on the same simulator and terminal. Both adapters are
//! started for these rows, from the same binary and config but for
//! `http.auth`. The access tokens are real: the project's test
//! authorization server (oidc-provider, `tests/oauth/provider`, installed by
//! `scripts/oauth-deps.sh`) issues one per client by client credentials
//! (RS256 JWTs whose `aud` is the adapter's resource), and each client keeps
//! its token for every cell, as a steady client would: the adapter verifies
//! a token once, then finds it in its cache until its `exp` (1 h here).

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::http::HttpClient;
use crate::procfs;
use crate::stats::{count, ms, ratio, us};
use crate::throughput::{self, Pids, Run};
use crate::world::{self, Bins, HttpAdapter, Sim};
use crate::{Res, progress};

/// Concurrent HTTP clients in every cell: the target's concurrency.
pub const CLIENTS: usize = 32;
/// The target: OAuth calls/s at least this share of token mode's.
const TARGET_SHARE: f64 = 0.95;
/// The confidential client the test authorization server registers.
const CLIENT: (&str, &str) = ("herdr-tests", "herdr-tests-secret-0123456789abcdef");
const SCOPE: &str = "herdr.read herdr.send";
/// The untimed load each adapter serves before the first cell.
const WARM_UP: Duration = Duration::from_secs(1);
/// How long the authorization server and the adapter get to be ready.
const PATIENCE: Duration = Duration::from_secs(30);

#[derive(Debug, Clone)]
pub struct Options {
    /// Token/OAuth cell pairs; 0 skips the OAuth rows.
    pub pairs: usize,
    pub cell: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Token,
    OAuth,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Token => "token",
            Mode::OAuth => "OAuth",
        }
    }
}

pub struct Cell {
    pub mode: Mode,
    pub run: Run,
    /// CPU time the authorization server used during the cell.
    pub idp_cpu: Duration,
    /// Cores busy with other work on the machine (not the adapter, the
    /// simulator, the load generator or the IdP), on average over the cell.
    pub others: f64,
    /// Cores the hypervisor stole, on average over the cell.
    pub steal: f64,
}

pub struct Comparison {
    pub cell: Duration,
    pub cells: Vec<Cell>,
    /// Distinct access tokens the OAuth clients held.
    pub tokens: usize,
}

/// The test authorization server; killed on drop (`kill_on_drop`).
struct Idp {
    _child: tokio::process::Child,
    /// Kept open: the server never writes again, but never to a closed pipe.
    _stdout: BufReader<tokio::process::ChildStdout>,
    issuer: String,
    pid: u32,
}

/// Where the repository's test authorization server lives.
fn provider_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oauth/provider")
}

impl Idp {
    /// Starts `provider.mjs` for `resource` on a socket bound here (handed
    /// over as descriptor 3) and waits for its ready line.
    async fn start(resource: &str, log: &Path) -> Res<Idp> {
        let dir = provider_dir();
        if !dir.join("node_modules/oidc-provider").is_dir() {
            return Err(format!(
                "the OAuth rows need the test authorization server, which is not installed in {}: \
                 run scripts/oauth-deps.sh (scripts/bench.sh does), or pass --oauth-pairs 0",
                dir.display()
            ));
        }
        let (listener, _) = world::bind_port()?;
        let stderr = std::fs::File::create(log).map_err(|e| format!("IdP log: {e}"))?;
        let mut command = tokio::process::Command::from(hc_sim::testing::command_with_listener(
            Path::new("node"),
            &listener,
        ));
        command
            .arg(dir.join("provider.mjs"))
            .arg("--resource")
            .arg(resource)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start the test authorization server (node): {e}"))?;
        drop(listener);
        let pid = child.id().unwrap_or(0);
        let mut stdout = BufReader::new(child.stdout.take().ok_or("the IdP's stdout")?);
        let mut line = String::new();
        let read = tokio::time::timeout(PATIENCE, stdout.read_line(&mut line));
        let said = |why: &str| {
            let log = std::fs::read_to_string(log).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(5).collect();
            format!(
                "the test authorization server {why} (node on PATH? its stderr: {:?})",
                tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
            )
        };
        match read.await {
            Err(_) => return Err(said("printed no ready line in 30 s")),
            Ok(Err(e)) => return Err(said(&format!("could not be read: {e}"))),
            Ok(Ok(0)) => return Err(said("exited before its ready line")),
            Ok(Ok(_)) => {}
        }
        let ready: Value = serde_json::from_str(&line)
            .map_err(|e| format!("the IdP's ready line {line:?}: {e}"))?;
        let issuer = ready["issuer"]
            .as_str()
            .ok_or_else(|| format!("no issuer in the IdP's ready line {line:?}"))?
            .to_owned();
        Ok(Idp {
            _child: child,
            _stdout: stdout,
            issuer,
            pid,
        })
    }

    /// A real access token for `resource` by client credentials.
    async fn token(&self, http: &reqwest::Client, resource: &str) -> Res<String> {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", "client_credentials")
            .append_pair("scope", SCOPE)
            .append_pair("resource", resource)
            .finish();
        let response = http
            .post(format!("{}/token", self.issuer))
            .basic_auth(CLIENT.0, Some(CLIENT.1))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .timeout(Duration::from_secs(20))
            .send()
            .await
            .map_err(|e| format!("the IdP's token endpoint: {e}"))?;
        let status = response.status();
        let answer: Value = response
            .json()
            .await
            .map_err(|e| format!("the IdP's token answer: {e}"))?;
        if !status.is_success() {
            return Err(format!("the IdP refused a token ({status}): {answer}"));
        }
        answer["access_token"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("no access_token in {answer}"))
    }
}

/// Starts the authorization server and the two adapters in front of `sim`,
/// then runs `o.pairs` pairs of cells reading `address`, the pairs
/// alternating which mode goes first (token then OAuth, OAuth then token,
/// ...), so that a drift in the machine's load weighs on both alike.
pub async fn compare(
    bins: &Bins,
    dir: &Path,
    sim: &Sim,
    address: &str,
    token: &str,
    o: &Options,
) -> Res<Comparison> {
    let (token_listener, token_port) = world::bind_port()?;
    let (oauth_listener, oauth_port) = world::bind_port()?;
    let resource = format!("http://127.0.0.1:{oauth_port}/mcp");
    progress("OAuth rows: starting the test authorization server (oidc-provider)");
    let idp = Idp::start(&resource, &dir.join("idp.err")).await?;
    let http = reqwest::Client::new();
    let mut tokens = Vec::with_capacity(CLIENTS);
    for _ in 0..CLIENTS {
        tokens.push(idp.token(&http, &resource).await?);
    }
    drop(http);
    let mut distinct = tokens.clone();
    distinct.sort_unstable();
    distinct.dedup();

    let token_config = world::write_config(
        dir,
        "oauth-token-mode.json",
        &world::http_config(sim, token_port, json!({})),
    )?;
    let oauth_config = world::write_config(
        dir,
        "oauth-mode.json",
        &world::http_config(
            sim,
            oauth_port,
            json!({"http": {"port": oauth_port, "auth": {
                "mode": "oauth", "issuer": idp.issuer, "resource": resource,
            }}}),
        ),
    )?;
    progress("OAuth rows: starting an adapter in token mode and one in oauth mode");
    let token_adapter = HttpAdapter::start(
        bins,
        &token_config,
        token_listener,
        token,
        &dir.join("oauth-token-mode.err"),
    )?;
    // HERDR_MCP_TOKEN is set as for any adapter; oauth mode does not read it.
    let oauth_adapter = HttpAdapter::start(
        bins,
        &oauth_config,
        oauth_listener,
        token,
        &dir.join("oauth-mode.err"),
    )?;
    let arguments = format!(r#"{{"address":"{address}","max_chars":32768}}"#);
    ready(token_port, token, &arguments, "token mode").await?;
    ready(oauth_port, &tokens[0], &arguments, "oauth mode").await?;
    // A fresh adapter's first load grows its heap and wakes its workers:
    // each pays for that in an untimed second of the same load.
    progress("OAuth rows: warming both adapters (1 s of the same load each, untimed)");
    let token_keys = vec![token.to_owned()];
    for (port, adapter, keys) in [
        (token_port, &token_adapter, &token_keys),
        (oauth_port, &oauth_adapter, &tokens),
    ] {
        let pids = Pids {
            adapter: Some(adapter.pid()),
            sim: sim.pid(),
            loadgen: std::process::id(),
        };
        let run = throughput::http(port, keys, address, CLIENTS, WARM_UP, pids).await?;
        if let Some(e) = run.first_error {
            return Err(format!("warming the adapters: {e}"));
        }
    }
    // The IdP has served the tokens and the adapter's discovery: let it
    // finish the work that follows, so that none falls into a timed cell.
    progress("OAuth rows: letting the authorization server go idle (20-60 s)");
    settle(idp.pid).await;

    let mut cells = Vec::new();
    for pair in 0..o.pairs {
        let order = if pair % 2 == 0 {
            [Mode::Token, Mode::OAuth]
        } else {
            [Mode::OAuth, Mode::Token]
        };
        for mode in order {
            progress(&format!(
                "OAuth rows: pair {} of {}, {} mode, {CLIENTS} clients, {} s",
                pair + 1,
                o.pairs,
                mode.name(),
                o.cell.as_secs_f64()
            ));
            let (port, adapter, keys) = match mode {
                Mode::Token => (token_port, &token_adapter, &token_keys),
                Mode::OAuth => (oauth_port, &oauth_adapter, &tokens),
            };
            let pids = Pids {
                adapter: Some(adapter.pid()),
                sim: sim.pid(),
                loadgen: std::process::id(),
            };
            let ours = [adapter.pid(), sim.pid(), std::process::id(), idp.pid];
            let (ours_before, machine_before) = (procfs::cpus(&ours), procfs::machine()?);
            let started = Instant::now();
            let run = throughput::http(port, keys, address, CLIENTS, o.cell, pids).await?;
            let wall = started.elapsed().as_secs_f64().max(1e-9);
            let (ours_after, machine_after) = (procfs::cpus(&ours), procfs::machine()?);
            let used = |i: usize| ours_after[i].saturating_sub(ours_before[i]);
            let ours_used: Duration = (0..ours.len()).map(used).sum();
            let busy = machine_after.0.saturating_sub(machine_before.0);
            let steal = machine_after.1.saturating_sub(machine_before.1);
            cells.push(Cell {
                mode,
                run,
                idp_cpu: used(3),
                others: busy.saturating_sub(ours_used).as_secs_f64() / wall,
                steal: steal.as_secs_f64() / wall,
            });
        }
    }
    drop(oauth_adapter);
    drop(token_adapter);
    drop(idp);
    Ok(Comparison {
        cell: o.cell,
        cells,
        tokens: distinct.len(),
    })
}

/// Waits until `pid` has used no CPU for 5 s, and at least 20 s in all
/// (at most 60 s): node was seen doing 0.1-0.2 s of work of its own about
/// 12 s after a burst of requests (its garbage collector, presumably).
async fn settle(pid: u32) {
    let start = Instant::now();
    let (mut last, mut since) = (procfs::cpu(pid).unwrap_or_default(), start);
    while start.elapsed() < Duration::from_secs(60)
        && (start.elapsed() < Duration::from_secs(20) || since.elapsed() < Duration::from_secs(5))
    {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let now = procfs::cpu(pid).unwrap_or_default();
        if now != last {
            (last, since) = (now, Instant::now());
        }
    }
}

/// Calls until the adapter answers 200: an adapter in oauth mode answers
/// 401 until it knows the issuer's keys.
async fn ready(port: u16, token: &str, arguments: &str, what: &str) -> Res<()> {
    let deadline = Instant::now() + PATIENCE;
    let mut client = HttpClient::new(port, token);
    loop {
        let last = match client.call_tool("read_output", arguments).await {
            Ok((200, _)) if !client.text().contains(r#""isError":true"#) => return Ok(()),
            Ok((status, _)) => format!(
                "HTTP {status}: {}",
                client.text().chars().take(300).collect::<String>()
            ),
            Err(e) => e,
        };
        if Instant::now() > deadline {
            return Err(format!(
                "the adapter in {what} never served read_output: {last}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One mode's cells taken together.
struct Totals {
    calls: u64,
    elapsed: Duration,
    errors: u64,
    rate_limited: u64,
    /// Adapter, simulator, load generator.
    cpu: [Duration; 3],
    idp_cpu: Duration,
    /// Cores busy with other work and stolen, averaged over the cells.
    others: f64,
    steal: f64,
}

impl Totals {
    fn of(c: &Comparison, mode: Mode) -> Totals {
        let mut t = Totals {
            calls: 0,
            elapsed: Duration::ZERO,
            errors: 0,
            rate_limited: 0,
            cpu: [Duration::ZERO; 3],
            idp_cpu: Duration::ZERO,
            others: 0.0,
            steal: 0.0,
        };
        let mut cells = 0.0;
        for cell in c.cells.iter().filter(|cell| cell.mode == mode) {
            let run = &cell.run;
            t.calls += run.calls;
            t.elapsed += run.elapsed;
            t.errors += run.errors;
            t.rate_limited += run.rate_limited;
            for (total, per_call) in t.cpu.iter_mut().zip(run.cpu_per_call) {
                *total += per_call * u32::try_from(run.calls).unwrap_or(u32::MAX);
            }
            t.idp_cpu += cell.idp_cpu;
            t.others += cell.others;
            t.steal += cell.steal;
            cells += 1.0;
        }
        if cells > 0.0 {
            t.others /= cells;
            t.steal /= cells;
        }
        t
    }

    fn per_second(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    fn per_call(&self, i: usize) -> Duration {
        self.cpu[i] / u32::try_from(self.calls.max(1)).unwrap_or(u32::MAX)
    }
}

/// The OAuth table, in the bench report's Markdown.
pub fn table(out: &mut String, c: &Comparison) {
    let _ = writeln!(
        out,
        "\n### OAuth vs token mode: `read_output` over HTTP at {CLIENTS} clients\n"
    );
    let _ = writeln!(
        out,
        "{} pair(s) of {} s cells, the pairs alternating which mode goes first; one simulator, the full screen; \
         two adapters started for these rows, alike but for `http.auth`, each warmed by 1 s of the same load before the first cell. OAuth: real access tokens from the test \
         authorization server (oidc-provider; client credentials, RS256 JWTs with `aud` the adapter's resource), \
         one per client ({} distinct), each kept for every cell as a steady client would; each client's first call, \
         before the clock, pays the verification. Token mode: one `HERDR_MCP_TOKEN` shared by all clients. \
         CPU per call is user+system time of each process over the cell divided by the calls; \
         IdP CPU is the authorization server's over the whole cell, warm-up included \
         (it is left to go idle, 20 s at least, before the first cell); other work is the CPU the rest of the machine \
         used during the cell (`/proc/stat` busy time less these four processes'), stolen the hypervisor's steal, \
         both in cores on average: the noise the ratio stands in.\n",
        c.cells.len() / 2,
        c.cell.as_secs_f64(),
        c.tokens
    );
    let _ = writeln!(
        out,
        "| cell | mode | calls/s | HTTP 429s | errors | adapter CPU/call | sim CPU/call | loadgen CPU/call | IdP CPU | other work | stolen |"
    );
    let _ = writeln!(
        out,
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for (i, cell) in c.cells.iter().enumerate() {
        let run = &cell.run;
        let idp = match cell.mode {
            Mode::OAuth => ms(cell.idp_cpu),
            Mode::Token => "-".into(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {idp} | {:.2} cores | {:.2} cores |",
            i + 1,
            cell.mode.name(),
            count(run.per_second()),
            count(run.rate_limited as f64),
            run.errors,
            us(run.cpu_per_call[0]),
            us(run.cpu_per_call[1]),
            us(run.cpu_per_call[2]),
            cell.others,
            cell.steal,
        );
        if let Some(e) = &run.first_error {
            let _ = writeln!(out, "|  | first error: {e} | | | | | | | | | |");
        }
    }
    for mode in [Mode::Token, Mode::OAuth] {
        let t = Totals::of(c, mode);
        let idp = match mode {
            Mode::OAuth => ms(t.idp_cpu),
            Mode::Token => "-".into(),
        };
        let _ = writeln!(
            out,
            "| all | {} | {} | {} | {} | {} | {} | {} | {idp} | {:.2} cores | {:.2} cores |",
            mode.name(),
            count(t.per_second()),
            count(t.rate_limited as f64),
            t.errors,
            us(t.per_call(0)),
            us(t.per_call(1)),
            us(t.per_call(2)),
            t.others,
            t.steal,
        );
    }
    let (token, oauth) = (Totals::of(c, Mode::Token), Totals::of(c, Mode::OAuth));
    let mut pairs: Vec<f64> = c
        .cells
        .chunks(2)
        .filter_map(|pair| {
            let rate = |mode| {
                pair.iter()
                    .find(|cell| cell.mode == mode)
                    .map(|cell| cell.run.per_second())
            };
            Some(100.0 * rate(Mode::OAuth)? / rate(Mode::Token)?.max(1e-9))
        })
        .collect();
    let listed: Vec<String> = pairs.iter().map(|r| format!("{r:.1}%")).collect();
    pairs.sort_unstable_by(f64::total_cmp);
    let n = pairs.len();
    let median = (n > 0).then(|| (pairs[(n - 1) / 2] + pairs[n / 2]) / 2.0);
    let _ = writeln!(
        out,
        "\nOAuth / token: {:.1}% of the calls/s (all cells of each mode); pair by pair {} (median {}); \
         adapter CPU per call {} (OAuth) vs {} (token); adapter CPU per call relative to the \
         simulator's (whose work is the same in both modes) {:.2} (OAuth) vs {:.2} (token).",
        100.0 * oauth.per_second() / token.per_second().max(1e-9),
        listed.join(", "),
        median.map_or("-".into(), |m| format!("{m:.1}%")),
        us(oauth.per_call(0)),
        us(token.per_call(0)),
        ratio(oauth.per_call(0), oauth.per_call(1)),
        ratio(token.per_call(0), token.per_call(1)),
    );
}

/// The target row: name, measured, pass.
pub fn target(c: &Comparison) -> (String, String, bool) {
    let (token, oauth) = (Totals::of(c, Mode::Token), Totals::of(c, Mode::OAuth));
    let share = oauth.per_second() / token.per_second().max(1e-9);
    (
        format!(
            "OAuth throughput at {CLIENTS} clients within 5% of token mode (≥ 95%, interleaved cells)"
        ),
        format!(
            "{:.1}% ({} vs {} calls/s); adapter CPU/call {} OAuth vs {} token",
            100.0 * share,
            count(oauth.per_second()),
            count(token.per_second()),
            us(oauth.per_call(0)),
            us(token.per_call(0)),
        ),
        share >= TARGET_SHARE && oauth.errors == 0 && token.errors == 0 && oauth.calls > 0,
    )
}
