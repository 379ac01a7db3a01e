//! Each terminal as an MCP resource, `herdr-core://terminal/{address}`: its
//! record, its status and what the operator approved of it, as JSON. Never
//! its screen: nothing a program prints rides along (the screen is
//! `read_output`'s, which says it is untrusted). A subscriber is told when
//! a terminal's status changes (see `watcher`).

use rmcp::ErrorData;
use rmcp::model::{
    CacheScope, ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate,
};
use serde::Serialize;

mod uri;
pub(crate) mod watcher;

pub(crate) use uri::{URI_TEMPLATE, address, uri};

use super::seal::SealKey;
use super::session::Session;
use super::tracking::changes::named_since;
use super::tracking::ticker::wall_ms;
use crate::app::App;
use crate::escape::printable;
use crate::hc::{CoreError, wire::ErrorKind};

const MIME: &str = "application/json";
/// Resources listed at most: one hc listing, like `list_sessions`' pages
/// together.
const MAX_LISTED: usize = 1000;

/// A resource's contents: the terminal as `list_sessions` shows it, the
/// core that answered, and a `since` of this terminal as read here (pass
/// it to `wait_for_status` to be told of its next change).
#[derive(Serialize)]
struct Contents {
    core_id: String,
    #[serde(flatten)]
    session: Session,
    since: Option<String>,
}

fn unknown(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!(
            "{} is not a terminal resource: they are {URI_TEMPLATE} (resources/list names them)",
            printable(uri)
        ),
        None,
    )
}

fn core_failed(e: &CoreError) -> ErrorData {
    ErrorData::internal_error(format!("hc could not be asked: {e}"), None)
}

/// `resources/list`: every live terminal, oldest first.
pub(crate) async fn list(app: &App, cache_hints: bool) -> Result<ListResourcesResult, ErrorData> {
    let listed = app.list(false).await.map_err(|e| core_failed(&e))?;
    let mut terminals = listed.value.terminals;
    terminals.sort_by(|a, b| (a.created_ms, &a.address).cmp(&(b.created_ms, &b.address)));
    let resources = terminals
        .iter()
        .take(MAX_LISTED)
        .map(|t| {
            Resource::new(uri(&t.address), t.address.clone())
                .with_title(format!(
                    "terminal {} ({})",
                    printable(&t.address),
                    printable(t.program.as_deref().unwrap_or("no program name"))
                ))
                .with_description(
                    "The terminal's record, status and approval as JSON (never its screen: read_output)",
                )
                .with_mime_type(MIME)
        })
        .collect();
    let mut result = ListResourcesResult::with_all_items(resources);
    if cache_hints {
        result.ttl_ms = Some(0);
        result.cache_scope = Some(CacheScope::Private);
    }
    Ok(result)
}

/// `resources/templates/list`: the one template.
pub(crate) fn templates(cache_hints: bool) -> ListResourceTemplatesResult {
    let template = ResourceTemplate::new(URI_TEMPLATE, "terminal")
        .with_title("A terminal of the hc core")
        .with_description(
            "One terminal by its address (percent-encoded): record, status, status_seq, approval and a since as JSON; subscribe to be told when its status changes, and pass the since to wait_for_status to hear of its next change",
        )
        .with_mime_type(MIME);
    let mut result = ListResourceTemplatesResult::with_all_items(vec![template]);
    if cache_hints {
        result.ttl_ms = Some(0);
        result.cache_scope = Some(CacheScope::Private);
    }
    result
}

/// `resources/read` of one terminal, through `app`, its `since` sealed
/// with `seal`.
pub(crate) async fn read(
    app: &App,
    seal: &SealKey,
    uri: &str,
    cache_hints: bool,
) -> Result<ReadResourceResult, ErrorData> {
    let address = address(uri).ok_or_else(|| unknown(uri))?;
    app.check_shown(&address)
        .map_err(|hidden| ErrorData::resource_not_found(hidden.to_string(), None))?;
    let answer = app.client().get(&address).await.map_err(|e| {
        if e.hc_kind() == Some(ErrorKind::NotFound) {
            ErrorData::resource_not_found(
                format!("hc has no terminal at {}", printable(&address)),
                None,
            )
        } else {
            core_failed(&e)
        }
    })?;
    let made_ms = wall_ms();
    let core_id = answer.core.core_id.to_string();
    let since = named_since(
        &[address.as_str()],
        std::slice::from_ref(&answer.value),
        &core_id,
        made_ms,
        seal,
    )
    .seal(seal);
    let loaded = app.loaded();
    let approvals = loaded.for_sends().ok();
    let contents = Contents {
        core_id,
        since,
        session: Session::judged(
            answer.value,
            approvals.map(AsRef::as_ref),
            &answer.core.core_id,
            loaded.config().send_mode(),
        ),
    };
    let text = serde_json::to_string(&contents).expect("a terminal encodes");
    let mut result =
        ReadResourceResult::new(vec![ResourceContents::text(text, uri).with_mime_type(MIME)]);
    if cache_hints {
        result.ttl_ms = Some(0);
        result.cache_scope = Some(CacheScope::Private);
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uri_names_one_address_and_only_its_own_spelling_opens() {
        for a in ["t1", "machine/t7", "a b", "ü%?#", "x.y-z_~"] {
            if crate::hc::wire::check_address(a).is_err() {
                continue;
            }
            assert_eq!(address(&uri(a)).as_deref(), Some(a), "{a}");
        }
        assert_eq!(uri("machine/t7"), "herdr-core://terminal/machine%2Ft7");
        for bad in [
            "herdr-core://terminal/",
            "herdr-core://terminal/machine/t7",
            "herdr-core://terminal/machine%2ft7",
            "herdr-core://terminal/%zz",
            "herdr-core://terminal/%E2",
            "herdr-core://terminal/t%1",
            "herdr-core://other/t1",
            "t1",
        ] {
            assert_eq!(address(bad), None, "{bad}");
        }
    }
}
