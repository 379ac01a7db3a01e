//! Finding a repeated key in a JSON document without building it. serde
//! (and so figment and rmcp) reads a repeated key as its last value, while
//! a person or a host's approval screen may have read the first: the
//! transport refuses such a message, the config loader such a file. Keys
//! are compared after unescaping, as serde_json compares them. Neutral
//! ground: it imports nothing of the adapter.

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::rc::Rc;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::error::Category;

/// The first repeated key of a document: where, and (when positions were
/// counted) the byte offsets just past each of its two occurrences.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Repeat {
    /// The members from the top down to the object that repeats it, e.g.
    /// `["params", "arguments"]`; array elements by index.
    pub path: Vec<String>,
    pub key: String,
    /// Offsets past the first and the second occurrence (0 when not counted).
    pub offsets: (usize, usize),
}

/// Why a document could not be checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Walked {
    /// It is not one JSON value.
    NotJson,
    Repeated(Repeat),
}

/// Whether `bytes` is one JSON value with no object repeating a key.
pub(crate) fn check(bytes: &[u8]) -> Result<(), Walked> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    walk(&mut deserializer, None)
}

/// As [`check`], also counting where each key ends, so the lines of both
/// occurrences can be named (slower: for files, not for every request).
pub(crate) fn check_counted(text: &str) -> Result<(), Walked> {
    let consumed = Rc::new(Cell::new(0));
    let reader = Counting {
        inner: text.as_bytes(),
        consumed: Rc::clone(&consumed),
    };
    let mut deserializer = serde_json::Deserializer::from_reader(reader);
    walk(&mut deserializer, Some(&consumed))
}

/// The 1-based line of byte `offset` in `text`.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    1 + text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

fn walk<'de, R: serde_json::de::Read<'de>>(
    deserializer: &mut serde_json::Deserializer<R>,
    consumed: Option<&Rc<Cell<usize>>>,
) -> Result<(), Walked> {
    let mut found = None;
    let position = || consumed.map_or(0, |c| c.get());
    let walked = (Walk {
        path: &mut Vec::new(),
        keys: &mut Vec::new(),
        found: &mut found,
        position: &position,
    })
    .deserialize(&mut *deserializer)
    .and_then(|()| deserializer.end());
    match (walked, found) {
        (Ok(()), _) => Ok(()),
        (Err(e), Some(repeat)) if e.classify() == Category::Data => Err(Walked::Repeated(repeat)),
        (Err(_), _) => Err(Walked::NotJson),
    }
}

/// A reader that counts the bytes taken from it.
struct Counting<'a> {
    inner: &'a [u8],
    consumed: Rc<Cell<usize>>,
}

impl Read for Counting<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.set(self.consumed.get() + n);
        Ok(n)
    }
}

/// One value at `path`; a repeat found below is stored in `found`.
/// Nothing is allocated per key: keys and path segments borrow from the
/// input (unless escaped), and the keys of every open object share one
/// stack, `keys`, each object scanning only its own stretch of it.
struct Walk<'p, 'de> {
    path: &'p mut Vec<Segment<'de>>,
    keys: &'p mut Vec<(Cow<'de, str>, usize)>,
    found: &'p mut Option<Repeat>,
    position: &'p dyn Fn() -> usize,
}

/// One step of the path to a value: a member's key or an element's index.
enum Segment<'de> {
    Key(Cow<'de, str>),
    Index(usize),
}

impl<'de> Walk<'_, 'de> {
    fn below(&mut self) -> Walk<'_, 'de> {
        Walk {
            path: self.path,
            keys: self.keys,
            found: self.found,
            position: self.position,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Walk<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0usize;
        loop {
            self.path.push(Segment::Index(index));
            let next = seq.next_element_seed(self.below());
            self.path.pop();
            if next?.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let start = self.keys.len();
        let mut seen = Seen { start, many: None };
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let at = (self.position)();
            if let Some(first) = seen.insert(self.keys, key.clone(), at) {
                *self.found = Some(Repeat {
                    path: self.path.iter().map(Segment::to_string).collect(),
                    key: key.to_string(),
                    offsets: (first, at),
                });
                return Err(de::Error::custom(format_args!("repeated key {key:?}")));
            }
            self.path.push(Segment::Key(key));
            let value = map.next_value_seed(self.below());
            self.path.pop();
            value?;
        }
        // Nested objects have truncated back to this one's keys; now this
        // one's go too.
        self.keys.truncate(start);
        Ok(())
    }
}

impl fmt::Display for Segment<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Segment::Key(key) => f.write_str(key),
            Segment::Index(index) => write!(f, "{index}"),
        }
    }
}

/// The keys of one object so far, with where each ended: its stretch of
/// the shared stack from `start`, scanned in place (most objects are
/// small), moved to a hash map past [`Seen::FEW`] keys so a huge object
/// stays linear.
struct Seen<'de> {
    start: usize,
    many: Option<HashMap<Cow<'de, str>, usize>>,
}

impl<'de> Seen<'de> {
    const FEW: usize = 16;

    /// Records `key`, seen at `at`; where it was seen before, if it was.
    fn insert(
        &mut self,
        keys: &mut Vec<(Cow<'de, str>, usize)>,
        key: Cow<'de, str>,
        at: usize,
    ) -> Option<usize> {
        if let Some(many) = &mut self.many {
            return match many.entry(key) {
                std::collections::hash_map::Entry::Occupied(first) => Some(*first.get()),
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(at);
                    None
                }
            };
        }
        let mine = &keys[self.start..];
        if let Some((_, first)) = mine.iter().find(|(k, _)| *k == key) {
            return Some(*first);
        }
        keys.push((key, at));
        if keys.len() - self.start > Self::FEW {
            self.many = Some(keys.drain(self.start..).collect());
        }
        None
    }
}

/// An object key, borrowed from the input when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_key_is_found_with_the_lines_of_both() {
        let text = "{\n  \"sendMode\": \"idle-only\",\n  \"http\": {\"port\": 1},\n  \"send\\u004dode\": \"normal\"\n}\n";
        let Err(Walked::Repeated(repeat)) = check_counted(text) else {
            panic!("a repeat");
        };
        assert_eq!(repeat.key, "sendMode");
        assert!(repeat.path.is_empty());
        assert_eq!(line_of(text, repeat.offsets.0), 2);
        assert_eq!(line_of(text, repeat.offsets.1), 4);
    }

    #[test]
    fn nested_repeats_name_their_path_and_unique_keys_pass() {
        let text = r#"{"a": [{"b": 1}, {"c": {"d": 1, "d": 2}}]}"#;
        let Err(Walked::Repeated(repeat)) = check(text.as_bytes()) else {
            panic!("a repeat");
        };
        assert_eq!(repeat.path, ["a", "1", "c"]);
        assert_eq!(repeat.key, "d");
        assert_eq!(check(br#"{"a": 1, "b": {"a": 2}}"#), Ok(()));
        assert_eq!(check(b"{\"a\": "), Err(Walked::NotJson));
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\": {i}")).collect();
        let text = format!("{{{}, \"k7\": 0}}", many.join(", "));
        let Err(Walked::Repeated(repeat)) = check_counted(&text) else {
            panic!("a repeat past the short list");
        };
        assert_eq!(repeat.key, "k7");
    }
}
