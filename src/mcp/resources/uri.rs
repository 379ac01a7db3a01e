//! A terminal resource's URI: `herdr-core://terminal/{address}`, the
//! address percent-encoded, and back. A leaf both the resources and
//! their watcher read.

/// Every terminal resource's URI starts so; the address follows,
/// percent-encoded.
pub(crate) const URI_PREFIX: &str = "herdr-core://terminal/";
/// The resources' template (RFC 6570: `{address}` is percent-encoded).
pub(crate) const URI_TEMPLATE: &str = "herdr-core://terminal/{address}";
/// The URI of the terminal at `address`: every byte outside RFC 3986's
/// unreserved characters percent-encoded (so `machine/t7` is
/// `machine%2Ft7`).
pub(crate) fn uri(address: &str) -> String {
    let mut uri = String::with_capacity(URI_PREFIX.len() + address.len());
    uri.push_str(URI_PREFIX);
    for byte in address.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

/// The address a terminal URI names; `None` unless `uri` is exactly what
/// [`uri`] makes of some address.
pub(crate) fn address(uri: &str) -> Option<String> {
    let encoded = uri.strip_prefix(URI_PREFIX)?;
    let mut bytes = Vec::with_capacity(encoded.len());
    let mut rest = encoded.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        if first == b'%' {
            let hex = std::str::from_utf8(tail.get(..2)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &tail[2..];
        } else {
            bytes.push(first);
            rest = tail;
        }
    }
    let address = String::from_utf8(bytes).ok()?;
    (crate::hc::wire::check_address(&address).is_ok() && self::uri(&address) == uri)
        .then_some(address)
}
