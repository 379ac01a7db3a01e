//! `completion/complete`: the live approved addresses for the `dispatch`
//! prompt's `address`, prefix-filtered and bounded; nothing for any other
//! argument.

use rmcp::ErrorData;
use rmcp::model::{CompleteResult, CompletionInfo};

use crate::app::App;

/// The prompt whose `address` is completed.
const DISPATCH: &str = "dispatch";

/// Most addresses one completion offers.
const MAX_COMPLETIONS: usize = 32;

/// The live approved addresses that start with `prefix`, for `dispatch`'s
/// `address`; nothing for any other argument.
pub(crate) async fn complete(
    app: &App,
    prompt: &str,
    argument: &str,
    prefix: &str,
) -> Result<CompleteResult, ErrorData> {
    let values = if prompt == DISPATCH && argument == "address" {
        approved_addresses(app, prefix).await
    } else {
        Vec::new()
    };
    let info = CompletionInfo::with_all_values(values)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(CompleteResult::new(info))
}

/// The addresses of live terminals approved now, starting with `prefix`,
/// at most [`MAX_COMPLETIONS`]. hc unreachable or the config invalid: none.
async fn approved_addresses(app: &App, prefix: &str) -> Vec<String> {
    let Ok(Some(terminals)) = app.approved_live().await else {
        return Vec::new();
    };
    terminals
        .into_iter()
        .filter(|t| t.address.starts_with(prefix))
        .map(|t| t.address)
        .take(MAX_COMPLETIONS)
        .collect()
}
