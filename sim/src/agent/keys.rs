//! The agent's keyboard: turns raw input bytes into submitted prompts.
//! Bracketed-paste content is literal (it may hold CR and LF); outside a
//! paste, CR or LF submits what was collected, backspace erases a character
//! and Ctrl-C clears the line. The paste markers may arrive split across
//! reads.

use std::collections::VecDeque;

use crate::wire::{PASTE_END, PASTE_START};

const ESC: u8 = 0x1b;
const CTRL_C: u8 = 0x03;
const BACKSPACE: u8 = 0x08;
const DELETE: u8 = 0x7f;

#[derive(Debug, Default)]
pub(crate) struct PromptReader {
    line: Vec<u8>,
    /// A possible paste marker in progress, from its ESC.
    pending: Vec<u8>,
    in_paste: bool,
}

impl PromptReader {
    /// Feeds input; returns the prompts it completed (blank ones dropped).
    pub(crate) fn feed(&mut self, input: &[u8]) -> Vec<String> {
        let mut prompts = Vec::new();
        let mut queue: VecDeque<u8> = input.iter().copied().collect();
        while let Some(byte) = queue.pop_front() {
            if self.pending.is_empty() && byte != ESC {
                self.key(byte, &mut prompts);
                continue;
            }
            self.pending.push(byte);
            if self.pending == PASTE_START {
                self.in_paste = true;
                self.pending.clear();
            } else if self.pending == PASTE_END {
                self.in_paste = false;
                self.pending.clear();
            } else if !PASTE_START.starts_with(&self.pending)
                && !PASTE_END.starts_with(&self.pending)
            {
                // Not a marker: its first byte is an ordinary key, and the
                // rest is looked at again (it may start a marker itself).
                let mut rest = std::mem::take(&mut self.pending);
                let first = rest.remove(0);
                self.key(first, &mut prompts);
                for byte in rest.into_iter().rev() {
                    queue.push_front(byte);
                }
            }
        }
        prompts
    }

    fn key(&mut self, byte: u8, prompts: &mut Vec<String>) {
        if self.in_paste {
            self.line.push(byte);
            return;
        }
        match byte {
            b'\r' | b'\n' => {
                let line = std::mem::take(&mut self.line);
                let prompt = String::from_utf8_lossy(&line).into_owned();
                if !prompt.trim().is_empty() {
                    prompts.push(prompt);
                }
            }
            BACKSPACE | DELETE => {
                // Erase one UTF-8 character: continuation bytes, then its lead.
                while self.line.last().is_some_and(|&b| b & 0xc0 == 0x80) {
                    self.line.pop();
                }
                self.line.pop();
            }
            CTRL_C => self.line.clear(),
            _ => self.line.push(byte),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed_all(chunks: &[&[u8]]) -> Vec<String> {
        let mut reader = PromptReader::default();
        chunks.iter().flat_map(|chunk| reader.feed(chunk)).collect()
    }

    #[test]
    fn a_paste_keeps_its_newlines_and_cr_submits_it() {
        let prompts = feed_all(&[b"\x1b[200~line one\nline two\r\x1b[201~\r"]);
        assert_eq!(prompts, vec!["line one\nline two\r".to_string()]);
    }

    #[test]
    fn markers_split_across_reads_are_still_markers() {
        let stream: &[u8] = b"\x1b[200~a\nb\x1b[201~\r";
        for cut in 0..=stream.len() {
            let prompts = feed_all(&[&stream[..cut], &stream[cut..]]);
            assert_eq!(prompts, vec!["a\nb".to_string()], "cut at {cut}");
        }
    }

    #[test]
    fn typed_keys_submit_on_cr_or_lf_and_honour_backspace() {
        assert_eq!(feed_all(&[b"hi\rho\n"]), vec!["hi", "ho"]);
        assert_eq!(feed_all(&[b"y\xc3\xa9\x7f\x7fes\r"]), vec!["es"]);
        assert!(feed_all(&[b"\r\n  \r"]).is_empty());
    }

    #[test]
    fn an_escape_that_is_not_a_marker_is_an_ordinary_key() {
        assert_eq!(
            feed_all(&[b"a\x1b[A\x1b\x1b[200~b\x1b[201~\r"]),
            vec!["a\x1b[A\x1bb"]
        );
    }
}
