//! Rust source as the import reader reads it: comments blanked (`code`), string and character
//! literals blanked as well (`bare`), every byte kept in its place; and `bare`'s tokens.

/// `text` with its comments blanked, and the same with its string and char literals blanked too.
/// Newlines stay, and so does every other byte's offset: an offset in one is the same in the others.
pub fn blank(text: &str) -> (String, String) {
    let b = text.as_bytes();
    let (mut code, mut bare) = (b.to_vec(), b.to_vec());
    let wipe = |v: &mut Vec<u8>, from: usize, to: usize| {
        for x in &mut v[from..to.min(b.len())] {
            if *x != b'\n' {
                *x = b' ';
            }
        }
    };
    let ident = |i: usize| i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80);
    let mut i = 0;
    while i < b.len() {
        let at = |k: usize| b.get(k).copied().unwrap_or(0);
        let after_ident = i > 0 && ident(i - 1);
        if b[i] == b'/' && at(i + 1) == b'/' {
            let end = b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |n| i + n);
            wipe(&mut code, i, end);
            wipe(&mut bare, i, end);
            i = end;
        } else if b[i] == b'/' && at(i + 1) == b'*' {
            let (mut depth, mut j) = (1, i + 2);
            while j < b.len() && depth > 0 {
                if b[j] == b'/' && at(j + 1) == b'*' {
                    depth += 1;
                    j += 2;
                } else if b[j] == b'*' && at(j + 1) == b'/' {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            wipe(&mut code, i, j);
            wipe(&mut bare, i, j);
            i = j;
        } else if !after_ident && (b[i] == b'r' || (b[i] == b'b' && at(i + 1) == b'r')) && raw_start(b, i).is_some() {
            // r"…", r#"…"#, br#"…"#: to the quote followed by as many #.
            let (hashes, open) = raw_start(b, i).unwrap();
            let mut j = open + 1;
            while j < b.len()
                && !(b[j] == b'"' && b[j + 1..].iter().take(hashes).filter(|&&c| c == b'#').count() == hashes)
            {
                j += 1;
            }
            let end = (j + 1 + hashes).min(b.len());
            wipe(&mut bare, i, end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            wipe(&mut bare, i, j + 1);
            i = j + 1;
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '\u{1F600}', 'é'), else a lifetime or a label.
            let end = if at(i + 1) == b'\\' {
                b.get(i + 3..)
                    .and_then(|r| r.iter().position(|&c| c == b'\''))
                    .map(|n| i + 3 + n + 1)
            } else {
                let len = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (at(i + 1 + len) == b'\'').then_some(i + 2 + len)
            };
            match end {
                Some(e) => {
                    wipe(&mut bare, i, e);
                    i = e;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    // Only ASCII bytes were replaced, each by a space, and only whole characters: still UTF-8.
    (String::from_utf8(code).unwrap(), String::from_utf8(bare).unwrap())
}

/// Where a raw string starting at `i` (`r` or `br`) has its opening quote, and its count of `#`.
fn raw_start(b: &[u8], i: usize) -> Option<(usize, usize)> {
    let mut j = i + if b[i] == b'b' { 2 } else { 1 };
    let start = j;
    while j < b.len() && b[j] == b'#' {
        j += 1;
    }
    (j < b.len() && b[j] == b'"').then_some((j - start, j))
}

/// A token of `bare`: an identifier (a raw one without its `r#`), a number, `::`, or one other
/// character; `at` is its offset.
#[derive(Clone, Copy, Debug)]
pub struct Tok<'a> {
    pub s: &'a str,
    pub at: usize,
}

/// The tokens of `bare` (whitespace between them dropped).
pub fn tokens(bare: &str) -> Vec<Tok<'_>> {
    let b = bare.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if word(c) {
            let mut j = i;
            while j < b.len() && word(b[j]) {
                j += 1;
            }
            if &bare[i..j] == "r" && j + 1 < b.len() && b[j] == b'#' && word(b[j + 1]) {
                // r#type: the identifier `type`.
                let k = j + 1;
                let mut e = k;
                while e < b.len() && word(b[e]) {
                    e += 1;
                }
                out.push(Tok { s: &bare[k..e], at: k });
                i = e;
            } else {
                out.push(Tok { s: &bare[i..j], at: i });
                i = j;
            }
        } else if c == b':' && b.get(i + 1) == Some(&b':') {
            out.push(Tok { s: "::", at: i });
            i += 2;
        } else {
            let len = bare[i..].chars().next().map_or(1, char::len_utf8);
            out.push(Tok {
                s: &bare[i..i + len],
                at: i,
            });
            i += len;
        }
    }
    out
}
