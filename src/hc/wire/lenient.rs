//! Reading an optional field leniently: its value when it has the model's
//! type, else none (a record's `title` of another type is absent, never a
//! failure).

use serde::Deserialize;
use serde_json::Value;

/// An optional field: its value when it has the model's type, else none.
pub(super) fn lenient<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let value = Value::deserialize(d)?;
    Ok(serde_json::from_value(value).ok())
}
