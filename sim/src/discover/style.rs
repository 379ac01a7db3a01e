//! The ways the simulator describes itself (`--discover-style`): a leaf,
//! so the core can hold its style without depending on the documents.

/// How the core describes itself (`--discover-style`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum DiscoverStyle {
    /// The modelled document.
    #[default]
    Model,
    /// `required` lists, optional params, no `force`.
    Terse,
    /// `$ref`s into `components`, type lists, by-name params.
    Refs,
    /// `refs`, with a required `session` param for `terminal.send`.
    RequiredExtra,
    /// `refs`, with `created_ms` typed integer or string.
    WiderField,
    /// `refs`, with a `$ref` cycle around the record.
    RefCycle,
}
